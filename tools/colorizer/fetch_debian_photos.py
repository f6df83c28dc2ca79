#!/usr/bin/env python3
"""Real photographs from Debian packages, for the colorizer's training and validation (issue 46).

The set is fixed by `debian_photos.json` (committed beside this file): for each file its package and
version, its path inside the package, its SHA-256, its licence and copyright line (from the package's
/usr/share/doc/PKG/copyright, DEP-5: the last paragraph whose Files pattern matches), and its split:
  * "train"      - trained on (plasma-workspace-wallpapers, mate-backgrounds, opencv-doc's sample photos
                   and frames of its sample video vtest.avi);
  * "validation" - never trained on; used only to choose (the lomiri-wallpapers-16.04 / -20.04 photos,
                   added to the BSDS500 val photos as validation places).
The evaluation places of places.py are not touched. The split is by package, so no place is in two sets.

Selection rule (written 2026-12-04 before any training with these files): from every image file of the
packages (one file per wallpaper: the largest landscape rendition), keep a file only if
  1. by eye on a contact sheet it is ONE camera photograph of a real scene: no 3D render, vector or
     low-poly art, painting, illustration, logo, text, user interface, diagram or test pattern; no collage;
     no synthetic test image; when in doubt, not kept;
  2. it is not a near-duplicate of a kept file (stereo / sequence pairs of one scene: the first kept);
  3. it is in colour: mean Lab chroma >= 2 over the picture (greyscale photos teach no colour).
Photos are stored pre-resized (they travel to the GPU machine in a 64 MiB carry): training photos
stretched to 512x384 (landscape) or 384x512 (portrait), as the network stretches its input to a square
anyway; validation photos with their aspect kept, the long side 640. JPEG quality 92, 4:4:4.

Usage (repo root):
  tools/colorizer/fetch_debian_photos.py --out .colorizer-carry/debian        # apt-get download + dpkg -x + check + resize
  tools/colorizer/fetch_debian_photos.py --out DIR --debs DIR_WITH_DEBS        # .deb files already downloaded
Nothing is installed; the photos themselves are never committed.
"""
import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

from fgtools.hashing import sha256_file

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "debian_photos.json")
TRAIN_SIZE = (512, 384)
VAL_LONG = 640


def dep5_licence(copyright_path, src):
    """(licence, copyright) of the last DEP-5 paragraph whose Files pattern matches `src`, the file's path in the
    package's SOURCE tree (as the copyright file names it; installed paths differ)."""
    text = open(copyright_path, encoding="utf-8", errors="replace").read()
    best = None
    for para in text.split("\n\n"):
        fields, key = {}, None
        for line in para.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, v = line.split(":", 1)
                fields[key] = v.strip()
        if "Files" not in fields:
            continue
        if any(fnmatch.fnmatch(src, p) for p in fields["Files"].split()):
            best = (fields.get("License", "").split("\n")[0], " / ".join(fields.get("Copyright", "").split("\n")))
    return best or ("", "")


def mean_chroma(rgb):
    from skimage.color import rgb2lab
    small = np.asarray(Image.fromarray(rgb).resize((256, 256), Image.BILINEAR), np.float64) / 255.0
    lab = rgb2lab(small)
    return float(np.hypot(lab[..., 1], lab[..., 2]).mean())


def video_frames(path, every):
    """Every `every`-th frame (uint8 RGB) of a video: ffmpeg CLI, else OpenCV."""
    if shutil.which("ffmpeg"):
        probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "stream=width,height", "-of", "csv=p=0", path], check=True, stdout=subprocess.PIPE,
                               text=True).stdout.strip()
        w, h = (int(v) for v in probe.split(",")[:2])
        raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-vsync", "0",
                              "-"], check=True, stdout=subprocess.PIPE).stdout
        fr = np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)
        return [(i, fr[i]) for i in range(0, len(fr), every)]
    import cv2
    cap, out, i = cv2.VideoCapture(path), [], 0
    while True:
        ok, f = cap.read()
        if not ok:
            break
        if i % every == 0:
            out.append((i, cv2.cvtColor(f, cv2.COLOR_BGR2RGB)))
        i += 1
    return out


def save(rgb, path, split):
    im = Image.fromarray(rgb)
    if split == "train":
        size = TRAIN_SIZE if im.width >= im.height else TRAIN_SIZE[::-1]
        im = im.resize(size, Image.LANCZOS)
    else:
        s = VAL_LONG / max(im.size)
        im = im.resize((round(im.width * s), round(im.height * s)), Image.LANCZOS)
    im.save(path, quality=92, subsampling=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="writes OUT/train/*.jpg, OUT/validation/*.jpg, OUT/index.json")
    ap.add_argument("--debs", help="folder with the .deb files (default: apt-get download into a temporary folder)")
    ap.add_argument("--manifest", default=MANIFEST)
    a = ap.parse_args()
    man = json.load(open(a.manifest))
    tmp = tempfile.mkdtemp(prefix="debphotos-")
    debs = a.debs or os.path.join(tmp, "debs")
    os.makedirs(debs, exist_ok=True)
    index, bad = [], 0
    for pkg, ver in sorted(man["packages"].items()):
        deb = [f for f in os.listdir(debs) if f.startswith(pkg + "_") and f.endswith(".deb")]
        if not deb:
            subprocess.run(["apt-get", "download", f"{pkg}={ver}"], cwd=debs, check=True)
            deb = [f for f in os.listdir(debs) if f.startswith(pkg + "_") and f.endswith(".deb")]
        got = subprocess.run(["dpkg-deb", "-f", os.path.join(debs, deb[0]), "Version"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.strip()
        if got != ver:
            sys.exit(f"{pkg}: version {got}, the manifest wants {ver}")
        root = os.path.join(tmp, pkg)
        subprocess.run(["dpkg", "-x", os.path.join(debs, deb[0]), root], check=True)
        for e in (e for e in man["files"] if e["package"] == pkg):
            src = os.path.join(root, e["path"])
            if sha256_file(src) != e["sha256"]:
                print(f"SHA-256 mismatch: {pkg} {e['path']}")
                bad += 1
                continue
            d = os.path.join(a.out, e["split"])
            os.makedirs(d, exist_ok=True)
            stem = e["name"]
            if "every" in e:                      # a video: every Nth frame
                for i, f in video_frames(src, e["every"]):
                    save(f, os.path.join(d, f"{stem}_{i:04d}.jpg"), e["split"])
                    index.append(dict(file=f"{e['split']}/{stem}_{i:04d}.jpg", source=e["path"], package=pkg, frame=i))
            else:
                save(np.asarray(Image.open(src).convert("RGB")), os.path.join(d, stem + ".jpg"), e["split"])
                index.append(dict(file=f"{e['split']}/{stem}.jpg", source=e["path"], package=pkg))
    shutil.rmtree(tmp, ignore_errors=True)
    json.dump(index, open(os.path.join(a.out, "index.json"), "w"), indent=0)
    n = {s: sum(1 for i in index if i["file"].startswith(s + "/")) for s in ("train", "validation")}
    tot = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(a.out) for f in fs)
    print(f"{n['train']} training and {n['validation']} validation pictures in {a.out} ({tot / 2**20:.1f} MiB); "
          f"{bad} SHA-256 mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
