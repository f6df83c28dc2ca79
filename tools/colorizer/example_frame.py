#!/usr/bin/env python3
"""One webcam frame before/after for the README: grey input | colorized | original, side by side.

Usage (repo root):
  .venv-tools/bin/python tools/colorizer/example_frame.py models/colorizer/colorizer.onnx \
      ../shared/media/webcam/want.mkv 30 models/colorizer/webcam_example.png
"""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw
from skimage.color import lab2rgb, rgb2lab

from metrics import decode_clip, predict, session  # beside this file


def main(model, clip, index, out, width=320):
    f = decode_clip(clip)[int(index)]
    lab = rgb2lab(f / 255.0)
    ab = predict(session(model, 1), lab[..., 0].astype(np.float32))
    ims = [lab2rgb(np.concatenate([lab[..., :1], np.zeros_like(ab)], -1)),
           lab2rgb(np.concatenate([lab[..., :1], ab], -1)), f / 255.0]
    h = round(f.shape[0] * width / f.shape[1])
    canvas = Image.new("RGB", (3 * width + 8, h + 20), (255, 255, 255))
    d = ImageDraw.Draw(canvas)
    for i, (im, t) in enumerate(zip(ims, ("grey (input)", "colorized", "original"))):
        pil = Image.fromarray((np.clip(im, 0, 1) * 255 + 0.5).astype(np.uint8)).resize((width, h), Image.LANCZOS)
        canvas.paste(pil, (i * (width + 4), 20))
        d.text((i * (width + 4) + 4, 4), t, fill=(0, 0, 0))
    canvas.save(out, optimize=True)
    print(out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main(*sys.argv[1:5])
