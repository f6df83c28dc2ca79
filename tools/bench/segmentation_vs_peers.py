#!/usr/bin/env python3
"""Benchmark: one prediction of a MediaPipe model on one thread pinned to CPU 0, FrameGraph
(`framegraph model bench`: as it runs by default, and with every convolution left to XNNPACK,
`--conv-kernels xnnpack`) against LiteRT + XNNPACK delegate and onnxruntime
(tools/models/bench_peers.py), interleaved round by round in one run. Prints each round, the median
of the round medians per runtime, and the ratios. Asserts nothing.

  tools/bench/segmentation_vs_peers.py [--model selfie_segmentation] [--rounds 5] [--runs 200] [--threads 2] [--int8]

--int8 adds FrameGraph with `--precision int8` (its dense convolutions in 8-bit integers; the peers
stay float32, as the model files are).

--threads N gives every runtime N inference threads and lets them use both cores (no pinning);
the default is one thread on CPU 0.

Needs the tools venv (.venv-tools, see tools/models/README.md) and models/cache
(tools/models/fetch_mediapipe_models.sh).
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="selfie_segmentation")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--int8", action="store_true")
    a = ap.parse_args()
    pin = ["taskset", "-c", "0"] if a.threads == 1 else []
    fg = os.path.join(root, ".build/release/framegraph")
    if not os.path.exists(fg):
        subprocess.run(["swift", "build", "-c", "release", "--product", "framegraph"], check=True, cwd=root)
    py = os.path.join(root, ".venv-tools/bin/python")
    model = os.path.join(root, "models/cache", a.model + ".tflite")
    results = {}
    for r in range(a.rounds):
        variants = [("framegraph", []), ("framegraph, XNNPACK convolutions", ["--conv-kernels", "xnnpack"])]
        if a.int8:
            variants.append(("framegraph int8", ["--precision", "int8"]))
        for label, extra in variants:
            out = subprocess.run(pin + [fg, "model", "bench", model, "--runs", str(a.runs), "--threads", str(a.threads)] + extra,
                                 check=True, capture_output=True, text=True, cwd=root).stdout
            m = re.search(r"median ([0-9.]+) ms, p95 ([0-9.]+) ms", out)
            results.setdefault(label, []).append(float(m.group(1)))
            print(f"round {r + 1} {label:28s} median {float(m.group(1)):.3f} ms  p95 {float(m.group(2)):.3f} ms")
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run(pin + [py, os.path.join(root, "tools/models/bench_peers.py"), "--model", a.model,
                            "-n", str(a.runs), "--threads", str(a.threads), "--json", f.name], check=True, capture_output=True, text=True, cwd=root)
            peers = json.load(open(f.name))
        for row in peers.get("results", peers if isinstance(peers, list) else []):
            name = f"{row['runtime']} {row.get('version', '')}".strip()
            results.setdefault(name, []).append(row["median_ms"])
            print(f"round {r + 1} {name:28s} median {row['median_ms']:.3f} ms  p95 {row.get('p95_ms', float('nan')):.3f} ms")
    print(f"\nmedian of round medians ({'1 thread, CPU 0' if a.threads == 1 else f'{a.threads} threads, both cores'}):")
    med = {k: statistics.median(v) for k, v in results.items()}
    for k, v in med.items():
        print(f"  {k:32s} {v:.3f} ms")
    ours = med.pop("framegraph")
    int8 = med.pop("framegraph int8", None)
    for k, v in med.items():
        print(f"  ratio framegraph / {k}: {ours / v:.3f}" + (f"   (int8: {int8 / v:.3f})" if int8 and not k.startswith("framegraph") else ""))
    if int8:
        print(f"  ratio framegraph int8 / framegraph: {int8 / ours:.3f}")

if __name__ == "__main__":
    sys.exit(main())
