#!/usr/bin/env python3
"""Benchmark: one prediction of EfficientNet-Lite0 on one thread, interleaved round by round
(A B C A B C ...): (a) LiteRT (ai-edge-litert, XNNPACK delegate, num_threads=1) on the shared
.tflite, (b) onnxruntime (intra 1, inter 1, sequential) on the ONNX the setup builds from the PyPI
wheel (models/cache/efficientnet_lite0.onnx), (c) FrameGraph (`framegraph model bench MODEL --runs N
--threads 1`) on both files. Every measurement runs in its own process pinned with taskset to one
CPU (default 0). Prints each round, the median of the round medians and the ratios. Asserts nothing.

  .venv-tools/bin/python tools/bench/labeling_vs_peers.py [--rounds 5] [--runs 100] [--cpu 0] [--threads 1] [--int8]

--int8 adds FrameGraph with `--precision int8` on the .tflite (its dense convolutions in 8-bit
integers; the peers stay float32, as the model files are).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(ROOT, ".venv-tools", "bin", "python")
SHARED = os.environ.get("FRAMEGRAPH_SHARED") or os.path.normpath(os.path.join(ROOT, "..", "shared"))
TFLITE = os.path.join(SHARED, "models", "labeling", "efficientnet_lite0_metadata.tflite")
ONNX = os.path.join(ROOT, "models", "cache", "efficientnet_lite0.onnx")
FG = os.path.join(ROOT, ".build", "release", "framegraph")

PEER = r"""
import sys, time, numpy as np
kind, model, runs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
x = np.random.default_rng(42).random((1, 224, 224, 3), dtype=np.float32) * 2 - 1
if kind == "litert":
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=model, num_threads=threads); it.allocate_tensors()
    i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    def run():
        it.set_tensor(i, x); it.invoke(); return it.get_tensor(o)
else:
    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = threads; so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]); name = s.get_inputs()[0].name
    def run():
        return s.run(None, {name: x})
for _ in range(20): run()
t = []
for _ in range(runs):
    a = time.perf_counter(); run(); t.append((time.perf_counter() - a) * 1000)
t.sort(); print(f"median {t[len(t) // 2]:.3f}")
"""


def measure(cmd, cpu):
    out = subprocess.run(["taskset", "-c", str(cpu)] + cmd, capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+)", out.stdout)
    if not m:
        raise SystemExit(f"no median from {' '.join(cmd)}: {out.stderr.strip()[-300:]}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--cpu", default="0")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--int8", action="store_true")
    a = ap.parse_args()
    for f in (TFLITE, ONNX, FG):
        if not os.path.exists(f):
            raise SystemExit(f"missing {f} (../shared/models/labeling, scripts/test.sh for the ONNX, swift build -c release)")
    if a.threads > 1 and "," not in a.cpu and "-" not in a.cpu:
        a.cpu = "0,1"
    sides = {
        "LiteRT (.tflite)": [PY, "-c", PEER, "litert", TFLITE, str(a.runs), str(a.threads)],
        "FrameGraph (.tflite)": [FG, "model", "bench", TFLITE, "--runs", str(a.runs), "--threads", str(a.threads)],
        "onnxruntime (.onnx)": [PY, "-c", PEER, "ort", ONNX, str(a.runs), str(a.threads)],
        "FrameGraph (.onnx)": [FG, "model", "bench", ONNX, "--runs", str(a.runs), "--threads", str(a.threads)],
        # The same with every convolution left to XNNPACK (FrameGraph before its own kernel).
        "FrameGraph XNNPACK-conv (.tflite)": [FG, "model", "bench", TFLITE, "--runs", str(a.runs), "--threads", str(a.threads),
                                              "--conv-kernels", "xnnpack"],
    }
    if a.int8:
        sides["FrameGraph int8 (.tflite)"] = [FG, "model", "bench", TFLITE, "--runs", str(a.runs), "--threads", str(a.threads),
                                              "--precision", "int8"]
    results = {k: [] for k in sides}
    for r in range(a.rounds):
        for name, cmd in sides.items():
            results[name].append(measure(cmd, a.cpu))
            print(f"round {r + 1} {name:34s} median {results[name][-1]:8.3f} ms", flush=True)
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"\nEfficientNet-Lite0, {a.threads} thread(s), CPU {a.cpu}, medians of {a.rounds} round medians ({a.runs} runs each):")
    for k, v in med.items():
        print(f"  {k:34s} {v:8.3f} ms")
    print(f"  FrameGraph / LiteRT (.tflite)      {med['FrameGraph (.tflite)'] / med['LiteRT (.tflite)']:.3f}")
    print(f"  FrameGraph / onnxruntime (.onnx)   {med['FrameGraph (.onnx)'] / med['onnxruntime (.onnx)']:.3f}")
    print(f"  FrameGraph XNNPACK-conv / LiteRT   {med['FrameGraph XNNPACK-conv (.tflite)'] / med['LiteRT (.tflite)']:.3f}")
    if a.int8:
        print(f"  FrameGraph int8 / LiteRT (.tflite) {med['FrameGraph int8 (.tflite)'] / med['LiteRT (.tflite)']:.3f}")
    # Each round's sides ran within seconds of each other: the median of the rounds' own ratios is
    # less moved by the host's slow drift than the ratio of the medians.
    def per_round(a, b):
        return statistics.median(x / y for x, y in zip(results[a], results[b]))
    print(f"  median of the rounds' ratios: FrameGraph / LiteRT {per_round('FrameGraph (.tflite)', 'LiteRT (.tflite)'):.3f}, "
          f"FrameGraph / onnxruntime {per_round('FrameGraph (.onnx)', 'onnxruntime (.onnx)'):.3f}")


if __name__ == "__main__":
    sys.exit(main())
