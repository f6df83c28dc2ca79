#!/usr/bin/env python3
"""Benchmark: one prediction of an ONNX model on one thread pinned to CPU 0 — FrameGraph's runtime
(`framegraph model bench`, imported by our ONNX importer, run through XNNPACK) against onnxruntime
(CPUExecutionProvider, 1 intra-op thread, all graph optimisations) on the same file, interleaved
round by round. Prints each round, the medians and the ratio. Asserts nothing.

  tools/bench/onnx_vs_onnxruntime.py [MODEL] [--rounds 5] [--runs 100]   (default models/colorizer/colorizer.onnx)
"""
import argparse, os, re, statistics, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT = r'''
import sys, time, numpy as np, onnxruntime as ort
path, runs = sys.argv[1], int(sys.argv[2])
so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
i = s.get_inputs()[0]
x = np.random.default_rng(0).uniform(-1, 1, [d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
for _ in range(min(20, runs)): s.run(None, {i.name: x})
t = []
for _ in range(runs):
    t0 = time.perf_counter(); s.run(None, {i.name: x}); t.append((time.perf_counter() - t0) * 1e3)
t.sort(); print(ort.__version__, t[len(t) // 2], t[int(len(t) * 0.95)])
'''

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default=os.path.join(root, "models/colorizer/colorizer.onnx"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
    fg = os.path.join(root, ".build/release/framegraph")
    if not os.path.exists(fg):
        subprocess.run(["swift", "build", "-c", "release", "--product", "framegraph"], check=True, cwd=root)
    py = os.path.join(root, ".venv-tools/bin/python")
    res = {"framegraph": [], "onnxruntime": []}
    version = "?"
    for r in range(a.rounds):
        out = subprocess.run(["taskset", "-c", "0", fg, "model", "bench", a.model, "--runs", str(a.runs)],
                             check=True, capture_output=True, text=True).stdout
        m = re.search(r"median ([0-9.]+) ms, p95 ([0-9.]+) ms", out)
        res["framegraph"].append(float(m.group(1)))
        ver, med, p95 = subprocess.run(["taskset", "-c", "0", py, "-c", ORT, a.model, str(a.runs)], check=True,
                                       capture_output=True, text=True).stdout.split()
        version = ver
        res["onnxruntime"].append(float(med))
        print(f"round {r + 1}: framegraph {float(m.group(1)):.3f} ms (p95 {float(m.group(2)):.3f}), "
              f"onnxruntime {float(med):.3f} ms (p95 {float(p95):.3f})")
    fgm, ortm = statistics.median(res["framegraph"]), statistics.median(res["onnxruntime"])
    print(f"{os.path.basename(a.model)}, 1 thread, CPU 0: median framegraph {fgm:.3f} ms, onnxruntime {version} {ortm:.3f} ms, "
          f"ratio {fgm / ortm:.3f}")

if __name__ == "__main__":
    sys.exit(main())
