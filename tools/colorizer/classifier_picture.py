#!/usr/bin/env python3
"""The picture of the model card's "Tried (6)": grey | v4.1 | refitted classifiers | original, on the hallway (one frame
of each window of places.py) and two evaluation photos. Usage: classifier_picture.py OUT.png NAME=MODEL.onnx ..."""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw
from skimage.color import lab2rgb, rgb2lab

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import places as pl  # noqa: E402
from metrics import predict, session  # noqa: E402

out, models = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
sess = [(n, session(p, 1)) for n, p in models]
rows = [fr[30] for fr in pl.clip_windows().values()][:2]
for name, pkg, rel in pl.PHOTO_PLACES:
    if name in ("astronaut", "coffee"):
        rows.append(np.asarray(Image.open(pl.package_file(pkg, rel)).convert("RGB")))
cw, ch = 180, 135
cols = ["grey"] + [n for n, _ in sess] + ["original"]
img = Image.new("RGB", (cw * len(cols), 16 + ch * len(rows)), "white")
d = ImageDraw.Draw(img)
for j, c in enumerate(cols):
    d.text((j * cw + 4, 2), c, fill="black")
for i, rgb in enumerate(rows):
    lab = rgb2lab(rgb / 255.0)
    H, W = lab.shape[:2]
    cells = [np.dstack([lab[..., 0], np.zeros((H, W, 2))])]
    for _, s in sess:
        cells.append(np.dstack([lab[..., 0], predict(s, lab[..., 0].astype(np.float32))]))
    cells.append(lab)
    for j, c in enumerate(cells):
        im = Image.fromarray((np.clip(lab2rgb(c), 0, 1) * 255 + 0.5).astype(np.uint8)).resize((cw, ch), Image.BILINEAR)
        img.paste(im, (j * cw, 16 + i * ch))
img.convert("P", palette=Image.ADAPTIVE, colors=256).save(out, optimize=True)
print("wrote", out)
