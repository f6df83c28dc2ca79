#!/usr/bin/env python3
"""Print docs/MODELS.md's operator coverage table: what share of LiteRT's builtin operators and of
ONNX's standard operator set (ai.onnx, as the installed onnx package defines it) FrameGraph imports.

  .venv-tools/bin/python tools/models/coverage.py [--framegraph .build/release/framegraph]

FrameGraph's side comes from `framegraph model check --supported` (the importers' own tables; a test
checks the TFLite one against the importer), LiteRT's from the same builtin-name table (schema.fbs's
BuiltinOperator), ONNX's from onnx.defs.
"""
import argparse
import subprocess

import onnx
from onnx import defs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--framegraph", default=".build/release/framegraph")
    args = ap.parse_args()
    out = subprocess.run([args.framegraph, "model", "check", "--supported"], check=True, capture_output=True, text=True).stdout
    lines = dict(line.split(": ", 1) for line in out.strip().splitlines())
    tflite_key = next(k for k in lines if k.startswith("tflite builtins"))
    supported_tflite = lines[tflite_key].split()
    total_tflite = int(tflite_key.split(" of ")[1].rstrip(")"))
    custom = lines["tflite custom"].split()
    onnx_ours = lines["onnx"].split()
    standard = sorted({s.name for s in defs.get_all_schemas() if s.domain in ("", "ai.onnx") and not s.deprecated})
    ours_std = [o for o in onnx_ours if ":" not in o and o in standard]
    ms = [o for o in onnx_ours if o.startswith("com.microsoft:")]
    print("| operator list | FrameGraph imports | share |")
    print("|---|---|---|")
    print(f"| LiteRT builtin operators (schema.fbs, {total_tflite} codes) | {len(supported_tflite)} | "
          f"{100 * len(supported_tflite) / total_tflite:.0f} % |")
    print(f"| ONNX standard operators (ai.onnx, onnx {onnx.__version__}: {len(standard)}) | {len(ours_std)} | "
          f"{100 * len(ours_std) / len(standard):.0f} % |")
    print()
    print("LiteRT builtins: " + ", ".join(supported_tflite) + "; custom: " + ", ".join(custom) + ".")
    print()
    print("ONNX: " + ", ".join(ours_std) + "; onnxruntime's " + ", ".join(m.split(":")[1] for m in ms) + " (com.microsoft).")


if __name__ == "__main__":
    main()
