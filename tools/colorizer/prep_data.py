#!/usr/bin/env python3
"""Prepare the colorizer's training data (the carry folder for the GPU machine).

Writes, under --out (default .colorizer-carry, git-ignored through .git/info/exclude):
  train/, val/                 copies of BSDS500 train (200 photos) and val (100 photos)
  webcam/train/<clip>/NNNN.jpg every frame of the training clips, resized to --size
  webcam/heldout/<clip>/NNNN.jpg every --heldout-step-th frame of the held-out clips (loss curves only)
  split.json                   which clips are where, frame counts, sizes

The webcam clips are split BY CLIP (never by frame): the held-out clips are listed in
tools/colorizer/webcam_split.json (committed), so training and metrics agree. Frames are decoded
with the ffmpeg CLI (raw RGB through a pipe, every frame, no frame-rate conversion), resized with
ffmpeg's area filter, and stored as JPEG quality 92 without chroma subsampling (4:4:4) so the
stored colour is close to the decoded frame. Augmentations are NOT baked in: they are done on the
GPU by train.py for every batch (white balance, exposure/gamma, sensor noise, JPEG-like block
quantisation, blur/rescale, crops and scale, flips).

Usage (from the repo root; ../shared is the shared data folder beside the repo):
  taskset -c 1 .venv-tools/bin/python tools/colorizer/prep_data.py
  du -sh .colorizer-carry      # must stay under 64 MiB (the device machine's carry limit)
"""
import argparse
import json
import os
import shutil
import subprocess

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def decode(path, w, h):
    """All frames of a video as uint8 [N,h,w,3] (ffmpeg CLI, area resize; OpenCV's decoder where there is no
    ffmpeg CLI, as on the GPU machine)."""
    if shutil.which("ffmpeg") is None:
        import cv2
        cap, out = cv2.VideoCapture(path), []
        while True:
            ok, f = cap.read()
            if not ok:
                break
            out.append(cv2.resize(cv2.cvtColor(f, cv2.COLOR_BGR2RGB), (w, h), interpolation=cv2.INTER_AREA))
        return np.stack(out)
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-vf", f"scale={w}:{h}:flags=area", "-f", "rawvideo",
           "-pix_fmt", "rgb24", "-vsync", "0", "-"]
    raw = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webcam", default="../shared/media/webcam", help="folder of the webcam clips (*.mkv)")
    ap.add_argument("--bsds", default="../shared/data/bsds500", help="BSDS500 folder with train/ and val/")
    ap.add_argument("--split", default=os.path.join(HERE, "webcam_split.json"))
    ap.add_argument("--out", default=".colorizer-carry")
    ap.add_argument("--size", default="384x288", help="stored frame size WxH (the clips are 640x480)")
    ap.add_argument("--quality", type=int, default=92)
    ap.add_argument("--heldout-step", type=int, default=2, help="keep every Nth frame of the held-out clips")
    ap.add_argument("--val-limit", type=int, default=0,
                    help="copy only the first N val photos (by name; train.py logs only the first 20): 20 leaves room "
                         "in the 64 MiB carry for the EfficientNet weights (effnet_weights.py); 0 = all 100")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    split = json.load(open(a.split))
    held = set(split["heldout"])
    os.makedirs(a.out, exist_ok=True)
    for part in ("train", "val"):
        dst = os.path.join(a.out, part)
        if not os.path.isdir(dst):
            shutil.copytree(os.path.join(a.bsds, part), dst)
        if part == "val" and a.val_limit:
            for n in sorted(f for f in os.listdir(dst) if f.lower().endswith((".jpg", ".jpeg", ".png")))[a.val_limit:]:
                os.remove(os.path.join(dst, n))
    wc = os.path.join(a.out, "webcam")
    if os.path.isdir(wc):
        shutil.rmtree(wc)
    clips = sorted(f[:-4] for f in os.listdir(a.webcam) if f.endswith(".mkv"))
    missing = held - set(clips)
    assert not missing, f"held-out clips not found: {missing}"
    info = dict(size=[w, h], quality=a.quality, heldout_step=a.heldout_step, train={}, heldout={})
    for c in clips:
        frames = decode(os.path.join(a.webcam, c + ".mkv"), w, h)
        part = "heldout" if c in held else "train"
        keep = range(0, len(frames), a.heldout_step) if part == "heldout" else range(len(frames))
        d = os.path.join(wc, part, c)
        os.makedirs(d)
        for i in keep:
            Image.fromarray(frames[i]).save(os.path.join(d, f"{i:04d}.jpg"), quality=a.quality, subsampling=0)
        info[part][c] = dict(frames=len(frames), stored=len(keep))
        print(f"{c:8s} {part:8s} {len(frames):4d} frames, stored {len(keep)}")
    json.dump(info, open(os.path.join(a.out, "split.json"), "w"), indent=1)
    tot = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(a.out) for f in fs)
    print(f"train clips {len(info['train'])} ({sum(v['frames'] for v in info['train'].values())} frames), "
          f"held-out clips {len(info['heldout'])}; {a.out}: {tot / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
