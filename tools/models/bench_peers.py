#!/usr/bin/env python3
"""Single-thread prediction latency of the peers FrameGraph's XNNPACK runtime is compared with.

Runtimes (same seeded random input in [0,1), one prediction = set input + run +
fetch the outputs as numpy arrays):
  litert+xnnpack   ai-edge-litert Interpreter, default XNNPACK delegate, num_threads=1
  onnxruntime      CPUExecutionProvider, intra_op_num_threads=1, inter_op_num_threads=1,
                   ORT_SEQUENTIAL, ORT_ENABLE_ALL, on the model converted by
                   tools/models/tflite_to_onnx.py (cached as models/cache/<model>.onnx;
                   MediaPipe's custom Convolution2DTransposeBias -> ConvTranspose + bias)
  litert-builtin   LiteRT's built-in kernels without delegates (only for models that
                   have no MediaPipe custom op, i.e. not the selfie models)

Prints a table (runtime, version, median ms, p95 ms, ...) and, with --json, writes
the figures. It asserts nothing. Pin it to one core when measuring:
  taskset -c 0 .venv-tools/bin/python tools/models/bench_peers.py [--model selfie_segmentation] [-n 200] [--warmup 20]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import mpmodels as mp
from fgtools.hostinfo import cpu_name


def timed(fn, n: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


THREADS = 1


def litert_runner(path: str, x: np.ndarray, xnnpack: bool):
    it = mp.litert_interpreter(path, xnnpack=xnnpack, threads=THREADS)
    d = it.get_input_details()[0]
    outs = [o["index"] for o in it.get_output_details()]

    def run():
        it.set_tensor(d["index"], x)
        it.invoke()
        return [it.get_tensor(i) for i in outs]
    return run


def ort_runner(onnx_path: str, x: np.ndarray):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return lambda: sess.run(None, {name: x})


def stats(ms: list[float]) -> dict:
    a = np.array(ms)
    return {"runs": len(ms), "median_ms": float(np.median(a)), "p95_ms": float(np.percentile(a, 95)),
            "min_ms": float(a.min()), "mean_ms": float(a.mean())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="selfie_segmentation")
    ap.add_argument("-n", "--runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=mp.DEFAULT_CACHE)
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--threads", type=int, default=1, help="inference threads for every runtime (default 1)")
    a = ap.parse_args(argv)
    global THREADS
    THREADS = a.threads

    path = mp.model_path(a.model, a.cache)
    it = mp.litert_interpreter(path)
    shape = it.get_input_details()[0]["shape"]
    x = np.random.default_rng(a.seed).random(shape, dtype=np.float32)
    ref = mp.litert_run(path, x, it=it)
    del it

    import tflite_to_onnx
    stem = os.path.splitext(os.path.basename(path))[0]
    onnx_path = os.path.join(a.cache, stem + ".onnx")
    onnx_diff = {}
    try:
        if not os.path.exists(onnx_path):
            os.makedirs(a.cache, exist_ok=True)
            tflite_to_onnx.convert_file(path, onnx_path)
        onnx_diff = mp.max_abs_diff(ref, mp.onnxruntime_run(onnx_path, x))
    except NotImplementedError as e:  # an operator the converter does not handle: onnxruntime is left out
        print(f"onnxruntime left out: the TFLite → ONNX converter cannot convert this model ({e})", file=sys.stderr)
        onnx_path = None

    v = mp.versions()
    runners = [("litert+xnnpack", f"ai-edge-litert {v.get('ai-edge-litert')}", lambda: litert_runner(path, x, True))]
    if onnx_path:
        runners.append(("onnxruntime", f"onnxruntime {v.get('onnxruntime')}", lambda: ort_runner(onnx_path, x)))
    try:
        mp.litert_run(path, x, xnnpack=False)
        runners.append(("litert-builtin", f"ai-edge-litert {v.get('ai-edge-litert')}", lambda: litert_runner(path, x, False)))
    except (RuntimeError, ValueError):
        pass  # custom op only the XNNPACK delegate implements

    env = {"model": os.path.basename(path), "input_shape": [int(s) for s in shape], "runs": a.runs,
           "warmup": a.warmup, "seed": a.seed, "threads": a.threads,
           "cpu_affinity": sorted(os.sched_getaffinity(0)), "cpu": cpu_name(), "python": platform.python_version(),
           "loadavg_at_start": list(os.getloadavg()),
           "onnx_vs_litert_max_abs_diff": onnx_diff}
    results = []
    for name, ver, make in runners:
        run = make()
        s = stats(timed(run, a.runs, a.warmup))
        results.append({"runtime": name, "version": ver, **s})

    print(f"model {env['model']} input {env['input_shape']}  {a.runs} runs after {a.warmup} warm-ups, 1 thread, "
          f"cpus {env['cpu_affinity']} ({env['cpu']}), load avg at start {env['loadavg_at_start'][0]:.2f}")
    print(f"ONNX vs LiteRT max |diff|: " + ", ".join(f"{k} {d:.2g}" for k, d in onnx_diff.items()))
    print(f"{'runtime':16s} {'version':24s} {'median ms':>10s} {'p95 ms':>9s} {'min ms':>9s}")
    for r in results:
        print(f"{r['runtime']:16s} {r['version']:24s} {r['median_ms']:10.3f} {r['p95_ms']:9.3f} {r['min_ms']:9.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"env": env, "results": results}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
