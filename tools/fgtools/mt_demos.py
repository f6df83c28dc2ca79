#!/usr/bin/env python3
"""MetalTensor example apps' pre- and post-processing (spec §10) and the spec's §11 checks.

  python tools/metaltensor/mt_demos.py check [--clip CLIP] [--time 0.5] [--precision fp32|fp16]
  python tools/metaltensor/mt_demos.py dump --clip FILE --time T --out DIR [--precision fp16]
                                            [--face-square X,Y,SIDE] [--fill clamp|grey]
  python tools/metaltensor/mt_demos.py overlay --clip FILE --time T --out PNG

`check` decodes again.mkv at t = 0.5 s (default: ../shared/media/webcam/again.mkv; the shared folder is
FRAMEGRAPH_SHARED or ../shared beside the repository) and prints the §11 checks.

`dump` writes, for one frame, every network input it built (DIR/<stage>.input.f32, raw float32 HWC),
the raw network outputs (DIR/<stage>.<output node>.f32) and DIR/results.json (crops, decoded boxes,
landmarks, the SHA-256 of the decoded RGB frame), so another implementation can be compared on the
very same input tensors. Stages: portrait (centre square -> 128), face_full (centre square -> 160, the
app flow), face_head (a square around the head: --face-square, or when the app flow finds no face a
search over half-size squares; not in the app), landmarks (crop from the first face box -> 96).

`overlay` renders the 68 points and the face box on the frame as a PNG (for looking at, not for
committing).

Needs numpy, Pillow (PNG reading for the Landmarks model, and `overlay`), the ffmpeg CLI, and
fgtools.mt_reference (installed by tools/setup-python.sh).
"""
import argparse
import hashlib
import json
import math
import os
import plistlib
import subprocess
import sys

import numpy as np

from fgtools import mt_reference as mtr

HERE = os.path.dirname(os.path.abspath(__file__))

REPO = os.path.dirname(os.path.dirname(HERE))


def shared_dir():
    return os.environ.get("FRAMEGRAPH_SHARED") or os.path.normpath(os.path.join(REPO, "..", "shared"))


def models_dir():
    return os.path.join(shared_dir(), "models", "metaltensor")


# ----------------------------------------------------------------------------------------------
# Frames and resampling

def decode_frame(clip, t):
    """RGB uint8 (H, W, 3) of the first frame at or after t seconds (ffmpeg CLI, accurate seek)."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height", "-of", "csv=p=0:s=x", clip],
                           capture_output=True, text=True)
    if probe.returncode != 0 or "x" not in probe.stdout:
        raise SystemExit(f"error: ffprobe cannot read {clip}: {probe.stderr.strip()}")
    w, h = (int(v) for v in probe.stdout.strip().split("\n")[0].split("x")[:2])
    r = subprocess.run(["ffmpeg", "-v", "error", "-ss", str(t), "-i", clip, "-frames:v", "1",
                        "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True)
    if r.returncode != 0 or len(r.stdout) != w * h * 3:
        raise SystemExit(f"error: ffmpeg could not decode a {w}x{h} frame at {t} s from {clip}: "
                         f"{r.stderr.decode(errors='replace').strip()}")
    return np.frombuffer(r.stdout, np.uint8).reshape(h, w, 3)


def resample(rgb_uint8, x0, y0, w, h, out_w, out_h, fill=None):
    """Crop [x0, x0+w) x [y0, y0+h) in continuous pixel coordinates (pixel k spans [k, k+1)) and resize
    to out_w x out_h like a GPU render pass: bilinear at pixel centres,
    src = x0 + (i + 0.5) * (w / out_w) - 0.5, no anti-aliasing.
    fill=None / "clamp": texels outside the frame repeat the edge (clamp-to-edge).
    fill="grey": texels outside the frame are 128 (the 0.5-grey clear colour, 127.5 rounded), and the
    bilinear weights mix them with the edge texels.
    Rounding to uint8: round half away from zero, i.e. floor(v + 0.5) on these non-negative values
    (computed in float64). Returns uint8 (out_h, out_w, C); divide by 255 for the network."""
    img = np.asarray(rgb_uint8)
    H, W = img.shape[:2]
    sx = x0 + (np.arange(out_w) + 0.5) * (w / out_w) - 0.5
    sy = y0 + (np.arange(out_h) + 0.5) * (h / out_h) - 0.5
    fx, fy = np.floor(sx), np.floor(sy)
    ax, ay = (sx - fx)[None, :, None], (sy - fy)[:, None, None]
    ix0, iy0 = fx.astype(np.int64), fy.astype(np.int64)
    ix1, iy1 = ix0 + 1, iy0 + 1
    f = img.astype(np.float64)

    def tex(iy, ix):
        v = f[np.clip(iy, 0, H - 1)][:, np.clip(ix, 0, W - 1)]
        if fill == "grey":
            inside = ((iy >= 0) & (iy < H))[:, None] & ((ix >= 0) & (ix < W))[None, :]
            v = np.where(inside[:, :, None], v, 128.0)
        elif fill not in (None, "clamp"):
            raise ValueError(f"fill must be None, 'clamp' or 'grey', not {fill!r}")
        return v

    out = ((1 - ay) * ((1 - ax) * tex(iy0, ix0) + ax * tex(iy0, ix1))
           + ay * ((1 - ax) * tex(iy1, ix0) + ax * tex(iy1, ix1)))
    return np.clip(np.floor(out + 0.5), 0, 255).astype(np.uint8)


def to_input(u8):
    """RGB/255 as float32 (§5.1)."""
    return (np.asarray(u8, np.float32) / np.float32(255.0)).astype(np.float32)


def centre_square(W, H):
    side = min(W, H)
    return ((W - side) / 2.0, (H - side) / 2.0, float(side), float(side))


# ----------------------------------------------------------------------------------------------
# Models

_MODELS = {}


def model(name):
    if name not in _MODELS:
        _MODELS[name] = mtr.load_model(os.path.join(models_dir(), name + ".plist"))
    return _MODELS[name]


def run_net(name, x, precision):
    return mtr.run(model(name), x, precision)


# ----------------------------------------------------------------------------------------------
# §10.1 PortraitSegmentNet

def portrait_postprocess(v):
    """m = clamp((clamp(v, 0.1, 0.9) - 0.1) / 0.8, 0, 1), evaluated in half precision like the app."""
    h = np.clip(np.asarray(v, np.float16), np.float16(0.1), np.float16(0.9))
    m = (h - np.float16(0.1)) / np.float16(0.8)
    return np.clip(m, np.float16(0), np.float16(1)).astype(np.float32)


def portrait(frame, precision="fp32"):
    H, W = frame.shape[:2]
    crop = centre_square(W, H)
    u8 = resample(frame, *crop, 128, 128)
    x = to_input(u8)
    raw = run_net("PortraitSegmentNet", x, precision)["output"]
    return {"crop": crop, "input": x, "raw": raw, "mask": portrait_postprocess(raw[:, :, 0])}


# ----------------------------------------------------------------------------------------------
# §10.2 RapidFaceDetect

def load_ssd_config(path=None):
    path = path or os.path.join(models_dir(), "RapidFaceDetectConfig.plist")
    with open(path, "rb") as f:
        d = mtr.strip_spaces(plistlib.load(f))

    def fl(key, default=None):
        v = d.get(key)
        return default if v is None else mtr.ns_float(v)

    def floats(v, sep=","):
        return [mtr.ns_float(x) for x in mtr.ns_list(v, sep)]

    def pairs(key):
        v = d.get(key)
        if v is None:
            return None
        return [floats(x) for x in (v if isinstance(v, list) else mtr.ns_list(v, ";"))]

    if "variances" not in d:
        raise SystemExit(f"error: {path}: missing required key 'variances'")
    cfg = {
        "classes": mtr.ns_list(d.get("classes", ""), ","),
        "coords": "centroids" if str(d.get("coords", "m"))[:1] == "c" else "minmax",
        "network_size": floats(d["network_size"]),
        "n_layers": mtr.ns_int(d["n_pyramid_layers"]),
        "feature_map_sizes": pairs("feature_map_sizes"),
        "scales": floats(d["scales"]),
        "aspect_ratios": pairs("aspect_ratios"),
        "two_boxes_for_ar1": mtr.ns_bool(d.get("two_boxes_for_ar1", True)),
        "normalize_coords": mtr.ns_bool(d.get("normalize_coords", True)),
        "clip_boxes": mtr.ns_bool(d.get("clip_boxes", False)),
        "confidence_thresh": fl("confidence_thresh", 0.5),
        "iou_thresh": fl("iou_thresh", 0.1),
        "variances": floats(d["variances"]),
        "steps": pairs("steps"),
        "offsets": pairs("offsets"),
        "location_shapes": [tuple(mtr.ns_int(x) for x in mtr.ns_list(s, ",")) for s in
                            mtr.ns_list(d["location_shapes"], ";")],
        "confidence_shapes": [tuple(mtr.ns_int(x) for x in mtr.ns_list(s, ",")) for s in
                              mtr.ns_list(d["confidence_shapes"], ";")],
    }
    return cfg


def ssd_anchors(cfg):
    """(N, 4) anchors: (cx, cy, w, h) for centroids, (xmin, xmax, ymin, ymax) for minmax; normalised
    by the network size when normalize_coords."""
    W, H = cfg["network_size"][:2]
    s = min(W, H)
    out = []
    for l in range(cfg["n_layers"]):
        fw, fh = (int(v) for v in cfg["feature_map_sizes"][l][:2])
        sg, sg1 = cfg["scales"][l], cfg["scales"][l + 1]
        boxes = []
        for ar in cfg["aspect_ratios"][l]:
            if ar == 1.0:
                boxes.append((s * sg, s * sg))
                if cfg["two_boxes_for_ar1"]:
                    boxes.append((s * math.sqrt(sg * sg1),) * 2)
            else:
                boxes.append((s * sg * math.sqrt(ar), s * sg / math.sqrt(ar)))
        if cfg["steps"]:
            stx, sty = cfg["steps"][l][:2]
        else:
            stx, sty = W / fw, H / fh
        if cfg["offsets"]:
            ofx, ofy = cfg["offsets"][l][:2]
        else:
            ofx, ofy = 0.5, 0.5
        for i in range(fh):
            cy = (ofy + i) * sty
            for j in range(fw):
                cx = (ofx + j) * stx
                for (bw, bh) in boxes:
                    a = [cx, cy, bw, bh]
                    if cfg["clip_boxes"]:
                        x0, x1 = min(max(cx - bw / 2, 0), W), min(max(cx + bw / 2, 0), W)
                        y0, y1 = min(max(cy - bh / 2, 0), H), min(max(cy + bh / 2, 0), H)
                        a = [(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0]
                    if cfg["coords"] == "minmax":
                        a = [a[0] - a[2] / 2, a[0] + a[2] / 2, a[1] - a[3] / 2, a[1] + a[3] / 2]
                        norm = (W, W, H, H)
                    else:
                        norm = (W, H, W, H)
                    if cfg["normalize_coords"]:
                        a = [a[k] / norm[k] for k in range(4)]
                    out.append(a)
    return np.array(out, np.float64)


def split_pyramid(t, shapes, per_anchor):
    """Output tensor (1, k, N) -> (N, k): each layer's channel block (at ceil4 offsets, §6.10) is
    flattened in HWC order and the layers are concatenated (§10.2 'Raw output meaning')."""
    parts, c0 = [], 0
    for (_, _, d) in shapes:
        parts.append(np.asarray(t)[:, :, c0:c0 + d].reshape(-1))
        c0 += 4 * ((d + 3) // 4)
    return np.concatenate(parts).reshape(-1, per_anchor).astype(np.float64)


def ssd_decode(loc, conf, anchors, cfg):
    """§10.2 decoder, including MetalTensor's own (non-IoU) NMS exactly as written. loc (N,4), conf
    (N,C) logits. Returns boxes {xmin, ymin, xmax, ymax, conf, class, anchor}, normalised."""
    var = cfg["variances"]
    thr = cfg["confidence_thresh"]
    kept = []
    for i in range(len(anchors)):
        lg = conf[i]
        if int(np.argmax(lg)) == 0:  # ties go to the lower index: equal logits mean background
            continue
        e = np.exp(lg - lg.max())
        p = e / e.sum()
        cls = int(np.argmax(p))
        c = float(p[cls])
        if c < thr:
            continue
        l = loc[i]
        a = anchors[i]
        if cfg["coords"] == "centroids":
            cx = l[0] * a[2] * var[0] + a[0]
            cy = l[1] * a[3] * var[1] + a[1]
            w = math.exp(l[2] * var[2]) * a[2]
            h = math.exp(l[3] * var[3]) * a[3]
            xmin, xmax, ymin, ymax = cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2
        else:
            aw, ah = a[1] - a[0], a[3] - a[2]
            xmin = l[0] * var[0] * aw + a[0]
            xmax = l[1] * var[1] * aw + a[1]
            ymin = l[2] * var[2] * ah + a[2]
            ymax = l[3] * var[3] * ah + a[3]
        kept.append({"xmin": xmin, "ymin": ymin, "xmax": xmax, "ymax": ymax, "conf": c, "class": cls,
                     "anchor": i})
    # descending confidence; Python's sort is stable, so ties keep anchor order (undefined in MetalTensor)
    kept.sort(key=lambda b: -b["conf"])
    nms_metaltensor(kept, cfg["iou_thresh"])
    return [b for b in kept if b["conf"] > thr]


def nms_metaltensor(boxes, iou_thresh):
    """Greedy suppression with MetalTensor's overlap measure (§10.2 step 5): iw = A.xmax - B.xmin and
    ih = A.ymax - B.ymin, which is the true intersection only when B starts right of/below A and ends
    after it. Suppressed boxes get conf 0. Modifies boxes in place."""
    area = lambda b: (b["xmax"] - b["xmin"]) * (b["ymax"] - b["ymin"])
    for ia, A in enumerate(boxes):
        if A["conf"] < 0.01:
            continue
        for B in boxes[ia + 1:]:
            if B["conf"] < 0.01:
                continue
            if (A["xmin"] >= B["xmax"] or A["xmax"] <= B["xmin"] or A["ymin"] >= B["ymax"]
                    or A["ymax"] <= B["ymin"]):
                continue
            iw = A["xmax"] - B["xmin"]
            ih = A["ymax"] - B["ymin"]
            ratio = iw * ih / (area(A) + area(B) - iw * ih)
            if ratio > iou_thresh:
                B["conf"] = 0.0
    return boxes


def smooth_overlap(A, B):
    """The app's box-smoothing overlap (§10.2 app flow): IoU unless one box contains the other."""
    dx = min(A["xmax"] - B["xmin"], B["xmax"] - A["xmin"])
    dy = min(A["ymax"] - B["ymin"], B["ymax"] - A["ymin"])
    if dx <= 0 or dy <= 0:
        return 0.0
    aa = (A["xmax"] - A["xmin"]) * (A["ymax"] - A["ymin"])
    ab = (B["xmax"] - B["xmin"]) * (B["ymax"] - B["ymin"])
    return dx * dy / (aa + ab - dx * dy)


def smooth_boxes(prev, boxes):
    """For each new box, average with a cached box of the previous frame whose overlap is above 0.8."""
    out = []
    for B in boxes:
        B = dict(B)
        for A in prev or []:
            if smooth_overlap(A, B) > 0.8:
                for k in ("xmin", "ymin", "xmax", "ymax"):
                    B[k] = (A[k] + B[k]) / 2
                break
        out.append(B)
    return out


def face_detect(frame, crop, precision="fp32", fill=None):
    """Run RapidFaceDetect on the crop (x, y, w, h) of the frame; boxes in normalised and frame pixels."""
    cfg = load_ssd_config()
    nw, nh = (int(v) for v in cfg["network_size"][:2])
    x = to_input(resample(frame, *crop, nw, nh, fill=fill))
    outs = run_net("RapidFaceDetect", x, precision)
    loc = split_pyramid(outs["output_loc"], cfg["location_shapes"], 4)
    conf = split_pyramid(outs["output_conf"], cfg["confidence_shapes"], 2)
    anchors = ssd_anchors(cfg)
    if len(anchors) != len(loc) or len(anchors) != len(conf):
        raise SystemExit(f"error: {len(anchors)} anchors but {len(loc)} locations and {len(conf)} confidences")
    boxes = ssd_decode(loc, conf, anchors, cfg)
    cx, cy, cw, ch = crop
    for b in boxes:
        b["frame"] = [b["xmin"] * cw + cx, b["ymin"] * ch + cy, b["xmax"] * cw + cx, b["ymax"] * ch + cy]
    e = np.exp(conf - conf.max(axis=1, keepdims=True))
    pface = e[:, 1] / e.sum(axis=1)
    best = int(np.argmax(pface))
    return {"crop": crop, "input": x, "outputs": outs, "boxes": boxes, "best_p_face": float(pface[best]),
            "best_anchor": best}


def search_head_square(frame, precision="fp32", side=None):
    """Not in the app: when the app's centre square finds no face (the face is smaller than the smallest
    anchor), scan squares of half the frame's short side on a grid and keep the one whose first
    detection is the most confident."""
    H, W = frame.shape[:2]
    side = side or min(W, H) // 2
    step = max(1, side // 4)
    best = None
    for y in list(range(0, H - side + 1, step)) + [H - side]:
        for x in list(range(0, W - side + 1, step)) + [W - side]:
            r = face_detect(frame, (float(x), float(y), float(side), float(side)), precision)
            if r["boxes"] and (best is None or r["boxes"][0]["conf"] > best["boxes"][0]["conf"]):
                best = r
    return best


# ----------------------------------------------------------------------------------------------
# §10.3 Landmarks

def load_std_mean(path=None):
    path = path or os.path.join(models_dir(), "std_mean.plist")
    with open(path, "rb") as f:
        d = mtr.strip_spaces(plistlib.load(f))
    std = np.array([mtr.ns_float(v) for v in mtr.ns_list(d["std"], ",")], np.float64)
    mean = np.array([mtr.ns_float(v) for v in mtr.ns_list(d["mean"], ",")], np.float64)
    if len(std) != 136 or len(mean) != 136:
        raise SystemExit(f"error: {path}: 'std' and 'mean' must have 136 values ({len(std)}, {len(mean)})")
    return std, mean


def landmark_crop(box):
    """Square [cx - s, cy - s, 2s, 2s] with s = 0.55 max(w, h) around the box centre (frame pixels)."""
    x0, y0, x1, y1 = box
    s = 0.55 * max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return (cx - s, cy - s, 2 * s, 2 * s)


def landmarks(frame, box, precision="fp32", fill=None):
    crop = landmark_crop(box)
    x = to_input(resample(frame, *crop, 96, 96, fill=fill))
    raw = run_net("Landmarks", x, precision)["output"].reshape(-1).astype(np.float64)
    std, mean = load_std_mean()
    v = raw * std + mean                      # (x0, y0, x1, y1, ...) in pixels of the 96x96 crop
    pts96 = v.reshape(68, 2)
    pts = np.stack([pts96[:, 0] / 96 * crop[2] + crop[0], pts96[:, 1] / 96 * crop[3] + crop[1]], 1)
    return {"crop": crop, "input": x, "raw": raw, "points96": pts96, "points": pts}


def landmark_filter(P, v):
    """The app's per-coordinate temporal filter: d = (|P - v| + 1e-6)/2, P <- (P/d + v d)/(d + 1/d).
    Start with P = 0; returns the new P."""
    P = np.asarray(P, np.float64)
    v = np.asarray(v, np.float64)
    d = (np.abs(P - v) + 1e-6) / 2
    return (P / d + v * d) / (d + 1 / d)


LANDMARK_GROUPS = {"jaw": (0, 16), "right_brow": (17, 21), "left_brow": (22, 26), "nose": (27, 35),
                   "right_eye": (36, 41), "left_eye": (42, 47), "lips": (48, 67)}


# ----------------------------------------------------------------------------------------------
# §11 checks

def default_clip():
    return os.path.join(shared_dir(), "media", "webcam", "again.mkv")


# The §11 "240-px square around the head" (the spec does not give its corner): centred on the head
# at about (320, 120) in the 640x480 frame.
HEAD_SQUARE_AGAIN = (200.0, 0.0, 240.0, 240.0)


def run_all(frame, precision="fp32", face_square=None, fill=None):
    r = {"portrait": portrait(frame, precision)}
    H, W = frame.shape[:2]
    full = face_detect(frame, centre_square(W, H), precision)
    r["face_full"] = full
    head = None
    if face_square is not None:
        head = face_detect(frame, face_square, precision)
    elif not full["boxes"]:
        head = search_head_square(frame, precision)
    r["face_head"] = head
    src = full if full["boxes"] else head
    if src is not None and src["boxes"]:
        r["landmarks"] = landmarks(frame, src["boxes"][0]["frame"], precision, fill)
    else:
        r["landmarks"] = None
    return r


def mask_stats(p, W, H):
    m = p["mask"]
    n = m.shape[1]
    edge = max(1, n // 8)
    cx, cy, cw, ch = p["crop"]
    # frame regions -> mask pixels
    def region(x0, y0, x1, y1):
        a = lambda v, o, s: int(round((v - o) / s * n))
        return m[a(y0, cy, ch):a(y1, cy, ch), a(x0, cx, cw):a(x1, cx, cw)]
    return {
        "left_columns_max": float(m[:, :edge].max()),
        "right_columns_max": float(m[:, -edge:].max()),
        "left_columns_mean": float(m[:, :edge].mean()),
        "right_columns_mean": float(m[:, -edge:].mean()),
        "face_mean": float(region(290, 70, 350, 150).mean()),
        "torso_mean": float(region(250, 190, 400, 330).mean()),
        "person_fraction": float((m > 0.5).mean()),
    }


def evaluate(r, W, H, clip, t, regions, verbose):
    """The §11 checks on one precision's results; prints the details when verbose."""
    say = print if verbose else (lambda *x, **k: None)
    ms = mask_stats(r["portrait"], W, H)
    say("PortraitSegmentNet on the centre square", _fmt_crop(r["portrait"]["crop"]), "-> 128x128:")
    say(f"  mask (post-processed) over the outer 16 of 128 columns: left mean {ms['left_columns_mean']:.4f} "
        f"max {ms['left_columns_max']:.4f}, right mean {ms['right_columns_mean']:.4f} max {ms['right_columns_max']:.4f}")
    say(f"  mask mean over the face {ms['face_mean']:.3f}, over the torso {ms['torso_mean']:.3f}; "
        f"{100 * ms['person_fraction']:.1f}% of the mask > 0.5")
    ok = {"mask": ms["left_columns_mean"] < 0.005 and ms["right_columns_mean"] < 0.005 and ms["face_mean"] > 0.9
          and ms["torso_mean"] > 0.9}
    f = r["face_full"]
    say("RapidFaceDetect on the centre square", _fmt_crop(f["crop"]), "-> 160x160:")
    say(f"  best P(face) {f['best_p_face']:.4f} (anchor {f['best_anchor']}), detections: {len(f['boxes'])}")
    ok["no face on the full square"] = len(f["boxes"]) == 0
    h = r["face_head"]
    say("RapidFaceDetect on the square around the head", _fmt_crop(h["crop"]), "-> 160x160:")
    say(f"  best P(face) {h['best_p_face']:.6f}, detections: {len(h['boxes'])}")
    for b in h["boxes"]:
        x0, y0, x1, y1 = b["frame"]
        say(f"  box conf {b['conf']:.6f} anchor {b['anchor']}: ({x0:.1f}, {y0:.1f})-({x1:.1f}, {y1:.1f}) frame px")
    ok["face on the head square"] = bool(h["boxes"]) and h["boxes"][0]["conf"] > 0.999 and \
        max(abs(u - v) for u, v in zip(h["boxes"][0]["frame"], (286, 89, 354, 155))) <= 5
    lm = r["landmarks"]
    ok["68 landmarks"] = False
    if lm is not None:
        pts = lm["points"]
        say("Landmarks on the crop", _fmt_crop(lm["crop"]), "-> 96x96: 68 points")
        for g, (i0, i1) in LANDMARK_GROUPS.items():
            q = pts[i0:i1 + 1]
            say(f"  {g:10s} {i0:2d}-{i1:2d}: x {q[:, 0].min():6.1f}..{q[:, 0].max():6.1f}  "
                f"y {q[:, 1].min():6.1f}..{q[:, 1].max():6.1f}")
        ok["68 landmarks"] = pts.shape == (68, 2) and bool(np.isfinite(pts).all())
        if os.path.exists(regions) and t == 0.5 and os.path.basename(clip) == "again.mkv":
            bad = check_regions(pts, json.load(open(regions)))
            say(f"  hand-checked regions ({os.path.relpath(regions, REPO)}): "
                + ("all 68 points inside their group's rectangle" if not bad else "OUTSIDE: " + ", ".join(bad)))
            ok["68 landmarks"] = ok["68 landmarks"] and not bad
    return ok


def cmd_check(a):
    clip = a.clip or default_clip()
    frame = decode_frame(clip, a.time)
    H, W = frame.shape[:2]
    sq = HEAD_SQUARE_AGAIN if a.face_square is None else a.face_square
    regions = a.regions or os.path.join(REPO, "Tests", "Golden", "metaltensor", "again-0.5s-landmark-regions.json")
    precs = ("fp32", "fp16") if a.precision == "both" else (a.precision,)
    res, oks = {}, {}
    for prec in precs:
        res[prec] = run_all(frame, prec, sq)
        print(f"== {prec}: {os.path.basename(clip)} t={a.time} s, {W}x{H}")
        oks[prec] = evaluate(res[prec], W, H, clip, a.time, regions, True)
    if "fp16" in res and "fp32" in res:
        a32, a16 = res["fp32"], res["fp16"]
        print("== fp16 emulation vs fp32 (max |difference|):")
        print(f"  mask (raw sigmoid) {np.abs(a32['portrait']['raw'] - a16['portrait']['raw']).max():.4f}")
        for key in ("face_full", "face_head"):
            o32, o16 = a32[key]["outputs"], a16[key]["outputs"]
            print(f"  {key}: loc {np.abs(o32['output_loc'] - o16['output_loc']).max():.4f}, "
                  f"conf logits {np.abs(o32['output_conf'] - o16['output_conf']).max():.4f}")
        if a32["face_head"]["boxes"] and a16["face_head"]["boxes"]:
            d = max(abs(u - v) for u, v in zip(a32["face_head"]["boxes"][0]["frame"], a16["face_head"]["boxes"][0]["frame"]))
            print(f"  head box corners {d:.3f} frame px")
        if a32["landmarks"] is not None and a16["landmarks"] is not None:
            l16 = landmarks(frame, a32["face_head"]["boxes"][0]["frame"], "fp16")
            d1 = np.abs(a32["landmarks"]["points"] - l16["points"]).max()
            d2 = np.abs(a32["landmarks"]["points"] - a16["landmarks"]["points"]).max()
            print(f"  landmarks: {d1:.3f} frame px on the same crop, {d2:.3f} frame px with each precision's own box")
    allok = True
    for prec, ok in oks.items():
        print(f"checks {prec}: " + " | ".join(f"{k} {_ok(v)}" for k, v in ok.items()))
        allok = allok and all(ok.values())
    return 0 if allok else 1


def check_regions(pts, fixture):
    bad = []
    for g, (i0, i1) in LANDMARK_GROUPS.items():
        x0, y0, x1, y1 = fixture["groups"][g]["rect"]
        for i in range(i0, i1 + 1):
            x, y = pts[i]
            if not (x0 <= x <= x1 and y0 <= y <= y1):
                bad.append(f"{g}[{i}]=({x:.1f},{y:.1f})")
    return bad


def _ok(b):
    return "OK" if b else "FAIL"


def _fmt_crop(c):
    return f"(x {c[0]:g}, y {c[1]:g}, {c[2]:g}x{c[3]:g})"


def _write_f32(path, a):
    tmp = path + ".tmp"
    np.asarray(a, "<f4").tofile(tmp)
    os.replace(tmp, path)


def cmd_dump(a):
    frame = decode_frame(a.clip, a.time)
    H, W = frame.shape[:2]
    os.makedirs(a.out, exist_ok=True)
    r = run_all(frame, a.precision, a.face_square, a.fill)
    doc = {
        "generated_by": "tools/metaltensor/mt_demos.py dump",
        "clip": os.path.basename(a.clip), "time_s": a.time, "frame_size": [W, H],
        "frame_rgb24_sha256": hashlib.sha256(frame.tobytes()).hexdigest(),
        "decode": f"ffmpeg -ss {a.time} -i CLIP -frames:v 1 -f rawvideo -pix_fmt rgb24 -",
        "resample": "bilinear at src = x0 + (i+0.5)*w/out_w - 0.5, clamp-to-edge"
                    + (", grey (128) outside the frame for the landmark crop" if a.fill == "grey" else "")
                    + ", rounded half away from zero to uint8, then /255",
        "precision": a.precision,
        "files": "<stage>.input.f32 and <stage>.<output node>.f32: raw little-endian float32, HWC",
    }
    p = r["portrait"]
    _write_f32(os.path.join(a.out, "portrait.input.f32"), p["input"])
    _write_f32(os.path.join(a.out, "portrait.output.f32"), p["raw"])
    doc["portrait"] = {"model": "PortraitSegmentNet.plist", "crop_xywh": list(p["crop"]), "input_shape": [128, 128, 3],
                       "outputs": {"output": [128, 128, 1]}, "mask_stats": mask_stats(p, W, H)}
    for key in ("face_full", "face_head"):
        f = r[key]
        if f is None:
            continue
        _write_f32(os.path.join(a.out, f"{key}.input.f32"), f["input"])
        for k, v in f["outputs"].items():
            _write_f32(os.path.join(a.out, f"{key}.{k}.f32"), v)
        doc[key] = {"model": "RapidFaceDetect.plist", "crop_xywh": list(f["crop"]), "input_shape": [160, 160, 3],
                    "outputs": {k: list(v.shape) for k, v in f["outputs"].items()},
                    "best_p_face": f["best_p_face"], "best_anchor": f["best_anchor"],
                    "boxes": [{k: (float(v) if isinstance(v, float) else v) for k, v in b.items()} for b in f["boxes"]]}
    lm = r["landmarks"]
    if lm is not None:
        _write_f32(os.path.join(a.out, "landmarks.input.f32"), lm["input"])
        _write_f32(os.path.join(a.out, "landmarks.output.f32"), lm["raw"])
        doc["landmarks"] = {"model": "Landmarks.plist", "crop_xywh": list(lm["crop"]), "input_shape": [96, 96, 3],
                            "outputs": {"output": [1, 1, 136]}, "raw": lm["raw"].tolist(),
                            "points_crop96": lm["points96"].tolist(), "points_frame": lm["points"].tolist()}
    with open(os.path.join(a.out, "results.json.tmp"), "w") as fjs:
        json.dump(doc, fjs, indent=1)
    os.replace(os.path.join(a.out, "results.json.tmp"), os.path.join(a.out, "results.json"))
    print(f"wrote {a.out}: " + ", ".join(sorted(os.listdir(a.out))))
    return 0


def render_overlay(frame, box, pts, path, scale=1):
    from PIL import Image, ImageDraw
    im = Image.fromarray(frame)
    if scale != 1:
        im = im.resize((im.width * scale, im.height * scale), Image.NEAREST)
    dr = ImageDraw.Draw(im)
    if box is not None:
        dr.rectangle([v * scale for v in box], outline=(0, 255, 0))
    cols = {"jaw": (255, 0, 0), "right_brow": (255, 160, 0), "left_brow": (255, 255, 0), "nose": (0, 255, 255),
            "right_eye": (0, 0, 255), "left_eye": (255, 0, 255), "lips": (255, 255, 255)}
    for g, (i0, i1) in LANDMARK_GROUPS.items():
        for i in range(i0, i1 + 1):
            x, y = pts[i] * scale
            dr.ellipse([x - 1.5, y - 1.5, x + 1.5, y + 1.5], fill=cols[g])
    im.save(path)


def cmd_overlay(a):
    frame = decode_frame(a.clip or default_clip(), a.time)
    r = run_all(frame, a.precision, a.face_square if a.face_square else HEAD_SQUARE_AGAIN)
    src = r["face_full"] if r["face_full"]["boxes"] else r["face_head"]
    box = src["boxes"][0]["frame"]
    render_overlay(frame, box, r["landmarks"]["points"], a.out, a.scale)
    print(f"wrote {a.out}")
    return 0


def _square(s):
    v = [float(x) for x in s.split(",")]
    if len(v) != 3:
        raise argparse.ArgumentTypeError("expected X,Y,SIDE")
    return (v[0], v[1], v[2], v[2])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="the spec's §11 checks on again.mkv at t = 0.5 s")
    c.add_argument("--clip")
    c.add_argument("--time", type=float, default=0.5)
    c.add_argument("--precision", choices=("fp32", "fp16", "both"), default="both")
    c.add_argument("--face-square", type=_square, help="X,Y,SIDE of the head square (default 200,0,240)")
    c.add_argument("--regions", help="landmark-region fixture to check the points against")
    d = sub.add_parser("dump", help="write network inputs/outputs and decoded results for one frame")
    d.add_argument("--clip", required=True)
    d.add_argument("--time", type=float, required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--precision", choices=("fp32", "fp16"), default="fp32")
    d.add_argument("--face-square", type=_square, help="X,Y,SIDE of an extra face-detection square")
    d.add_argument("--fill", choices=("clamp", "grey"), default="clamp", help="landmark crop outside the frame")
    o = sub.add_parser("overlay", help="PNG of the 68 points and the face box on the frame")
    o.add_argument("--clip")
    o.add_argument("--time", type=float, default=0.5)
    o.add_argument("--out", required=True)
    o.add_argument("--precision", choices=("fp32", "fp16"), default="fp32")
    o.add_argument("--face-square", type=_square)
    o.add_argument("--scale", type=int, default=1)
    a = ap.parse_args(argv)
    if getattr(a, "fill", None) == "clamp":
        a.fill = None
    try:
        return {"check": cmd_check, "dump": cmd_dump, "overlay": cmd_overlay}[a.cmd](a)
    except mtr.MTError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
