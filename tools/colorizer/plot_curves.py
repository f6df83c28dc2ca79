#!/usr/bin/env python3
"""Plot train.py's curves.json (train vs held-out loss and a/b RMSE/grey over training steps) as a
small PNG with PIL only (no matplotlib in .venv-tools).

Usage: .venv-tools/bin/python tools/colorizer/plot_curves.py models/colorizer/curves.json models/colorizer/curves.png
"""
import json
import sys

from PIL import Image, ImageDraw

SERIES = [("webcam_train", (230, 120, 0), "webcam train clips"), ("webcam_heldout", (200, 0, 0), "webcam held-out clips"),
          ("photos_train", (0, 150, 200), "photos train"), ("photos_heldout", (0, 60, 200), "photos held-out (20)"),
          ("val20", (120, 0, 160), "BSDS val (20)")]


def panel(d, rows, key, title, box, ymax=None):
    x0, y0, x1, y1 = box
    steps = [r["step"] for r in rows]
    vals = [r[f"{s}_{key}"] for s, _, _ in SERIES for r in rows]
    if key == "loss":
        vals += [r["train_loss_aug"] for r in rows if r["train_loss_aug"]]
    lo, hi = 0.0, ymax or max(vals) * 1.05
    smax = max(steps)
    d.rectangle(box, outline=(0, 0, 0))
    d.text((x0 + 4, y0 - 16), title, fill=(0, 0, 0))
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        y = y1 - (v - lo) / (hi - lo) * (y1 - y0)
        d.line((x0, y, x1, y), fill=(225, 225, 225))
        d.text((x0 - 34, y - 6), f"{v:.2f}", fill=(0, 0, 0))
    for i in range(5):
        s = smax * i / 4
        x = x0 + s / smax * (x1 - x0)
        d.text((x - 12, y1 + 4), f"{int(s)}", fill=(0, 0, 0))

    def line(ys, col, width=2):
        pts = [(x0 + s / smax * (x1 - x0), y1 - (min(v, hi) - lo) / (hi - lo) * (y1 - y0)) for s, v in zip(steps, ys) if v is not None]
        if len(pts) > 1:
            d.line(pts, fill=col, width=width)
    for s, col, _ in SERIES:
        line([r[f"{s}_{key}"] for r in rows], col)
    if key == "loss":
        line([r["train_loss_aug"] for r in rows], (120, 120, 120), 1)


def main(src, dst):
    rows = json.load(open(src))
    img = Image.new("RGB", (900, 330), (255, 255, 255))
    d = ImageDraw.Draw(img)
    panel(d, rows, "loss", "loss (rebalanced CE, no augmentation) vs step", (50, 30, 430, 270))
    panel(d, rows, "rmse_ratio", "a/b RMSE / all-grey RMSE (64x64, T=0.38) vs step", (500, 30, 880, 270), ymax=1.8)
    x = 50
    for s, col, name in SERIES + [("", (120, 120, 120), "train batches (augmented)")]:
        d.line((x, 305, x + 18, 305), fill=col, width=3)
        d.text((x + 22, 299), name, fill=(0, 0, 0))
        x += 30 + 6 * len(name)
    img.save(dst, optimize=True)
    print(dst)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
