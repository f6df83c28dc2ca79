#!/usr/bin/env python3
"""Places the colorizer was never trained on (issue 46): the held-out `places` evaluation and the validation places.

Selection rule (fixed before anything was measured, 2026-12-04):
  * EVALUATION places (never trained on, never used to choose anything):
    - photos: every colour photograph shipped inside the wheels of the pinned tools venv
      (tools/requirements-tools.txt): scikit-image's data (astronaut, chelsea, coffee, rocket),
      matplotlib's sample data (grace_hopper) and scikit-learn's sample images (china, flower). Each
      photo is one place, measured twice: as shipped ("photo") and with a fixed webcam look
      ("webcam look": see `webcam_look`, seeded by the place's name), since a webcam in a room
      looks like the second;
    - a clip: the hallway of ../shared/media/one-by-one-person-detection.mp4 (CC BY 4.0, the only
      shared clip not filmed in the training office), three windows of 60 frames (6 s at 10 fps)
      starting at 20 s, 60 s and 100 s, every frame of a window, the node's temporal smoothing on.
  * VALIDATION places (used to calibrate the chroma scale and choose the `vividness` default; never
    trained on, never in the evaluation): the 100 BSDS500 val photos (each its own place), each as
    shipped and with the webcam look.
  * Training: BSDS500 train and the training office clips only (prep_data.py), so no place is in two
    of the three sets.
Metrics per place (all at the place's full resolution, a/b from the model upsampled bilinearly):
  a/b RMSE vs all-grey's (ratio), colourfulness ratio (Hasler & Suesstrunk), skin-hued pixels kept
  (MediaPipe selfie mask > 0.5 and original skin-hued, as metrics.py's webcam test; only where >= 500
  such pixels), neutral cast (mean chroma of ours where the original is neutral: chroma < 4 and
  15 <= L <= 95; goal <= 5), and for clips flicker (mean |ab_t - ab_t-1| of ours vs the original's).
"""
import hashlib
import io
import math
import os
import subprocess

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

PHOTO_PLACES = [  # (place, package, how to find the file inside the installed package)
    ("astronaut", "skimage", "data/astronaut.png"),
    ("chelsea", "skimage", "data/chelsea.png"),
    ("coffee", "skimage", "data/coffee.png"),
    ("rocket", "skimage", "data/rocket.jpg"),
    ("grace_hopper", "matplotlib", "mpl-data/sample_data/grace_hopper.jpg"),
    ("china", "sklearn", "datasets/images/china.jpg"),
    ("flower", "sklearn", "datasets/images/flower.jpg"),
]
LICENCES = {
    "skimage": "scikit-image 0.26.0 data: astronaut (NASA, public domain), chelsea (CC0, Stefan van der Walt), "
               "coffee (CC0, Rachel Michetti), rocket (SpaceX, public domain)",
    "matplotlib": "matplotlib sample data: grace_hopper (US Navy photo, public domain)",
    "sklearn": "scikit-learn 1.9.1 sample images: china (CC BY 2.0, danielbuechele on Flickr), flower (CC BY 2.0, "
               "vultilion on Flickr), as in sklearn/datasets/images/README.txt",
}
CLIP = os.environ.get("COLORIZER_PLACES_CLIP", "../shared/media/one-by-one-person-detection.mp4")
CLIP_WINDOWS = [(20.0, 60), (60.0, 60), (100.0, 60)]   # (start s, frames)
VAL_DIR = os.environ.get("COLORIZER_VAL_DIR", "../shared/data/bsds500/val")


PLACES_DIR = os.environ.get("COLORIZER_PLACES_DIR")   # a copy of the files as DIR/<package>/<name> (GPU machine)


def package_file(package, rel):
    import importlib.util
    if PLACES_DIR:
        p = os.path.join(PLACES_DIR, package, os.path.basename(rel))
        if os.path.exists(p):
            return p
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    p = os.path.join(list(spec.submodule_search_locations)[0], rel)
    return p if os.path.exists(p) else None


def seed_of(name):
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def webcam_look(rgb_u8, name, size=None):
    """A fixed, seeded webcam look of a photo (uint8 RGB in and out): white-balance and exposure shift (low
    light), sensor noise with colour noise, lens vignetting, a little motion blur and JPEG compression."""
    rng = np.random.default_rng(seed_of(name))
    im = Image.fromarray(rgb_u8)
    if size:
        im = im.resize(size, Image.BILINEAR)
    x = np.asarray(im, np.float64) / 255.0
    H, W = x.shape[:2]
    lin = x ** 2.2
    wb = np.array([math.exp(rng.uniform(-0.15, 0.15)), 1.0, math.exp(rng.uniform(-0.15, 0.15))])
    gain = math.exp(rng.uniform(-1.2, -0.3))                       # 0.3-0.74x exposure
    yy, xx = np.mgrid[0:H, 0:W]
    r2 = ((xx - W / 2) / (W / 2)) ** 2 + ((yy - H / 2) / (H / 2)) ** 2
    vig = 1.0 - rng.uniform(0.2, 0.4) * r2 / 2.0
    lin = lin * wb * gain * vig[..., None]
    sig = rng.uniform(0.004, 0.012)
    lin = lin + rng.normal(0, 1, lin.shape) * sig * np.sqrt(np.clip(lin, 0, 1) + 0.01)   # per channel: colour noise
    x = np.clip(lin, 0, 1) ** (1 / 2.2)
    im = Image.fromarray((x * 255 + 0.5).astype(np.uint8))
    k = int(rng.integers(1, 4))                                    # horizontal motion blur over k px
    if k > 1:
        a = np.asarray(im, np.float32)
        im = Image.fromarray((sum(np.roll(a, i, 1) for i in range(k)) / k + 0.5).astype(np.uint8))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=int(rng.integers(35, 70)))
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


def eval_photos():
    """[(place, kind, rgb uint8)], both looks; missing packages are reported and skipped."""
    out = []
    for place, pkg, rel in PHOTO_PLACES:
        p = package_file(pkg, rel)
        if p is None:
            print(f"[places] {place}: {pkg}/{rel} not installed: skipped")
            continue
        rgb = np.asarray(Image.open(p).convert("RGB"))
        out.append((place, "photo", rgb))
        out.append((place, "webcam look", webcam_look(rgb, place)))
    return out


def val_photos(val_dir=VAL_DIR, limit=0):
    names = sorted(f for f in os.listdir(val_dir) if f.lower().endswith((".jpg", ".png")))
    if limit:
        names = names[:limit]
    out = []
    for n in names:
        rgb = np.asarray(Image.open(os.path.join(val_dir, n)).convert("RGB"))
        out.append((n, "photo", rgb))
        out.append((n, "webcam look", webcam_look(rgb, n)))
    return out


def clip_windows(path=CLIP):
    """{window name: frames uint8 [N,H,W,3]} of the hallway clip (ffmpeg CLI; OpenCV where there is none)."""
    import shutil
    if shutil.which("ffmpeg") is None:
        import cv2
        out = {}
        for start, n in CLIP_WINDOWS:
            cap = cv2.VideoCapture(path)
            fps = cap.get(cv2.CAP_PROP_FPS) or 10.0
            for _ in range(int(round(start * fps))):
                cap.grab()
            fr = []
            while len(fr) < n:
                ok, f = cap.read()
                if not ok:
                    break
                fr.append(cv2.cvtColor(f, cv2.COLOR_BGR2RGB))
            out[f"hallway@{start:g}s"] = np.stack(fr)
        return out
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", path], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    w, h = (int(v) for v in probe.split(",")[:2])
    out = {}
    for start, n in CLIP_WINDOWS:
        raw = subprocess.run(["ffmpeg", "-v", "error", "-ss", f"{start}", "-i", path, "-frames:v", str(n), "-f", "rawvideo",
                              "-pix_fmt", "rgb24", "-vsync", "0", "-"], check=True, stdout=subprocess.PIPE).stdout
        out[f"hallway@{start:g}s"] = np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)
    return out
