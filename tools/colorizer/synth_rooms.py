#!/usr/bin/env python3
"""Procedural "rooms" with neutral walls, as extra training pictures for the colorizer (issue 46, model card "Tried (5)").

Why: every try so far ended with "the colour network needs training data with white and grey walls of many rooms and
lights"; the registries ship almost no indoor photos. So we draw rooms whose walls, ceilings and doors are neutral
(true Lab chroma < 3 before the training augmentation), lit in many ways, and put REAL coloured content in them:
people cut from the training office clips (MediaPipe's selfie mask), pictures and objects cut from the training photos
(BSDS500 train without its 20 held-out photos, and the Debian training photos of fetch_debian_photos.py), and floors
and furniture in wood, carpet, fabric and tile colours. The target a/b of a room is its own colour: neutral where it is
neutral, coloured where the content is. train.py adds the webcam look on top (--photo-aug webcam), to input and target.

A room (rendered at 2x, then area-downsampled to --size, JPEG 92 4:4:4 as prep_data.py stores frames):
  * geometry: a one-point perspective box (back wall, side walls, ceiling, floor) with a random vanishing point and
    back-wall rectangle, which may reach past the picture (a frontal wall behind a webcam user, a corridor, a corner);
    perspective-correct coordinates on every plane drive the textures;
  * walls/ceiling: one neutral paint per room (L* 45-97, a/b tint of chroma <= 2.5; sometimes a second neutral paint
    on one wall), each plane at its own brightness (light from one side), a smooth light gradient, lamp glows, darker
    corners (ambient occlusion), plaster/orange-peel texture, sensor-like grain; sometimes a grey concrete wall;
  * floor: wood planks (browns, honey, grey-washed), carpet (a random colour, often muted), grey/beige tiles, or
    grey concrete, in perspective; skirting boards in white or wood;
  * on the walls: doors (white/grey, or wood) with frames and handles, windows (bright glow with a halo, sometimes a
    view: a training photo's crop), framed pictures (training photo crops), light switches, sockets, radiators;
  * in front: furniture boxes (fabric sofas of any colour, wood tables and shelves with coloured books), objects
    (irregular cut-outs of training photos), 0-2 people from the training clips (bottom-anchored, 45-115 % of the
    height), with soft shadows.
Nothing of the validation or evaluation places is used (BSDS500 val, lomiri wallpapers, places.py's photos and the
hallway clip). The design was made knowing the failure the model card shows (white walls, wooden floor) - from
general knowledge of rooms, never from those pictures' pixels.

Usage (repo root; the carry folder from prep_data.py and fetch_debian_photos.py):
  .venv-tools/bin/python tools/colorizer/synth_rooms.py people --webcam .colorizer-carry/webcam/train \
      --segmenter models/cache/selfie_segmentation.onnx --out .colorizer-carry/people.npz
  .venv-tools/bin/python tools/colorizer/synth_rooms.py rooms --n 300 --seed 46 --photos .colorizer-carry/train \
      --photos .colorizer-carry/debian/train --people .colorizer-carry/people.npz --out .colorizer-carry/rooms
"""
import argparse
import json
import os
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from scipy import ndimage
from skimage.color import lab2rgb, rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))
NUM_HOLDOUT = 20   # train.py holds out the last 20 BSDS500 train photos (by name): never used here


def to_lin(c):
    c = np.asarray(c, np.float32)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def to_srgb(c):
    c = np.clip(c, 0, 1)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)


def lab_lin(L, a, b):
    """One Lab colour -> linear RGB (3,)."""
    return to_lin(lab2rgb(np.array([[[L, a, b]]], np.float64))[0, 0])


def neutral_paint(rng, lo=45, hi=97):
    L = rng.uniform(lo, hi) if rng.random() < 0.35 or hi <= 80 else rng.uniform(max(lo, 80), hi)   # mostly white/off-white
    ch = rng.uniform(0, 2.5)
    h = rng.uniform(0, 2 * np.pi)
    return lab_lin(L, ch * np.cos(h), ch * np.sin(h))


def smooth_noise(rng, shape, scale, amp):
    """Gaussian-ish value noise of feature size `scale` px, std about amp."""
    h, w = shape
    sh, sw = max(2, int(h / scale) + 3), max(2, int(w / scale) + 3)
    z = rng.standard_normal((sh, sw)).astype(np.float32)
    up = ndimage.zoom(z, (h / (sh - 2), w / (sw - 2)), order=3)[:h, :w]
    if up.shape != (h, w):
        up = np.pad(up, ((0, h - up.shape[0]), (0, w - up.shape[1])), mode="edge")
    return up * amp / max(float(up.std()), 1e-6)


def crop_photo(rng, photos, w, h):
    """A random crop of a random training photo, resized to (w, h): float linear RGB [h,w,3]."""
    im = photos[rng.integers(len(photos))]
    H, W = im.shape[:2]
    s = rng.uniform(0.3, 1.0)
    cw, ch = max(8, int(W * s)), max(8, int(H * s))
    x0, y0 = rng.integers(0, W - cw + 1), rng.integers(0, H - ch + 1)
    c = Image.fromarray(im[y0:y0 + ch, x0:x0 + cw]).resize((max(1, int(w)), max(1, int(h))), Image.BILINEAR)
    return to_lin(np.asarray(c, np.float32) / 255.0)


def paste(img, src, x, y, alpha=None):
    """Alpha-composite src [h,w,3] (alpha [h,w] in 0..1) onto img at (x, y), clipped to the picture."""
    H, W = img.shape[:2]
    h, w = src.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(W, x + w), min(H, y + h)
    if x1 <= x0 or y1 <= y0:
        return np.zeros(img.shape[:2], bool)
    s = src[y0 - y:y1 - y, x0 - x:x1 - x]
    a = np.ones(s.shape[:2], np.float32) if alpha is None else alpha[y0 - y:y1 - y, x0 - x:x1 - x]
    img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * (1 - a[..., None]) + s * a[..., None]
    m = np.zeros(img.shape[:2], np.float32)
    m[y0:y1, x0:x1] = a
    return m


def poly_mask(shape, pts, blur=0):
    im = Image.new("L", (shape[1], shape[0]), 0)
    ImageDraw.Draw(im).polygon([tuple(map(float, p)) for p in pts], fill=255)
    if blur:
        im = im.filter(ImageFilter.GaussianBlur(blur))
    return np.asarray(im, np.float32) / 255.0


def wood_colour(rng):
    kind = rng.random()
    if kind < 0.7:    # brown/honey/orange wood
        return lab_lin(rng.uniform(30, 68), rng.uniform(6, 22), rng.uniform(14, 40))
    if kind < 0.85:   # grey-washed / white-washed
        return lab_lin(rng.uniform(50, 80), rng.uniform(0, 5), rng.uniform(3, 12))
    return lab_lin(rng.uniform(18, 35), rng.uniform(3, 12), rng.uniform(5, 18))   # dark wood


def fabric_colour(rng):
    if rng.random() < 0.4:
        return lab_lin(rng.uniform(25, 75), rng.uniform(-4, 4), rng.uniform(-4, 4))    # grey/black/beige-ish fabric
    L, ch, hh = rng.uniform(25, 75), rng.uniform(10, 55), rng.uniform(0, 2 * np.pi)
    return lab_lin(L, ch * np.cos(hh), ch * np.sin(hh))


def room(rng, photos, people, W, H):
    """One synthetic room, float linear RGB [H,W,3] (render size)."""
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    # ---- geometry: one-point box; back wall [bx0,bx1]x[by0,by1] around the vanishing point (vx, vy)
    vx, vy = rng.uniform(0.25, 0.75) * W, rng.uniform(0.3, 0.62) * H
    frontal = rng.random() < 0.3           # a wall filling most of the picture (webcam against a wall)
    if frontal:
        Lx, Rx = rng.uniform(0.5, 1.6) * W, rng.uniform(0.5, 1.6) * W
        Ty, By = rng.uniform(0.4, 1.2) * H, rng.uniform(0.3, 0.9) * H
    else:
        Lx, Rx = rng.uniform(0.05, 0.6) * W, rng.uniform(0.05, 0.6) * W
        Ty, By = rng.uniform(0.08, 0.5) * H, rng.uniform(0.08, 0.45) * H
    dx, dy = xx - vx, yy - vy
    rx = np.where(dx > 0, dx / Rx, -dx / Lx)
    ry = np.where(dy > 0, dy / By, -dy / Ty)
    t = np.maximum(np.maximum(rx, ry), 1e-3)               # 1 on the back wall's border, larger nearer the camera
    plane = np.where(t <= 1.0, 0, np.where(rx > ry, np.where(dx > 0, 2, 1), np.where(dy > 0, 4, 3)))  # 0 back,1 L,2 R,3 ceil,4 floor
    # plane coordinates (perspective-correct): u across, v in depth (1/t: 1 at the back wall, small near the camera)
    inv = 1.0 / t
    u = np.select([plane == 0, (plane == 1) | (plane == 2), plane >= 3],
                  [dx / W, dy / np.maximum(np.abs(dx), 1) * (Lx + Rx) / 2 / W, dx / np.maximum(np.abs(dy), 1) * (Ty + By) / 2 / W])
    v = np.select([plane == 0, plane != 0], [dy / W, inv])
    # ---- surfaces
    paint = neutral_paint(rng)
    img = np.empty((H, W, 3), np.float32)
    img[:] = paint
    bright = {0: 1.0, 1: rng.uniform(0.45, 1.1), 2: rng.uniform(0.45, 1.1), 3: rng.uniform(0.55, 1.05), 4: 1.0}
    ceiling = neutral_paint(rng, 85, 98)
    img[plane == 3] = ceiling
    if rng.random() < 0.3:      # a second neutral paint (or grey concrete) on one wall
        w2 = int(rng.choice([0, 1, 2]))
        img[plane == w2] = neutral_paint(rng, 35, 95)
    texture = 1 + smooth_noise(rng, (H, W), rng.uniform(2, 6), rng.uniform(0.004, 0.02)) \
        + smooth_noise(rng, (H, W), rng.uniform(20, 80), rng.uniform(0.0, 0.03))
    img *= texture[..., None]
    # floor
    fm = plane == 4
    kind = rng.choice(["wood", "wood", "wood", "carpet", "tile", "concrete"])
    if kind == "wood":
        base = wood_colour(rng)
        nplank = rng.uniform(6, 25)
        pu = u * nplank
        pid = np.floor(pu)
        off = (np.sin(pid * 12.9898) * 43758.5453) % 1.0
        plen = rng.uniform(0.15, 0.5)
        seg = np.floor(v / plen + off * 7)
        var = 1 + 0.12 * (((np.sin(pid * 78.233 + seg * 19.19) * 12345.678) % 1.0) - 0.5)
        grain = 1 + 0.06 * np.sin(pu * 40 + 3 * np.sin(v * 50 + pid)) + 0.03 * np.sin(v * 300 + pid * 5)
        gap = 1 - 0.35 * (np.abs(pu - np.round(pu)) < 0.03 / max(nplank * 0.03, 0.3))
        fl = base[None, None] * (var * grain * gap)[..., None]
    elif kind == "carpet":
        fl = fabric_colour(rng)[None, None] * (1 + smooth_noise(rng, (H, W), 1.5, 0.06))[..., None]
    elif kind == "tile":
        base = neutral_paint(rng, 50, 92) if rng.random() < 0.6 else lab_lin(rng.uniform(55, 85), rng.uniform(0, 6), rng.uniform(4, 16))
        n = rng.uniform(3, 10)
        gu, gv = np.abs(u * n - np.round(u * n)), np.abs(v * n * 0.5 - np.round(v * n * 0.5))
        fl = base[None, None] * (1 - 0.3 * ((gu < 0.03) | (gv < 0.03 * v.clip(0.2, 5))))[..., None]
    else:
        fl = neutral_paint(rng, 35, 70)[None, None] * (1 + smooth_noise(rng, (H, W), 6, 0.05))[..., None]
    img[fm] = fl[fm]
    # skirting board along the floor line
    if rng.random() < 0.6:
        sk = (plane != 4) & (plane != 3) & (dy > 0) & (np.where(plane == 0, (dy / By) > 0.96, np.abs(ry / np.maximum(rx, 1e-3) - 1) < 0.04))
        img[sk] = neutral_paint(rng, 80, 97) if rng.random() < 0.6 else wood_colour(rng)
    # ---- light: plane brightness, gradient, lamps, corner darkening
    light = np.vectorize(bright.get)(plane).astype(np.float32)
    g = rng.uniform(-0.5, 0.5, 2)
    light *= 1 + g[0] * (xx / W - 0.5) + g[1] * (yy / H - 0.5)
    for _ in range(rng.integers(0, 3)):
        lx, ly, ls = rng.uniform(0, W), rng.uniform(-0.2 * H, 0.7 * H), rng.uniform(0.15, 0.6) * W
        light += rng.uniform(0.1, 0.6) * np.exp(-((xx - lx) ** 2 + (yy - ly) ** 2) / (2 * ls ** 2))
    edge = np.where(plane == 0, 1 - np.maximum(rx, ry), np.minimum(np.abs(rx - ry) / t, t - 1))   # distance to a room edge
    ao = np.exp(-np.maximum(edge, 0) / 0.05)
    light *= 1 - rng.uniform(0.05, 0.25) * ao
    # ---- things on the walls (2D, at the back wall or near it)
    def on_wall_rect(w, h, y_bottom=None):
        x = rng.uniform(0.02, 0.98) * W - w / 2
        y = (y_bottom - h) if y_bottom is not None else rng.uniform(0.1, 0.6) * H - h / 2
        return int(x), int(y)
    floor_y = vy + By if not frontal else vy + By
    nwin = rng.integers(0, 3)
    for _ in range(nwin):     # windows: bright glow with a halo, sometimes a view
        ww, wh = rng.uniform(0.1, 0.35) * W, rng.uniform(0.15, 0.45) * H
        x, y = on_wall_rect(ww, wh)
        glow = rng.uniform(1.3, 3.0)
        if rng.random() < 0.4 and photos:
            view = crop_photo(rng, photos, ww, wh) * rng.uniform(0.8, 1.6) + rng.uniform(0.2, 0.6)
        else:
            view = np.ones((int(wh), int(ww), 3), np.float32) * glow * neutral_paint(rng, 90, 100) / 0.9
        m = paste(img, view, x, y)
        halo = ndimage.gaussian_filter(m, rng.uniform(0.05, 0.15) * W)
        light += rng.uniform(0.3, 1.2) * halo * (1 - m)
        fw = max(2, int(rng.uniform(0.006, 0.02) * W))   # frame and mullion
        fc = neutral_paint(rng, 70, 98) if rng.random() < 0.8 else wood_colour(rng)
        for r in ([x - fw, y - fw, ww + 2 * fw, fw], [x - fw, y + wh, ww + 2 * fw, fw], [x - fw, y, fw, wh], [x + ww, y, fw, wh],
                  [x + ww / 2 - fw / 2, y, fw, wh]):
            paste(img, np.broadcast_to(fc, (max(1, int(r[3])), max(1, int(r[2])), 3)).astype(np.float32), int(r[0]), int(r[1]))
    for _ in range(rng.integers(0, 3)):   # doors
        dw, dh = rng.uniform(0.12, 0.3) * W, rng.uniform(0.4, 0.8) * H
        x, y = on_wall_rect(dw, dh, y_bottom=min(H, floor_y + rng.uniform(0, 0.1) * H))
        dc = neutral_paint(rng, 55, 97) if rng.random() < 0.65 else wood_colour(rng)
        door = np.broadcast_to(dc, (int(dh), int(dw), 3)).astype(np.float32) * (1 + smooth_noise(rng, (int(dh), int(dw)), 3, 0.01))[..., None]
        paste(img, door, x, y)
        fw = max(2, int(0.012 * W))
        fr = neutral_paint(rng, 70, 98)
        for r in ([x - fw, y - fw, dw + 2 * fw, fw], [x - fw, y, fw, dh], [x + dw, y, fw, dh]):
            paste(img, np.broadcast_to(fr, (max(1, int(r[3])), max(1, int(r[2])), 3)).astype(np.float32), int(r[0]), int(r[1]))
        hc = lab_lin(rng.uniform(20, 80), 0, rng.uniform(0, 10))
        paste(img, np.broadcast_to(hc, (max(2, int(0.015 * H)), max(3, int(0.05 * dw * 1.5)), 3)).astype(np.float32),
              int(x + dw * (0.8 if rng.random() < 0.5 else 0.1)), int(y + dh * 0.5))
    for _ in range(rng.integers(0, 4)):   # framed pictures
        if not photos:
            break
        pw, ph = rng.uniform(0.06, 0.25) * W, rng.uniform(0.06, 0.25) * H
        x, y = on_wall_rect(pw, ph)
        fw = max(2, int(rng.uniform(0.004, 0.015) * W))
        fc = [neutral_paint(rng, 10, 30), neutral_paint(rng, 85, 98), wood_colour(rng)][rng.integers(3)]
        paste(img, np.broadcast_to(fc, (int(ph) + 2 * fw, int(pw) + 2 * fw, 3)).astype(np.float32), x - fw, y - fw)
        paste(img, crop_photo(rng, photos, pw, ph), x, y)
    for _ in range(rng.integers(0, 4)):   # switches, sockets, radiators (neutral)
        if rng.random() < 0.7:
            s = int(rng.uniform(0.015, 0.035) * W)
            x, y = on_wall_rect(s, s)
            paste(img, np.broadcast_to(neutral_paint(rng, 85, 99), (s, s, 3)).astype(np.float32), x, y)
        else:
            rw, rh = int(rng.uniform(0.15, 0.4) * W), int(rng.uniform(0.1, 0.2) * H)
            x, y = on_wall_rect(rw, rh, y_bottom=floor_y - 0.03 * H)
            rad = np.broadcast_to(neutral_paint(rng, 80, 97), (rh, rw, 3)).astype(np.float32) * \
                (1 - 0.25 * (np.sin(np.arange(rw) / max(2, rw / 20) * np.pi) ** 8))[None, :, None]
            paste(img, rad, x, y)
    # ---- in front: furniture, objects, people, with soft shadows
    shadow = np.zeros((H, W), np.float32)
    for _ in range(rng.integers(0, 4)):
        fw_, fh_ = rng.uniform(0.15, 0.55) * W, rng.uniform(0.12, 0.4) * H
        x, yb = int(rng.uniform(-0.1, 0.9) * W), int(min(H + 0.1 * H, floor_y + rng.uniform(0, 0.5) * H))
        y = int(yb - fh_)
        kind = rng.random()
        col = fabric_colour(rng) if kind < 0.45 else (wood_colour(rng) if kind < 0.8 else neutral_paint(rng, 30, 97))
        front = np.broadcast_to(col, (int(fh_), int(fw_), 3)).astype(np.float32) * \
            (1 + smooth_noise(rng, (int(fh_), int(fw_)), 2 if kind < 0.45 else 8, 0.04))[..., None] * rng.uniform(0.6, 0.95)
        if kind >= 0.45 and rng.random() < 0.4:     # shelves with books
            for _b in range(rng.integers(5, 30)):
                bw, bh = rng.uniform(0.02, 0.08) * fw_, rng.uniform(0.25, 0.45) * fh_
                bx, by = rng.uniform(0, fw_ - bw), rng.choice([0.05, 0.55]) * fh_
                front[int(by):int(by + bh), int(bx):int(bx + bw)] = fabric_colour(rng)
        top_h = int(rng.uniform(0.02, 0.12) * H)
        shadow = np.maximum(shadow, poly_mask((H, W), [(x - 10, yb), (x + fw_ + 25, yb), (x + fw_ + 40, yb + 0.04 * H), (x + 5, yb + 0.04 * H)], blur=0.02 * W))
        paste(img, np.minimum(front * 1.2, 4), x, y - top_h)       # top face (lighter)
        paste(img, front, x, y)
    for _ in range(rng.integers(0, 4)):    # objects: irregular cut-outs of training photos
        if not photos:
            break
        ow, oh = int(rng.uniform(0.06, 0.3) * W), int(rng.uniform(0.06, 0.3) * H)
        src = crop_photo(rng, photos, ow, oh)
        n = rng.integers(5, 10)
        ang = np.sort(rng.uniform(0, 2 * np.pi, n))
        rad = rng.uniform(0.6, 1.0, n)
        pts = [(ow / 2 * (1 + r * np.cos(q)), oh / 2 * (1 + r * np.sin(q))) for r, q in zip(rad, ang)]
        al = poly_mask((oh, ow), pts, blur=1)
        paste(img, src, int(rng.uniform(-0.05, 0.95) * W), int(rng.uniform(0.2, 0.95) * H), al)
    light = light * (1 - rng.uniform(0.2, 0.5) * shadow)
    img *= light[..., None]
    if people is not None and len(people["rgb"]) and rng.random() < 0.6:
        for _ in range(rng.integers(1, 3)):
            i = rng.integers(len(people["rgb"]))
            prgb, pa = people["rgb"][i], people["alpha"][i]
            s = rng.uniform(0.45, 1.15) * H / prgb.shape[0]
            pw_, ph_ = max(4, int(prgb.shape[1] * s)), max(4, int(prgb.shape[0] * s))
            pr = to_lin(np.asarray(Image.fromarray(prgb).resize((pw_, ph_), Image.BILINEAR), np.float32) / 255.0)
            pal = np.asarray(Image.fromarray(pa).resize((pw_, ph_), Image.BILINEAR), np.float32) / 255.0
            if rng.random() < 0.5:
                pr, pal = pr[:, ::-1], pal[:, ::-1]
            x = int(rng.uniform(-0.2, 0.9) * W)
            y = H - ph_ + int(rng.uniform(0, 0.15) * ph_)
            sh = ndimage.gaussian_filter(pal, 6)       # a soft shadow of the person on the wall behind, a little aside
            ox = int(rng.uniform(-0.05, 0.05) * W)
            dim = np.zeros((H, W), np.float32)
            x0, y0, x1, y1 = max(0, x + ox), max(0, y), min(W, x + ox + pw_), min(H, y + ph_)
            if x1 > x0 and y1 > y0:
                dim[y0:y1, x0:x1] = sh[y0 - y:y1 - y, x0 - x - ox:x1 - x - ox]
            img *= (1 - rng.uniform(0.1, 0.35) * dim)[..., None]
            paste(img, pr * rng.uniform(0.7, 1.15), x, y, pal)
    img *= rng.uniform(0.55, 1.0)              # exposure
    return img


def load_photos(dirs):
    out = []
    for d in dirs:
        names = sorted(f for f in os.listdir(d) if f.lower().endswith((".jpg", ".jpeg", ".png")))
        if os.path.basename(os.path.normpath(d)) == "train" and len(names) == 200:   # BSDS500 train: drop train.py's held-out 20
            names = names[:-NUM_HOLDOUT]
        out += [np.asarray(Image.open(os.path.join(d, n)).convert("RGB")) for n in names]
    return out


def cmd_people(a):
    sys.path.insert(0, HERE)
    from metrics import Segmenter
    seg = Segmenter(a.segmenter)
    rgbs, alphas, src = [], [], []
    for clip in sorted(os.listdir(a.webcam)):
        names = sorted(os.listdir(os.path.join(a.webcam, clip)))[::a.step]
        for n in names:
            fr = np.asarray(Image.open(os.path.join(a.webcam, clip, n)).convert("RGB"))
            x = np.asarray(Image.fromarray(fr).resize(seg.size, Image.BILINEAR), np.float32)[None] / 255.0
            seg.it.set_tensor(seg.inp["index"], x)
            seg.it.invoke()
            m = np.asarray(Image.fromarray(seg.it.get_tensor(seg.out["index"])[0, ..., 0].astype(np.float32)).resize(
                (fr.shape[1], fr.shape[0]), Image.BILINEAR))
            m = np.clip((m - 0.3) / 0.4, 0, 1)           # soft edge around 0.5
            ys, xs = np.nonzero(m > 0.5)
            if len(ys) < 0.05 * m.size:
                continue
            y0, y1, x0, x1 = ys.min(), fr.shape[0], xs.min(), xs.max() + 1    # to the frame's bottom (a bust or a body)
            rgbs.append(fr[y0:y1, x0:x1])
            alphas.append((m[y0:y1, x0:x1] * 255).astype(np.uint8))
            src.append(f"{clip}/{n}")
    np.savez_compressed(a.out, rgb=np.array(rgbs, dtype=object), alpha=np.array(alphas, dtype=object), src=np.array(src))
    print(f"{len(rgbs)} people cut-outs from {a.webcam} -> {a.out}")


_G = {}


def _one(i):
    """Room i (its own generator seeded by (seed, i): the same picture whatever the number of workers)."""
    a, photos, people = _G["a"], _G["photos"], _G["people"]
    w, h = (int(v) for v in a.size.split("x"))
    img = room(np.random.default_rng([a.seed, i]), photos, people, 2 * w, 2 * h)
    im = Image.fromarray((to_srgb(img) * 255 + 0.5).astype(np.uint8)).resize((w, h), Image.BOX)
    im.save(os.path.join(a.out, f"room_{a.seed}_{i:04d}.jpg"), quality=92, subsampling=0)
    lab = rgb2lab(np.asarray(im, np.float64) / 255.0)
    return float((np.hypot(lab[..., 1], lab[..., 2]) < 4).mean())


def cmd_rooms(a):
    photos = load_photos(a.photos)
    people = None
    if a.people:
        z = np.load(a.people, allow_pickle=True)
        people = dict(rgb=list(z["rgb"]), alpha=list(z["alpha"]))
    w, h = (int(v) for v in a.size.split("x"))
    os.makedirs(a.out, exist_ok=True)
    _G.update(a=a, photos=photos, people=people)
    idx = range(a.first, a.first + a.n)
    if a.workers > 1:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(a.workers) as pool:
            stats = pool.map(_one, idx, chunksize=4)
    else:
        stats = [_one(i) for i in idx]
    json.dump(dict(n=a.n, first=a.first, seed=a.seed, size=[w, h], photos=[os.path.normpath(d) for d in a.photos], n_photos=len(photos),
                   people=len(people["rgb"]) if people else 0, neutral_share_mean=float(np.mean(stats))),
              open(os.path.join(a.out, "rooms.json"), "w"), indent=1)
    print(f"{a.n} rooms -> {a.out}; share of pixels with chroma < 4: {np.mean(stats):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("people")
    p.add_argument("--webcam", required=True, help="frames of the TRAINING office clips (prep_data.py's webcam/train)")
    p.add_argument("--segmenter", required=True, help="selfie_segmentation .onnx or .tflite")
    p.add_argument("--step", type=int, default=12)
    p.add_argument("--out", required=True)
    r = sub.add_parser("rooms")
    r.add_argument("--n", type=int, default=300)
    r.add_argument("--seed", type=int, default=46)
    r.add_argument("--first", type=int, default=0, help="index of the first room (rooms are seeded by (seed, index))")
    r.add_argument("--workers", type=int, default=1)
    r.add_argument("--photos", action="append", default=[], help="folders of TRAINING photos (content for windows, pictures, objects)")
    r.add_argument("--people", help="people.npz from the people step")
    r.add_argument("--size", default="384x288")
    r.add_argument("--out", required=True)
    a = ap.parse_args()
    (cmd_people if a.cmd == "people" else cmd_rooms)(a)


if __name__ == "__main__":
    main()
