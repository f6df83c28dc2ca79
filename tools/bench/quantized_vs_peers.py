#!/usr/bin/env python3
"""Benchmark: one prediction of each quantized / fp16 test model (models/cache/quantized, made by
tools/quantized/make_models.py) on one thread, FrameGraph against the model's reference runtime —
LiteRT (ai-edge-litert, its default XNNPACK delegate, num_threads=1) for .tflite, onnxruntime
(intra 1, inter 1, sequential, default graph optimisations) for .onnx — interleaved round by round
(A B A B …), every measurement in its own process pinned with taskset to one CPU (default 0).
FrameGraph's side is `framegraph model bench MODEL --runs N --threads 1` (its median: input written,
prediction, output read, as the peer's step is timed). Prints each round, the median of the round
medians per side and FrameGraph's time as a ratio of the reference's. Asserts nothing.

  .venv-quant/bin/python tools/bench/quantized_vs_peers.py [--rounds 5] [--runs 100] [--cpu 0] [MODEL ...]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = sys.executable
MODELS = os.path.join(ROOT, "models", "cache", "quantized")
FG = os.path.join(ROOT, ".build", "release", "framegraph")
DEFAULT = ["mobilenet_v2_1.0_224_int8.tflite", "mobilenet_v2_1.0_224_uint8.tflite", "mobilenet_v2_1.0_224_dynamic.tflite",
           "efficientnet_lite0_qdq_u8.onnx", "efficientnet_lite0_qdq_s8.onnx", "efficientnet_lite0_qop_u8.onnx",
           "efficientnet_lite0_fp16.onnx", "ssd_regular_nms_uint8.tflite"]

PEER = r"""
import sys, time, numpy as np
model, runs = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(42)
def random(shape, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype); return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)
    return (rng.random(shape, dtype=np.float32) * 2 - 1).astype(dtype)
if model.endswith(".tflite"):
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=model, num_threads=1); it.allocate_tensors()
    d = it.get_input_details()[0]; x = random(d["shape"], d["dtype"]); outs = [o["index"] for o in it.get_output_details()]
    def run():
        it.set_tensor(d["index"], x); it.invoke(); return [it.get_tensor(o) for o in outs]
else:
    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]); i = s.get_inputs()[0]
    x = random([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
    def run():
        return s.run(None, {i.name: x})
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
        raise SystemExit(f"no median from {' '.join(cmd)}: {(out.stderr or out.stdout).strip()[-300:]}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--cpu", default="0")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    names = a.models or DEFAULT
    rows = []
    for name in names:
        path = name if os.path.exists(name) else os.path.join(MODELS, name)
        if not os.path.exists(path):
            raise SystemExit(f"missing {path} (tools/quantized/setup.sh && .venv-quant/bin/python tools/quantized/make_models.py)")
        peer = "LiteRT" if path.endswith(".tflite") else "onnxruntime"
        sides = {peer: [PY, "-c", PEER, path, str(a.runs)],
                 "FrameGraph": [FG, "model", "bench", path, "--runs", str(a.runs), "--threads", "1"]}
        results = {k: [] for k in sides}
        for r in range(a.rounds):
            line = []
            for k, cmd in sides.items():
                results[k].append(measure(cmd, a.cpu))
                line.append(f"{k} {results[k][-1]:.3f} ms")
            print(f"{os.path.basename(path)} round {r + 1}: " + ", ".join(line), flush=True)
        med = {k: statistics.median(v) for k, v in results.items()}
        rows.append((os.path.basename(path), peer, med[peer], med["FrameGraph"], med["FrameGraph"] / med[peer]))
    print()
    print("| model | reference | reference ms | FrameGraph ms | FrameGraph / reference |")
    print("|---|---|---:|---:|---:|")
    for m, peer, p, f, ratio in rows:
        print(f"| {m} | {peer} | {p:.2f} | {f:.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
