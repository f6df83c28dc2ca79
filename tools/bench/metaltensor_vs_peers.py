#!/usr/bin/env python3
"""Benchmark: one prediction of each MetalTensor example model on one thread, interleaved round by
round (A B C A B C ...): (a) the numpy reference executor (tools/metaltensor/mt_reference.py),
(b) onnxruntime on the model exported by tools/metaltensor/export_onnx.py (intra 1, inter 1,
sequential), (c) FrameGraph (`framegraph model bench MODEL.plist --runs N --threads 1`). Every
measurement runs in its own process pinned with taskset to one CPU (default 0). Prints each round,
the median of the round medians and the ratios. Asserts nothing.

  .venv-tools/bin/python tools/bench/metaltensor_vs_peers.py [--models PortraitSegmentNet,RapidFaceDetect,Landmarks,MobileNetV2_1.0]
                                                             [--rounds 5] [--runs 50] [--numpy-runs 5] [--cpu 0]

The input is a real frame: the centre square of again.mkv at t = 0.5 s resized to each model's input.
MobileNetV2_1.0 ships no .bin: its weights come from tools/metaltensor/make_random_weights.py --seed 1
(models/cache/metaltensor/MobileNetV2_1.0.bin, made when missing). The ONNX files are exported to
models/cache/metaltensor/ when missing. FrameGraph is .build/release/framegraph (not built here); when it
is missing or fails, its column says why and the rest still runs.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MT = os.path.join(ROOT, "tools", "metaltensor")
CACHE = os.path.join(ROOT, "models", "cache", "metaltensor")
PY = os.path.join(ROOT, ".venv-tools", "bin", "python")
if not os.path.exists(PY):
    PY = sys.executable
MODELS = ["PortraitSegmentNet", "RapidFaceDetect", "Landmarks", "MobileNetV2_1.0"]


def shared():
    return os.environ.get("FRAMEGRAPH_SHARED") or os.path.normpath(os.path.join(ROOT, "..", "shared"))


def paths(name):
    d = os.path.join(shared(), "models", "metaltensor")
    plist = os.path.join(d, name + ".plist")
    bin_ = os.path.join(d, name + ".bin")
    if not os.path.exists(bin_):
        bin_ = os.path.join(CACHE, name + ".bin")
    return plist, bin_, os.path.join(CACHE, name + ".onnx")


def prepare(name):
    plist, bin_, onnx_path = paths(name)
    if not os.path.exists(bin_):
        subprocess.run([PY, os.path.join(MT, "make_random_weights.py"), plist, "--seed", "1", "--out", bin_],
                       check=True, cwd=ROOT)
    if not os.path.exists(onnx_path):
        subprocess.run([PY, os.path.join(MT, "export_onnx.py"), plist, "--weights-bin", bin_, "--out", onnx_path],
                       check=True, cwd=ROOT)
    return plist, bin_, onnx_path


# ---- workers (run in a pinned child process; print one JSON line) ----

def worker(kind, plist, bin_, onnx_path, input_path, runs, warmup):
    import numpy as np
    from fgtools import mt_reference as mtr
    model = mtr.load_model(plist, None, bin_)
    h, w, c = model.nodes[model.input].shape
    x = np.fromfile(input_path, "<f4").reshape(h, w, c)
    if kind == "numpy":
        fn = lambda: mtr.run(model, x, "fp32")
    else:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        feed = {model.input: x[None]}
        fn = lambda: sess.run(None, feed)
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    ver = np.__version__ if kind == "numpy" else __import__("onnxruntime").__version__
    print(json.dumps({"median_ms": statistics.median(ts), "min_ms": min(ts), "runs": runs, "version": ver}))


def measure_py(kind, pin, plist, bin_, onnx_path, input_path, runs, warmup):
    r = subprocess.run(pin + [PY, os.path.abspath(__file__), "--worker", kind, plist, bin_, onnx_path, input_path,
                              str(runs), str(warmup)], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure_fg(pin, plist, bin_, runs):
    fg = os.path.join(ROOT, ".build", "release", "framegraph")
    if not os.path.exists(fg):
        raise RuntimeError(".build/release/framegraph is not built")
    cmd = [fg, "model", "bench", plist, "--runs", str(runs), "--threads", "1"]
    if not os.path.exists(os.path.splitext(plist)[0] + ".bin"):
        cmd += ["--weights", bin_]
    r = subprocess.run(pin + cmd, capture_output=True, text=True, cwd=ROOT)
    out = r.stdout + r.stderr
    m = re.search(r"median\s+([0-9.]+)\s*ms", out)
    if r.returncode != 0 or not m:
        last = out.strip().splitlines()[-1] if out.strip() else f"exit {r.returncode}"
        raise RuntimeError(f"`framegraph model bench` failed: {last}")
    return {"median_ms": float(m.group(1))}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, plist, bin_, onnx_path, input_path, runs, warmup = sys.argv[2:9]
        worker(kind, plist, bin_, onnx_path, input_path, int(runs), int(warmup))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=50, help="timed runs per round for onnxruntime and FrameGraph")
    ap.add_argument("--numpy-runs", type=int, default=5, help="timed runs per round for the numpy reference")
    ap.add_argument("--cpu", type=int, default=0, help="CPU every measurement is pinned to (taskset -c)")
    a = ap.parse_args()
    pin = ["taskset", "-c", str(a.cpu)]
    import numpy as np
    from fgtools import mt_demos
    from fgtools import mt_reference as mtr
    frame = mt_demos.decode_frame(mt_demos.default_clip(), 0.5)
    H, W = frame.shape[:2]
    tmp = tempfile.mkdtemp(prefix="mt-bench-")
    summary = []
    for name in a.models.split(","):
        plist, bin_, onnx_path = prepare(name)
        pm = mtr.parse_model(plist)
        h, w, _ = pm.nodes[pm.input].shape
        x = mt_demos.to_input(mt_demos.resample(frame, *mt_demos.centre_square(W, H), w, h))
        inp = os.path.join(tmp, name + ".f32")
        np.asarray(x, "<f4").tofile(inp)
        print(f"\n{name} ({h}x{w}), 1 thread, CPU {a.cpu}")
        res = {"numpy reference": [], "onnxruntime": [], "FrameGraph": []}
        fg_reason = None
        for r in range(a.rounds):
            m = measure_py("numpy", pin, plist, bin_, onnx_path, inp, a.numpy_runs, 1)
            res["numpy reference"].append(m["median_ms"])
            print(f"  round {r + 1} numpy {m['version']:8s} median {m['median_ms']:9.3f} ms")
            m = measure_py("ort", pin, plist, bin_, onnx_path, inp, a.runs, 5)
            res["onnxruntime"].append(m["median_ms"])
            print(f"  round {r + 1} onnxruntime {m['version']:8s} median {m['median_ms']:9.3f} ms")
            if fg_reason is None:
                try:
                    m = measure_fg(pin, plist, bin_, a.runs)
                    res["FrameGraph"].append(m["median_ms"])
                    print(f"  round {r + 1} FrameGraph       median {m['median_ms']:9.3f} ms")
                except RuntimeError as e:
                    fg_reason = str(e)
                    print(f"  FrameGraph: not available ({fg_reason})")
        med = {k: statistics.median(v) for k, v in res.items() if v}
        print(f"  median of round medians: " + ", ".join(f"{k} {v:.3f} ms" for k, v in med.items()))
        if "onnxruntime" in med:
            print(f"  ratio numpy reference / onnxruntime: {med['numpy reference'] / med['onnxruntime']:.2f}")
        if "FrameGraph" in med:
            print(f"  ratio FrameGraph / onnxruntime: {med['FrameGraph'] / med['onnxruntime']:.3f}")
            print(f"  ratio FrameGraph / numpy reference: {med['FrameGraph'] / med['numpy reference']:.3f}")
        summary.append((name, med, fg_reason))
    print("\nsummary (median of round medians, ms):")
    print(f"  {'model':20s} {'numpy ref':>10s} {'onnxruntime':>12s} {'FrameGraph':>11s} {'FG/ORT':>7s}")
    for name, med, reason in summary:
        fg = med.get("FrameGraph")
        ort_ms = med["onnxruntime"]
        fg_s = f"{fg:11.3f}" if fg else "        n/a"
        ratio_s = f"{fg / ort_ms:7.3f}" if fg else "    n/a"
        print(f"  {name:20s} {med['numpy reference']:10.3f} {ort_ms:12.3f} {fg_s} {ratio_s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
