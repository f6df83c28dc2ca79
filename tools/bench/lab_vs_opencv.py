#!/usr/bin/env python3
"""Benchmark: a 640x480 RGB → Lab → RGB round trip on one core (CPU 0), FrameGraph's LabColor
(`framegraph-bench lab`) against OpenCV's cvtColor (8-bit and float32 paths) and scikit-image's
rgb2lab/lab2rgb, interleaved round by round. Prints medians in ms. Asserts nothing.

  tools/bench/lab_vs_opencv.py [--rounds 5]      (needs .venv-mediapipe for cv2, .venv-tools for skimage)
"""
import argparse, os, re, statistics, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER = r'''
import sys, time, numpy as np
which = sys.argv[1]
rng = np.random.default_rng(1)
img = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
def bench(fn, n):
    fn(); t = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); t.append((time.perf_counter() - t0) * 1e3)
    t.sort(); return t[len(t) // 2]
if which == "cv2":
    import cv2
    cv2.setNumThreads(1)
    f = img.astype(np.float32) / 255
    print("opencv-u8", bench(lambda: cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2Lab), cv2.COLOR_Lab2RGB), 50))
    print("opencv-f32", bench(lambda: cv2.cvtColor(cv2.cvtColor(f, cv2.COLOR_RGB2Lab), cv2.COLOR_Lab2RGB), 50))
else:
    from skimage import color
    print("scikit-image", bench(lambda: color.lab2rgb(color.rgb2lab(img)), 5))
'''

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    bench = os.path.join(root, ".build/release/framegraph-bench")
    if not os.path.exists(bench):
        subprocess.run(["swift", "build", "-c", "release", "--product", "framegraph-bench"], check=True, cwd=root)
    res = {}
    for r in range(a.rounds):
        out = subprocess.run(["taskset", "-c", "0", bench, "lab", "50"], capture_output=True, text=True, check=True).stdout
        res.setdefault("framegraph", []).append(float(re.search(r"round trip ([0-9.]+) ms", out).group(1)))
        for py, which in ((".venv-mediapipe/bin/python", "cv2"), (".venv-tools/bin/python", "skimage")):
            out = subprocess.run(["taskset", "-c", "0", os.path.join(root, py), "-c", PEER, which], capture_output=True, text=True,
                                 env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")).stdout
            for line in out.splitlines():
                name, ms = line.split()
                res.setdefault(name, []).append(float(ms))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f} ms" for k, v in res.items()))
    med = {k: statistics.median(v) for k, v in res.items()}
    print("median round trip 640x480, 1 core: " + ", ".join(f"{k} {v:.3f} ms" for k, v in med.items()))
    for k, v in med.items():
        if k != "framegraph":
            print(f"  ratio framegraph / {k}: {med['framegraph'] / v:.3f}")

if __name__ == "__main__":
    sys.exit(main())
