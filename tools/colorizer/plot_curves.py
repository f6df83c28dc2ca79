#!/usr/bin/env python3
"""Plot train.py's curves.json (train vs held-out loss and a/b RMSE/grey over training steps) as a
small PNG with PIL only (no matplotlib in .venv-tools).

Rows from join_curves.py (several training stages) get a dashed line where each stage starts, and a
third panel shows the full-resolution figures of the 20 held-out training photos (RMSE/grey and
colourfulness ratio at T, 0.5 unless given) where the rows have them. A row with "swa_of" (train.py --swa:
the average of the late snapshots, a different model from the EMA the lines follow) is drawn as a dot.

Usage: .venv-tools/bin/python tools/colorizer/plot_curves.py models/colorizer/curves.json models/colorizer/curves.png [T]
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

    swa = [bool(r.get("swa_of")) for r in rows]

    def line(ys, col, width=2):
        pts = [(x0 + s / smax * (x1 - x0), y1 - (min(v, hi) - lo) / (hi - lo) * (y1 - y0))
               for s, v, a in zip(steps, ys, swa) if v is not None and not a]
        if len(pts) > 1:
            d.line(pts, fill=col, width=width)
        for s, v, a in zip(steps, ys, swa):
            if a and v is not None:
                x, y = x0 + s / smax * (x1 - x0), y1 - (min(v, hi) - lo) / (hi - lo) * (y1 - y0)
                d.ellipse((x - 3, y - 3, x + 3, y + 3), fill=col)
    for s, col, _ in SERIES:
        line([r[f"{s}_{key}"] for r in rows], col)
    if key == "loss":
        line([r["train_loss_aug"] for r in rows], (120, 120, 120), 1)


def stage_lines(d, rows, box):
    x0, y0, x1, y1 = box
    smax = max(r["step"] for r in rows)
    for i, r in enumerate(rows):
        if i and r.get("stage") != rows[i - 1].get("stage"):
            x = x0 + r["step"] / smax * (x1 - x0)
            for y in range(y0, y1, 8):
                d.line((x, y, x, y + 4), fill=(90, 90, 90))
            d.text((x + 3, y0 + 3), str(r["stage"]), fill=(90, 90, 90))
    if rows[0].get("stage"):
        d.text((x0 + 3, y0 + 3), str(rows[0]["stage"]), fill=(90, 90, 90))


def full_panel(d, rows, box, T="0.5"):
    x0, y0, x1, y1 = box
    lo, hi = 0.6, 1.0
    smax = max(r["step"] for r in rows)
    d.rectangle(box, outline=(0, 0, 0))
    d.text((x0 + 4, y0 - 16), f"held-out training photos, full res, T={T}", fill=(0, 0, 0))
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        y = y1 - (v - lo) / (hi - lo) * (y1 - y0)
        d.line((x0, y, x1, y), fill=(225, 225, 225))
        d.text((x0 - 34, y - 6), f"{v:.2f}", fill=(0, 0, 0))
    for key, col in (("rmse_ratio", (0, 60, 200)), ("colourfulness_ratio", (0, 160, 60))):
        k = f"photos_heldout_full_T{T}_{key}"
        def xy(r):
            return x0 + r["step"] / smax * (x1 - x0), y1 - (min(max(r[k], lo), hi) - lo) / (hi - lo) * (y1 - y0)
        pts = [xy(r) for r in rows if k in r and not r.get("swa_of")]
        if len(pts) > 1:
            d.line(pts, fill=col, width=2)
        for r in rows:
            if k in r and r.get("swa_of"):
                x, y = xy(r)
                d.ellipse((x - 3, y - 3, x + 3, y + 3), fill=col)
    d.text((x0 + 6, y1 - 30), "RMSE/grey", fill=(0, 60, 200))
    d.text((x0 + 6, y1 - 16), "colourfulness/originals", fill=(0, 160, 60))


def main(src, dst, T="0.5"):
    rows = json.load(open(src))
    full = any(f"photos_heldout_full_T{T}_rmse_ratio" in r for r in rows)
    img = Image.new("RGB", (1300 if full else 900, 330), (255, 255, 255))
    d = ImageDraw.Draw(img)
    panel(d, rows, "loss", "loss (rebalanced CE, no augmentation) vs step", (50, 30, 430, 270))
    panel(d, rows, "rmse_ratio", "a/b RMSE / all-grey RMSE (model output size, T=0.38) vs step", (500, 30, 880, 270), ymax=1.8)
    stage_lines(d, rows, (50, 30, 430, 270))
    stage_lines(d, rows, (500, 30, 880, 270))
    if full:
        full_panel(d, rows, (950, 30, 1280, 270), T)
        stage_lines(d, rows, (950, 30, 1280, 270))
    x = 50
    for s, col, name in SERIES + [("", (120, 120, 120), "train batches (augmented)")]:
        d.line((x, 305, x + 18, 305), fill=col, width=3)
        d.text((x + 22, 299), name, fill=(0, 0, 0))
        x += 30 + 6 * len(name)
    img.save(dst, optimize=True)
    print(dst)


if __name__ == "__main__":
    main(*sys.argv[1:4])
