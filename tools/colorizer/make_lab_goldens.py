#!/usr/bin/env python3
"""Golden values for FrameGraph's Lab conversion, from scikit-image (the reference the colorizer was
trained with). Writes Tests/Golden/lab/:
  rgb2lab.f32  — 100 000 × (L, a, b) float32 = skimage.color.rgb2lab of the pixels below
  lab2rgb.u16  — 100 000 × (R, G, B) in 0…1 as uint16 (value × 65535, rounded) = skimage.color.lab2rgb
and lab.json (versions, sizes). The inputs are not stored: both sides generate them with the same
SplitMix64 sequence (seed i for pixel i):
  rgb2lab input: bytes 0,1,2 of splitmix64(i) as R, G, B (0…255), divided by 255
  lab2rgb input: L = byte0 / 255 × 100, a = byte1 − 128, b = byte2 − 128 (float32)
Run with the tools venv: .venv-tools/bin/python tools/colorizer/make_lab_goldens.py
"""
import json, os, warnings
import numpy as np
import skimage
from skimage import color

N = 100_000
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = os.path.join(root, "Tests/Golden/lab")

def splitmix64(i: np.ndarray) -> np.ndarray:
    z = (i.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))

def main():
    os.makedirs(out, exist_ok=True)
    with np.errstate(over="ignore"):
        z = splitmix64(np.arange(N, dtype=np.uint64))
    b = np.stack([(z >> np.uint64(8 * k)) & np.uint64(0xFF) for k in range(3)], axis=1).astype(np.float64)
    rgb = (b / 255.0).reshape(N, 1, 3)
    lab = color.rgb2lab(rgb).reshape(N, 3).astype(np.float32)
    lab.tofile(os.path.join(out, "rgb2lab.f32"))
    lab_in = np.stack([(b[:, 0] / 255.0 * 100.0).astype(np.float32), (b[:, 1] - 128).astype(np.float32),
                       (b[:, 2] - 128).astype(np.float32)], axis=1).reshape(N, 1, 3).astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # out-of-gamut and negative-Z warnings: skimage clips
        rgb_out = color.lab2rgb(lab_in).reshape(N, 3)
    np.round(rgb_out * 65535).astype("<u2").tofile(os.path.join(out, "lab2rgb.u16"))
    json.dump({"count": N, "scikit-image": skimage.__version__, "numpy": np.__version__,
               "generator": "splitmix64(i), bytes 0..2", "rgb2lab": "rgb2lab.f32 float32 L,a,b",
               "lab2rgb": "lab2rgb.u16 uint16 R,G,B = round(value * 65535)"},
              open(os.path.join(out, "lab.json"), "w"), indent=1)
    print("wrote", out, "L range", lab[:, 0].min(), lab[:, 0].max())

if __name__ == "__main__":
    main()
