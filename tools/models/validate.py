#!/usr/bin/env python3
"""Validate FrameGraph's model outputs against LiteRT (XNNPACK delegate, 1 thread) for .tflite
models, and against onnxruntime (1 thread) for .onnx models (compared in FrameGraph's NHWC layout).

FrameGraph's CLI writes raw little-endian float32 outputs:
    framegraph model run MODEL --input-rgb X.rgb --output-dir D
This script runs LiteRT on the same input and prints max |diff| per output.

Input: --input-rgb FILE is a raw HxWx3 uint8 RGB image of the model's size
(as in Tests/Golden/*.input.rgb), normalised as MediaPipe does for that model
(or with --scale/--offset); --input-f32 FILE is the raw float32 tensor itself.

Candidate outputs: --output-dir D looks, for each model output NAME, for
D/PREFIXNAME.f32 (or a single D/*.NAME.f32); --output NAME=FILE names them one by one.

  validate.py selfie_segmentation --input-rgb Tests/Golden/selfie_segmentation-0.input.rgb --output-dir out/run1
  validate.py selfie_segmentation --input-rgb X.rgb --output activation_10=out/run1/activation_10.f32 --tol 1e-4
  validate.py MODEL --input-rgb X.rgb --self-test     # LiteRT against itself (writes, then reads back files)

Exit status: 0, or 1 when --tol is given and an output differs by more; 2 on usage/file errors.
Importable: compare(model, x, candidate) and load_candidates(...).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile

import numpy as np

import mpmodels as mp


def reference(model: str, x: np.ndarray, xnnpack: bool = True) -> dict[str, np.ndarray]:
    """Reference outputs in FrameGraph's layout: LiteRT for .tflite; onnxruntime for .onnx, with the
    NHWC input transposed to ONNX's NCHW and 4-D outputs transposed back to NHWC."""
    if model.endswith(".onnx"):
        def nchw(a):
            return a.transpose(0, 3, 1, 2) if a.ndim == 4 else a
        out = mp.onnxruntime_run(model, np.ascontiguousarray(nchw(x)))
        return {k: (v.transpose(0, 2, 3, 1) if v.ndim == 4 else v) for k, v in out.items()}
    return mp.litert_run(mp.model_path(model), x, xnnpack=xnnpack, threads=1)


def onnx_input_shape(model: str) -> list[int]:
    """The ONNX model's first input as FrameGraph sees it (NHWC)."""
    import onnxruntime as ort
    shape = [d if isinstance(d, int) else 1 for d in ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].shape]
    return [shape[0], shape[2], shape[3], shape[1]] if len(shape) == 4 else shape


def compare(model: str, x: np.ndarray, candidate: dict[str, np.ndarray],
            ref: dict[str, np.ndarray] | None = None) -> dict[str, dict]:
    """Per reference output: max/mean |candidate - LiteRT|, max |LiteRT|, and shape check.

    `candidate` maps output names to arrays (any shape with the same element count)."""
    ref = ref if ref is not None else reference(model, x)
    res = {}
    for name, r in ref.items():
        if name not in candidate:
            res[name] = {"error": "missing"}
            continue
        c = np.asarray(candidate[name], np.float32)
        if c.size != r.size:
            res[name] = {"error": f"size {c.size} != reference {r.size} {list(r.shape)}"}
            continue
        d = np.abs(c.reshape(r.shape).astype(np.float64) - r.astype(np.float64))
        res[name] = {"shape": list(r.shape), "max_abs_diff": float(d.max()), "mean_abs_diff": float(d.mean()),
                     "ref_max_abs": float(np.abs(r).max()), "argmax": [int(i) for i in np.unravel_index(d.argmax(), r.shape)],
                     "non_finite": int(np.count_nonzero(~np.isfinite(c)))}
    return res


def load_input(model: str, input_rgb: str | None, input_f32: str | None,
               scale: float | None = None, offset: float | None = None) -> np.ndarray:
    if model.endswith(".onnx"):
        shape = onnx_input_shape(model)  # [1,H,W,C]
    else:
        it = mp.litert_interpreter(mp.model_path(model))
        shape = [int(s) for s in it.get_input_details()[0]["shape"]]  # [1,H,W,3]
    if input_f32:
        x = np.fromfile(input_f32, "<f4")
        if x.size != np.prod(shape):
            raise ValueError(f"{input_f32}: {x.size} floats, model wants {shape}")
        return x.reshape(shape)
    u8 = np.fromfile(input_rgb, np.uint8)
    if u8.size != np.prod(shape):
        raise ValueError(f"{input_rgb}: {u8.size} bytes, model wants {shape[1]}x{shape[2]}x3 uint8")
    spec = None if model.endswith(".onnx") else mp.spec_for(mp.model_path(model))
    if scale is None or offset is None:
        if spec is None:
            raise ValueError("unknown model: give --scale and --offset")
        scale = spec.scale if scale is None else scale
        offset = spec.offset if offset is None else offset
    return (u8.reshape(shape).astype(np.float32) * np.float32(scale) + np.float32(offset)).astype(np.float32)


def load_candidates(names, output_dir: str | None = None, pairs: list[str] | None = None,
                    prefix: str = "") -> dict[str, np.ndarray]:
    """Arrays by output name; a name whose file is ambiguous is left out and reported on stderr."""
    files = {}
    for p in pairs or []:
        k, _, v = p.partition("=")
        files[k] = v
    if output_dir:
        for n in names:
            if n in files:
                continue
            direct = os.path.join(output_dir, prefix + n + ".f32")
            hits = [direct] if os.path.exists(direct) else sorted(glob.glob(os.path.join(output_dir, f"*.{n}.f32")))
            if len(hits) == 1:
                files[n] = hits[0]
            elif len(hits) > 1:
                print(f"validate: {len(hits)} files match *.{n}.f32 in {output_dir}; use --prefix or --output",
                      file=sys.stderr)
    return {k: np.fromfile(v, "<f4") for k, v in files.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="model name (selfie_segmentation, ...), .tflite file name, or path")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--input-rgb", help="raw HxWx3 uint8 RGB at the model's input size")
    src.add_argument("--input-f32", help="raw little-endian float32 input tensor [1,H,W,3]")
    ap.add_argument("--scale", type=float, help="override normalisation: float = u8*scale + offset")
    ap.add_argument("--offset", type=float)
    ap.add_argument("--output-dir", help="directory with NAME.f32 (or *.NAME.f32) per model output")
    ap.add_argument("--prefix", default="", help="file name prefix in --output-dir, e.g. 'selfie_segmentation-0.'")
    ap.add_argument("--output", action="append", metavar="NAME=FILE", help="one candidate output file")
    ap.add_argument("--self-test", action="store_true", help="compare LiteRT with itself via files in a temp dir")
    ap.add_argument("--tol", type=float, help="exit 1 when any max |diff| exceeds this")
    ap.add_argument("--json", help="write the comparison as JSON here")
    a = ap.parse_args(argv)

    try:
        x = load_input(a.model, a.input_rgb, a.input_f32, a.scale, a.offset)
        ref = reference(a.model, x)
        if a.self_test:
            tmp = tempfile.mkdtemp(prefix="validate-self-")
            for n, arr in mp.litert_run(mp.model_path(a.model), x).items():  # a second, independent interpreter
                arr.astype("<f4").tofile(os.path.join(tmp, n + ".f32"))
            a.output_dir = tmp
        if not a.output_dir and not a.output:
            ap.error("give --output-dir, --output NAME=FILE, or --self-test")
        cand = load_candidates(ref.keys(), a.output_dir, a.output, a.prefix)
    except (OSError, ValueError) as e:
        print(f"validate: {e}", file=sys.stderr)
        return 2

    res = compare(a.model, x, cand, ref)
    bad = False
    if a.model.endswith(".onnx"):
        import onnxruntime as ort
        print(f"model {a.model}  reference onnxruntime {ort.__version__}, 1 thread (compared in NHWC)")
    else:
        print(f"model {mp.model_path(a.model)}  reference LiteRT {mp.versions().get('ai-edge-litert', '?')} + XNNPACK, 1 thread")
    print(f"{'output':16s} {'shape':18s} {'max|diff|':>11s} {'mean|diff|':>11s} {'max|ref|':>10s}")
    for n, r in res.items():
        if "error" in r:
            print(f"{n:16s} ERROR: {r['error']}")
            bad = True
            continue
        flag = ""
        if a.tol is not None and (r["max_abs_diff"] > a.tol or r["non_finite"]):
            flag, bad = "  > tol", True
        print(f"{n:16s} {str(r['shape']):18s} {r['max_abs_diff']:11.3g} {r['mean_abs_diff']:11.3g} "
              f"{r['ref_max_abs']:10.4g}{flag}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "outputs": res}, f, indent=2)
    return 1 if bad and (a.tol is not None or any("error" in r for r in res.values())) else 0


if __name__ == "__main__":
    sys.exit(main())
