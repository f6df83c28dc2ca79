#!/usr/bin/env python3
"""Evaluate an exported colorizer ONNX on the validation photos (CPU, onnxruntime).

For every photo: L (skimage rgb2lab, sRGB D65) is resized to 256x256 (bilinear, the photo is
stretched to a square as the pipeline does), fed as L/50 - 1, and the predicted a/b (64x64) is
upsampled bilinearly to the photo's size and combined with the photo's own full-size L.

Metrics:
  * colourfulness (Hasler & Süsstrunk 2003) of ours and of the original sRGB photo, mean over
    photos, and their ratio (goal >= 0.6);
  * a/b RMSE over all pixels and both channels (pooled over photos) of ours vs the original, and
    of the all-grey prediction a = b = 0, and their ratio (goal <= 1.2).
Optionally writes a grid PNG (grey / ours / original, 12 photos) and times one prediction on one
thread (run it under `taskset -c 1`).

Usage:
  taskset -c 1 .venv-tools/bin/python tools/colorizer/metrics.py models/colorizer/colorizer.onnx \
      --grid /tmp/colorizer_val_grid.png --json /tmp/metrics.json --bench 200
"""
import argparse
import json
import os
import sys
import time

import numpy as np
from PIL import Image, ImageDraw
from skimage.color import lab2rgb, rgb2lab

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import colorcommon as cc  # noqa: E402


def resize_f(x, size):
    """float 2-D array -> bilinear resize to size=(W, H) with PIL (antialiased when shrinking)."""
    return np.asarray(Image.fromarray(x.astype(np.float32), mode="F").resize(size, Image.BILINEAR))


def session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def predict(sess, L):
    H, W = L.shape
    x = (resize_f(L, (256, 256)) / 50.0 - 1.0)[None, None].astype(np.float32)
    ab = sess.run(["ab"], {"L": x})[0][0]
    return np.stack([resize_f(ab[0], (W, H)), resize_f(ab[1], (W, H))], -1)


def thumb(rgb01, cell):
    im = Image.fromarray((np.clip(rgb01, 0, 1) * 255 + 0.5).astype(np.uint8))
    im.thumbnail(cell, Image.LANCZOS)
    canvas = Image.new("RGB", cell, (255, 255, 255))
    canvas.paste(im, ((cell[0] - im.width) // 2, (cell[1] - im.height) // 2))
    return canvas


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--val", default="/work/shared/data/bsds500/val")
    ap.add_argument("--grid", help="write a grey/ours/original grid PNG of 12 photos here")
    ap.add_argument("--json", help="write the metrics here")
    ap.add_argument("--bench", type=int, default=0, help="time this many single-thread predictions")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N photos (quick check)")
    ap.add_argument("--framegraph", help="path of the framegraph CLI: colorize each photo with FrameGraph's own "
                    "pipeline (pipelines/colorize-image.fg: its Lab, resize, runtime) instead of onnxruntime")
    a = ap.parse_args()

    sess = session(a.model, 1)
    names = sorted(f for f in os.listdir(a.val) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    if a.limit:
        names = names[:a.limit]
    grid_idx = set(np.linspace(0, len(names) - 1, 12).round().astype(int).tolist())
    cells = []
    cf_ours, cf_orig, se, se0, npx = [], [], 0.0, 0.0, 0
    for i, n in enumerate(names):
        rgb = np.asarray(Image.open(os.path.join(a.val, n)).convert("RGB"), dtype=np.float64) / 255.0
        lab = rgb2lab(rgb)
        if a.framegraph:
            import subprocess, tempfile
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "c.png")
                root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
                subprocess.run([a.framegraph, "run", os.path.join(root, "pipelines/colorize-image.fg"), "--input",
                                os.path.join(a.val, n), "--output", out, "--set", f"colorizer.model={os.path.abspath(a.model)}",
                                "--quiet"], check=True, cwd=root)
                ab = rgb2lab(np.asarray(Image.open(out).convert("RGB"), dtype=np.float64) / 255.0)[..., 1:]
        else:
            ab = predict(sess, lab[..., 0].astype(np.float32))
        gt = lab[..., 1:]
        se += float(((ab - gt) ** 2).sum())
        se0 += float((gt ** 2).sum())
        npx += gt.size
        ours = np.clip(lab2rgb(np.concatenate([lab[..., :1], ab], -1)), 0, 1)
        cf_ours.append(cc.colourfulness(ours * 255))
        cf_orig.append(cc.colourfulness(rgb * 255))
        if i in grid_idx and a.grid:
            grey = np.clip(lab2rgb(np.concatenate([lab[..., :1], np.zeros_like(gt)], -1)), 0, 1)
            cells.append((grey, ours, rgb))
    rmse, rmse0 = float(np.sqrt(se / npx)), float(np.sqrt(se0 / npx))
    res = dict(model=os.path.basename(a.model), photos=len(names), runtime="framegraph" if a.framegraph else "onnxruntime",
               colourfulness_ours=float(np.mean(cf_ours)), colourfulness_original=float(np.mean(cf_orig)),
               colourfulness_ratio=float(np.mean(cf_ours) / np.mean(cf_orig)),
               rmse_ab_ours=rmse, rmse_ab_grey=rmse0, rmse_ratio=rmse / rmse0)
    print(f"{len(names)} photos: colourfulness ours {res['colourfulness_ours']:.2f} vs original "
          f"{res['colourfulness_original']:.2f} -> {res['colourfulness_ratio']:.3f}x (goal >= 0.6)")
    print(f"a/b RMSE ours {rmse:.2f} vs all-grey {rmse0:.2f} -> {res['rmse_ratio']:.3f}x (goal <= 1.2)")

    if a.grid and cells:
        cell, pad, head = (200, 134), 4, 22
        cols, rows = 2, (len(cells) + 1) // 2
        W = cols * (3 * cell[0] + 2 * pad) + (cols - 1) * 4 * pad
        H = head + rows * (cell[1] + pad)
        img = Image.new("RGB", (W, H), (255, 255, 255))
        d = ImageDraw.Draw(img)
        for c in range(cols):
            x0 = c * (3 * cell[0] + 6 * pad)
            for j, t in enumerate(("grey (input)", "ours", "original")):
                d.text((x0 + j * (cell[0] + pad) + 6, 5), t, fill=(0, 0, 0))
        for k, trip in enumerate(cells):
            r, c = k // cols, k % cols
            x0 = c * (3 * cell[0] + 6 * pad)
            for j, im in enumerate(trip):
                img.paste(thumb(im, cell), (x0 + j * (cell[0] + pad), head + r * (cell[1] + pad)))
        img.save(a.grid, optimize=True)
        print("grid:", a.grid)

    if a.bench:
        x = np.random.default_rng(0).uniform(-1, 1, (1, 1, 256, 256)).astype(np.float32)
        for _ in range(20):
            sess.run(["ab"], {"L": x})
        ts = []
        for _ in range(a.bench):
            t = time.perf_counter()
            sess.run(["ab"], {"L": x})
            ts.append((time.perf_counter() - t) * 1e3)
        ts = np.array(ts)
        import onnxruntime as ort
        res["bench"] = dict(runtime=f"onnxruntime {ort.__version__} CPUExecutionProvider, 1 intra-op thread",
                            runs=a.bench, median_ms=float(np.median(ts)), p10_ms=float(np.percentile(ts, 10)),
                            p90_ms=float(np.percentile(ts, 90)), min_ms=float(ts.min()),
                            affinity=sorted(os.sched_getaffinity(0)))
        print(f"one prediction, 1 thread: median {np.median(ts):.2f} ms (p10 {np.percentile(ts, 10):.2f}, "
              f"p90 {np.percentile(ts, 90):.2f}, min {ts.min():.2f}) over {a.bench} runs, cpus {sorted(os.sched_getaffinity(0))}")
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
