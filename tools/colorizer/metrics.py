#!/usr/bin/env python3
"""Evaluate exported colorizer ONNX models (CPU, onnxruntime) on photos and on webcam video.

Several models can be given: all are measured in the same run, on the same frames and photos.

Photos (BSDS500 val, --val): for every photo, L (skimage rgb2lab, sRGB D65) is resized to the model's
input size (256x256 for v1-v3, read from the model; bilinear, the photo is stretched to a square as the
pipeline does), fed as L/50 - 1, and the predicted a/b (a quarter of that: 64x64 for v1-v3) is upsampled
bilinearly to the photo's size and joined with its own L.
  * colourfulness (Hasler & Süsstrunk 2003) of ours and of the original, mean over photos, ratio;
  * a/b RMSE over all pixels and both channels (pooled) of ours and of the all-grey prediction
    a = b = 0, and their ratio.

Webcam video (the held-out clips of tools/colorizer/webcam_split.json, every frame, 640x480,
decoded with the ffmpeg CLI): the same per-frame path, plus the colorize node's temporal
smoothing, exactly as the Swift node applies it (per admitted frame; offline every frame is
admitted):
    d   = mean |L256_t - L256_prev|   (the network input, 256x256 for v1-v3, in L units 0..100)
    if first frame or d > scene_cut:  ab_s = ab_new                      (history reset)
    else:                             ab_s = w * ab_s_prev + (1 - w) * ab_new
  at the model-output resolution (64x64 for v1-v3), before the bilinear upsampling (w = --smoothing,
  scene_cut = --scene-cut; w = 0 is no smoothing). Metrics, pooled over all held-out frames:
  * a/b RMSE vs all-grey (ratio) and colourfulness ratio (mean over frames), as for photos;
  * skin: the person mask of MediaPipe's selfie segmentation model (LiteRT, input the frame
    stretched to 256x256 RGB in [0, 1], mask > 0.5, upsampled to the frame) and, inside it, the
    pixels whose ORIGINAL colour is skin-hued (chroma C = sqrt(a^2+b^2) >= 5 and hue angle
    atan2(b, a) in [15, 80] degrees); reported: the fraction of those pixels where OURS is also
    skin-hued by the same test (goal >= 0.9), and the mean hue of ours and of the original there;
  * flicker: mean over consecutive frames of mean |ab_t - ab_t-1| (both channels, full size) of
    ours and of the original, and their ratio (goal <= 1.2).
Grids: --grid (12 photos) and --webcam-grid (held-out webcam frames), grey | ours | original;
with several models the grids show the first one.

Usage (repo root; ../shared is the shared data folder beside the repo):
  taskset -c 1 .venv-tools/bin/python tools/colorizer/metrics.py models/colorizer/colorizer.onnx \
      --smoothing 0.6 --scene-cut 8 --grid models/colorizer/val_grid.png \
      --webcam-grid models/colorizer/webcam_grid.png --json models/colorizer/metrics.json --bench 200
"""
import argparse
import json
import math
import os
import subprocess
import time

import numpy as np
from PIL import Image, ImageDraw
from skimage.color import lab2rgb, rgb2lab

import colorcommon as cc  # beside this file

HERE = os.path.dirname(os.path.abspath(__file__))
SKIN_HUE = (15.0, 80.0)   # degrees, Lab hue angle atan2(b, a)
SKIN_CHROMA = 5.0         # minimum Lab chroma for a pixel to have a hue at all


def resize_f(x, size):
    """float 2-D array -> bilinear resize to size=(W, H) with PIL (antialiased when shrinking)."""
    return np.asarray(Image.fromarray(x.astype(np.float32), mode="F").resize(size, Image.BILINEAR))


def with_temperature(model_path, T):
    """The ONNX model's bytes with the annealed-mean temperature replaced by T (the Mul before the Softmax)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model_path)
    by_out = {o: n for n in m.graph.node for o in n.output}
    sm = next(n for n in m.graph.node if n.op_type == "Softmax")
    mul = by_out[sm.input[0]]
    assert mul.op_type == "Mul"
    inits = {t.name: t for t in m.graph.initializer}
    for name in mul.input:
        if name in inits:
            inits[name].CopyFrom(numpy_helper.from_array(np.array(1.0 / T, np.float32).reshape(numpy_helper.to_array(inits[name]).shape), name))
            return m.SerializeToString()
        if name in by_out and by_out[name].op_type == "Constant":
            c = by_out[name]
            v = numpy_helper.to_array(c.attribute[0].t)
            c.attribute[0].t.CopyFrom(numpy_helper.from_array(np.full(v.shape, 1.0 / T, np.float32)))
            return m.SerializeToString()
    raise ValueError("no constant 1/T found on the Mul before the Softmax")


def temperature_of(model_path):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model_path)
    by_out = {o: n for n in m.graph.node for o in n.output}
    sm = next(n for n in m.graph.node if n.op_type == "Softmax")
    mul = by_out[sm.input[0]]
    inits = {t.name: t for t in m.graph.initializer}
    for name in mul.input:
        if name in inits:
            return float(1.0 / numpy_helper.to_array(inits[name]).ravel()[0])
        if name in by_out and by_out[name].op_type == "Constant":
            return float(1.0 / numpy_helper.to_array(by_out[name].attribute[0].t).ravel()[0])
    return None


def session(path_or_bytes, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path_or_bytes, so, providers=["CPUExecutionProvider"])


def model_size(sess):
    """The network input size (W, H) of a session (v1-v3: 256x256; the EfficientNet colorizer: 192x192)."""
    shp = sess.get_inputs()[0].shape
    return int(shp[3]), int(shp[2])


def net_input(L, size=(256, 256)):
    """L (full size) -> (L resized to the network input, the input tensor L/50 - 1)."""
    Ls = resize_f(L, size)
    return Ls, (Ls / 50.0 - 1.0)[None, None].astype(np.float32)


def upsample_ab(ab64, W, H):
    return np.stack([resize_f(ab64[0], (W, H)), resize_f(ab64[1], (W, H))], -1)


def predict(sess, L):
    H, W = L.shape
    ab = sess.run(["ab"], {"L": net_input(L, model_size(sess))[1]})[0][0]
    return upsample_ab(ab, W, H)


def thumb(rgb01, cell):
    im = Image.fromarray((np.clip(rgb01, 0, 1) * 255 + 0.5).astype(np.uint8))
    im.thumbnail(cell, Image.LANCZOS)
    canvas = Image.new("RGB", cell, (255, 255, 255))
    canvas.paste(im, ((cell[0] - im.width) // 2, (cell[1] - im.height) // 2))
    return canvas


def write_grid(path, cells, cell, cols=2, labels=("grey (input)", "ours", "original")):
    pad, head = 4, 22
    rows = (len(cells) + cols - 1) // cols
    W = cols * (3 * cell[0] + 2 * pad) + (cols - 1) * 4 * pad
    H = head + rows * (cell[1] + pad)
    img = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)
    for c in range(cols):
        x0 = c * (3 * cell[0] + 6 * pad)
        for j, t in enumerate(labels):
            d.text((x0 + j * (cell[0] + pad) + 6, 5), t, fill=(0, 0, 0))
    for k, trip in enumerate(cells):
        r, c = k // cols, k % cols
        x0 = c * (3 * cell[0] + 6 * pad)
        for j, im in enumerate(trip):
            img.paste(thumb(im, cell), (x0 + j * (cell[0] + pad), head + r * (cell[1] + pad)))
    img.save(path, optimize=True)
    print("grid:", path, f"({os.path.getsize(path)} bytes)")


# ----------------------------------------------------------------------------- photos
def photo_metrics(sessions, val, limit, grid, framegraph=None, model_paths=None):
    names = sorted(f for f in os.listdir(val) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    if limit:
        names = names[:limit]
    grid_idx = set(np.linspace(0, len(names) - 1, 12).round().astype(int).tolist())
    cells = []
    acc = {k: dict(cf=[], se=0.0) for k in sessions}
    cf_orig, se0, npx = [], 0.0, 0
    for i, n in enumerate(names):
        rgb = np.asarray(Image.open(os.path.join(val, n)).convert("RGB"), dtype=np.float64) / 255.0
        lab = rgb2lab(rgb)
        gt = lab[..., 1:]
        se0 += float((gt ** 2).sum())
        npx += gt.size
        cf_orig.append(cc.colourfulness(rgb * 255))
        for k, sess in sessions.items():
            if framegraph:
                import tempfile
                with tempfile.TemporaryDirectory() as tmp:
                    out = os.path.join(tmp, "c.png")
                    root = os.path.dirname(os.path.dirname(HERE))
                    subprocess.run([framegraph, "run", os.path.join(root, "pipelines/colorize-image.fg"), "--input",
                                    os.path.join(val, n), "--output", out, "--set",
                                    f"colorizer.model={os.path.abspath(model_paths[k])}", "--quiet"], check=True, cwd=root)
                    ab = rgb2lab(np.asarray(Image.open(out).convert("RGB"), dtype=np.float64) / 255.0)[..., 1:]
            else:
                ab = predict(sess, lab[..., 0].astype(np.float32))
            acc[k]["se"] += float(((ab - gt) ** 2).sum())
            ours = np.clip(lab2rgb(np.concatenate([lab[..., :1], ab], -1)), 0, 1)
            acc[k]["cf"].append(cc.colourfulness(ours * 255))
            if grid and i in grid_idx and k == next(iter(sessions)):
                grey = np.clip(lab2rgb(np.concatenate([lab[..., :1], np.zeros_like(gt)], -1)), 0, 1)
                cells.append((grey, ours, rgb))
    rmse0 = math.sqrt(se0 / npx)
    res = {}
    for k, v in acc.items():
        rmse = math.sqrt(v["se"] / npx)
        res[k] = dict(photos=len(names), colourfulness_ours=float(np.mean(v["cf"])),
                      colourfulness_original=float(np.mean(cf_orig)),
                      colourfulness_ratio=float(np.mean(v["cf"]) / np.mean(cf_orig)),
                      rmse_ab_ours=rmse, rmse_ab_grey=rmse0, rmse_ratio=rmse / rmse0)
        print(f"[photos] {k}: {len(names)} photos: colourfulness {res[k]['colourfulness_ours']:.2f} vs "
              f"{res[k]['colourfulness_original']:.2f} -> {res[k]['colourfulness_ratio']:.3f}x; "
              f"a/b RMSE {rmse:.2f} vs grey {rmse0:.2f} -> {rmse / rmse0:.3f}x")
    if grid and cells:
        write_grid(grid, cells, (200, 134))
    return res


# ----------------------------------------------------------------------------- webcam video
def decode_clip(path):
    import shutil
    if shutil.which("ffprobe") is None:      # OpenCV's decoder where there is no ffmpeg CLI (the GPU machine)
        import cv2
        cap, out = cv2.VideoCapture(path), []
        while True:
            ok, f = cap.read()
            if not ok:
                break
            out.append(cv2.cvtColor(f, cv2.COLOR_BGR2RGB))
        return np.stack(out)
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", path], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    w, h = (int(v) for v in probe.split(",")[:2])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-vsync", "0", "-"],
                         check=True, stdout=subprocess.PIPE).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


class OnnxInterpreter:
    """The few LiteRT Interpreter calls Segmenter makes, over onnxruntime (NHWC in and out, as the .tflite)."""

    def __init__(self, path):
        self.sess = session(path, 1)
        i, o = self.sess.get_inputs()[0], self.sess.get_outputs()[0]
        self.inp, self.out, self.feed = dict(index=i.name, shape=i.shape), dict(index=o.name), {}

    def allocate_tensors(self):
        pass

    def get_input_details(self):
        return [self.inp]

    def get_output_details(self):
        return [self.out]

    def set_tensor(self, name, x):
        self.feed = {name: x}

    def invoke(self):
        self.res = self.sess.run(None, self.feed)[0]

    def get_tensor(self, name):
        return self.res


class Segmenter:
    """MediaPipe selfie segmentation (.tflite) through LiteRT: frame -> person mask (bool, frame size)."""

    def __init__(self, path):
        if path.endswith(".onnx"):         # the project's ONNX conversion of the same model (machines without LiteRT)
            self.it = OnnxInterpreter(path)
        else:
            try:
                from ai_edge_litert.interpreter import Interpreter
            except ImportError:  # tflite-runtime
                from tflite_runtime.interpreter import Interpreter
            self.it = Interpreter(model_path=path, num_threads=1)
        self.it.allocate_tensors()
        self.inp = self.it.get_input_details()[0]
        self.out = self.it.get_output_details()[0]
        self.size = tuple(int(v) for v in self.inp["shape"][1:3])[::-1]   # (W, H)

    def __call__(self, rgb_u8):
        H, W = rgb_u8.shape[:2]
        x = np.asarray(Image.fromarray(rgb_u8).resize(self.size, Image.BILINEAR), np.float32)[None] / 255.0
        self.it.set_tensor(self.inp["index"], x)
        self.it.invoke()
        m = self.it.get_tensor(self.out["index"])[0, ..., 0]
        return resize_f(m, (W, H)) > 0.5


def skin_hued(ab):
    C = np.hypot(ab[..., 0], ab[..., 1])
    h = np.degrees(np.arctan2(ab[..., 1], ab[..., 0]))
    return (C >= SKIN_CHROMA) & (h >= SKIN_HUE[0]) & (h <= SKIN_HUE[1]), h


def smooth_sequence(raw, L256s, w, cut):
    """The colorize node's rule on one clip: raw [N,2,h,w] (the model's output size) -> smoothed, and the number
    of resets; L256s: the network inputs (the model's input size; the name is v1's 256x256)."""
    out, prev, prevL, resets = [], None, None, 0
    for ab, L in zip(raw, L256s):
        if prev is None or float(np.abs(L - prevL).mean()) > cut:
            cur = ab
            resets += 1
        else:
            cur = w * prev + (1.0 - w) * ab
        out.append(cur)
        prev, prevL = cur, L
    return np.stack(out), resets


def webcam_metrics(sessions, clips, segmenter, settings, grid=None, grid_per_clip=2):
    """settings: list of (w, cut). Returns {model: {setting_key: metrics}}, and per-clip figures."""
    frames_all = {c: decode_clip(p) for c, p in clips.items()}
    # originals, once
    orig = {}
    for c, fr in frames_all.items():
        labs = [rgb2lab(f.astype(np.float64) / 255.0).astype(np.float32) for f in fr]
        masks = [segmenter(f) for f in fr] if segmenter else None
        orig[c] = dict(labs=labs, masks=masks, Lin={},
                       cf=[cc.colourfulness(f.astype(np.float64)) for f in fr])
    res, per_clip = {}, {}
    for k, sess in sessions.items():
        size = model_size(sess)
        for c in clips:                       # the network inputs at this model's input size (also the smoothing's L)
            if size not in orig[c]["Lin"]:
                orig[c]["Lin"][size] = [net_input(l[..., 0], size)[0] for l in orig[c]["labs"]]
        Lk = {c: orig[c]["Lin"][size] for c in clips}
        raw = {c: np.stack([sess.run(["ab"], {"L": (L / 50.0 - 1.0)[None, None].astype(np.float32)})[0][0]
                            for L in Lk[c]]) for c in clips}
        res[k], per_clip[k] = {}, {}
        for (w, cut) in settings:
            key = f"w={w:g},cut={cut:g}"
            se = se0 = 0.0
            npx = 0
            cf_ours, cf_orig = [], []
            fl_ours = fl_orig = 0.0
            nfl = 0
            sk_n = sk_ok = 0
            hue_o, hue_g = [], []
            pc, resets_total = {}, 0
            for c in clips:
                sm, resets = smooth_sequence(raw[c], Lk[c], w, cut) if w > 0 else (raw[c], len(raw[c]))
                resets_total += resets
                prev_o = prev_g = None
                c_se = c_se0 = 0.0
                c_n = 0
                c_fo = c_fg = 0.0
                c_sk = c_skok = 0
                for i, lab in enumerate(orig[c]["labs"]):
                    H, W = lab.shape[:2]
                    ab = upsample_ab(sm[i], W, H)
                    gt = lab[..., 1:]
                    e, e0 = float(((ab - gt) ** 2).sum()), float((gt ** 2).sum())
                    se += e
                    se0 += e0
                    c_se += e
                    c_se0 += e0
                    npx += gt.size
                    c_n += gt.size
                    rgb_ours = np.clip(lab2rgb(np.concatenate([lab[..., :1], ab], -1)), 0, 1)
                    cf_ours.append(cc.colourfulness(rgb_ours * 255))
                    cf_orig.append(orig[c]["cf"][i])
                    if prev_o is not None:
                        fo, fg = float(np.abs(ab - prev_o).mean()), float(np.abs(gt - prev_g).mean())
                        fl_ours += fo
                        fl_orig += fg
                        c_fo += fo
                        c_fg += fg
                        nfl += 1
                    prev_o, prev_g = ab, gt
                    if orig[c]["masks"] is not None:
                        sk_g, hg = skin_hued(gt)
                        sk_o, ho = skin_hued(ab)
                        sel = orig[c]["masks"][i] & sk_g
                        n_sel, n_ok = int(sel.sum()), int((sel & sk_o).sum())
                        sk_n += n_sel
                        sk_ok += n_ok
                        c_sk += n_sel
                        c_skok += n_ok
                        if n_sel:
                            hue_g.append(hg[sel])
                            hue_o.append(ho[sel])
                pc[c] = dict(frames=len(orig[c]["labs"]), rmse_ratio=math.sqrt(c_se / c_n) / math.sqrt(c_se0 / c_n),
                             flicker_ratio=c_fo / max(c_fg, 1e-9), skin_ok=c_skok / max(c_sk, 1), skin_pixels=c_sk,
                             resets=resets)
            rmse, rmse0 = math.sqrt(se / npx), math.sqrt(se0 / npx)
            r = dict(frames=len(cf_ours), smoothing=w, scene_cut=cut, resets=resets_total,
                     rmse_ab_ours=rmse, rmse_ab_grey=rmse0, rmse_ratio=rmse / rmse0,
                     colourfulness_ours=float(np.mean(cf_ours)), colourfulness_original=float(np.mean(cf_orig)),
                     colourfulness_ratio=float(np.mean(cf_ours) / np.mean(cf_orig)),
                     flicker_ours=fl_ours / nfl, flicker_original=fl_orig / nfl, flicker_ratio=fl_ours / fl_orig)
            if segmenter:
                hg_all = np.concatenate(hue_g) if hue_g else np.zeros(0)
                ho_all = np.concatenate(hue_o) if hue_o else np.zeros(0)
                r.update(skin_pixels=sk_n, skin_ok_fraction=sk_ok / max(sk_n, 1),
                         skin_mean_hue_original=float(hg_all.mean()) if sk_n else None,
                         skin_mean_hue_ours=float(ho_all.mean()) if sk_n else None)
            res[k][key] = r
            per_clip[k][key] = pc
            print(f"[webcam] {k} {key}: {r['frames']} frames, resets {resets_total}: a/b RMSE {rmse:.2f} vs grey {rmse0:.2f} "
                  f"-> {r['rmse_ratio']:.3f}x; colourfulness {r['colourfulness_ratio']:.3f}x; flicker "
                  f"{r['flicker_ours']:.3f} vs {r['flicker_original']:.3f} -> {r['flicker_ratio']:.3f}x"
                  + (f"; skin ok {r['skin_ok_fraction']:.3f} of {sk_n} px (hue ours {r['skin_mean_hue_ours']:.1f}"
                     f" vs orig {r['skin_mean_hue_original']:.1f})" if segmenter and sk_n else ""))
        if grid and k == next(iter(sessions)):
            w, cut = settings[-1]
            cells = []
            for c in clips:
                n = len(orig[c]["labs"])
                sm, _ = smooth_sequence(raw[c], Lk[c], w, cut) if w > 0 else (raw[c], 0)
                for i in np.linspace(n // 4, n - 1, grid_per_clip).round().astype(int):
                    lab = orig[c]["labs"][i]
                    H, W = lab.shape[:2]
                    ab = upsample_ab(sm[i], W, H)
                    cells.append((np.clip(lab2rgb(np.concatenate([lab[..., :1], np.zeros_like(ab)], -1)), 0, 1),
                                  np.clip(lab2rgb(np.concatenate([lab[..., :1], ab], -1)), 0, 1),
                                  frames_all[c][i].astype(np.float64) / 255.0))
            write_grid(grid, cells, (192, 144))
    return res, per_clip


# ----------------------------------------------------------------------------- places (issue 46)
NEUTRAL_CHROMA = 4.0      # the original is "neutral" below this chroma ...
NEUTRAL_L = (15.0, 95.0)  # ... and within this lightness (very dark pixels are neutral for any colouring)
SKIN_MIN_PIXELS = 500     # skin kept is reported only where the place has this many skin-hued person pixels


def place_figures(ours_ab, gt_ab, L, rgb_ours, rgb_orig, mask):
    """Per-image sums for one place: squared errors, colourfulness, skin and neutral-cast counts."""
    sk_g, _ = skin_hued(gt_ab)
    sk_o, _ = skin_hued(ours_ab)
    sel = (mask & sk_g) if mask is not None else np.zeros(L.shape, bool)
    neu = (np.hypot(gt_ab[..., 0], gt_ab[..., 1]) < NEUTRAL_CHROMA) & (L >= NEUTRAL_L[0]) & (L <= NEUTRAL_L[1])
    return dict(se=float(((ours_ab - gt_ab) ** 2).sum()), se0=float((gt_ab ** 2).sum()), n=gt_ab.size,
                cf=cc.colourfulness(rgb_ours * 255), cf0=cc.colourfulness(rgb_orig * 255),
                sk_n=int(sel.sum()), sk_ok=int((sel & sk_o).sum()),
                neu_n=int(neu.sum()), neu_c=float(np.hypot(ours_ab[..., 0], ours_ab[..., 1])[neu].sum()),
                neu_c0=float(np.hypot(gt_ab[..., 0], gt_ab[..., 1])[neu].sum()))


def summarise_place(figs, flicker=None):
    t = {k: sum(f[k] for f in figs) for k in figs[0]}
    r = dict(images=len(figs), rmse_ratio=math.sqrt(t["se"] / t["n"]) / max(math.sqrt(t["se0"] / t["n"]), 1e-9),
             rmse_ab_ours=math.sqrt(t["se"] / t["n"]), rmse_ab_grey=math.sqrt(t["se0"] / t["n"]),
             colourfulness_ratio=float(np.mean([f["cf"] for f in figs]) / max(np.mean([f["cf0"] for f in figs]), 1e-9)),
             skin_pixels=t["sk_n"], skin_ok_fraction=(t["sk_ok"] / t["sk_n"]) if t["sk_n"] >= SKIN_MIN_PIXELS else None,
             neutral_pixels=t["neu_n"], neutral_chroma_ours=t["neu_c"] / max(t["neu_n"], 1),
             neutral_chroma_original=t["neu_c0"] / max(t["neu_n"], 1))
    if flicker:
        r.update(flicker_ours=flicker[0], flicker_original=flicker[1], flicker_ratio=flicker[0] / max(flicker[1], 1e-9))
    return r


def places_metrics(sessions, segmenter, w, cut, grid_dir=None, validation=False, limit=0):
    """The places evaluation (tools/colorizer/places.py: the selection rule). Returns {model: {place: figures}}
    plus pooled rows ("photos", "webcam look", "clips"); grids: one PNG per place under grid_dir."""
    import places as pl
    items = pl.val_photos(limit=limit) if validation else pl.eval_photos()
    clips = {} if validation else pl.clip_windows()
    res = {k: {} for k in sessions}
    pooled = {k: {"photo": [], "webcam look": []} for k in sessions}
    grids = {}
    for place, kind, rgb in items:
        lab = rgb2lab(rgb.astype(np.float64) / 255.0)
        mask = segmenter(rgb) if segmenter else None
        grey = np.clip(lab2rgb(np.concatenate([lab[..., :1], np.zeros_like(lab[..., 1:])], -1)), 0, 1)
        row = [grey]
        for k, sess in sessions.items():
            ab = predict(sess, lab[..., 0].astype(np.float32))
            ours = np.clip(lab2rgb(np.concatenate([lab[..., :1], ab], -1)), 0, 1)
            f = place_figures(ab, lab[..., 1:], lab[..., 0], ours, rgb / 255.0, mask)
            res[k][f"{place} ({kind})"] = summarise_place([f])
            pooled[k][kind].append(f)
            row.append(ours)
        row.append(rgb / 255.0)
        grids.setdefault(place, []).append(row)
    for c, frames in clips.items():
        labs = [rgb2lab(fr.astype(np.float64) / 255.0).astype(np.float32) for fr in frames]
        masks = [segmenter(fr) for fr in frames] if segmenter else [None] * len(frames)
        picks = set(np.linspace(len(frames) // 4, len(frames) - 1, 2).round().astype(int).tolist())
        rows = {i: [np.clip(lab2rgb(np.concatenate([labs[i][..., :1], np.zeros_like(labs[i][..., 1:])], -1)), 0, 1)]
                for i in picks}
        for k, sess in sessions.items():
            size = model_size(sess)
            Lin = [net_input(l[..., 0], size)[0] for l in labs]
            raw = np.stack([sess.run(["ab"], {"L": (L / 50.0 - 1.0)[None, None].astype(np.float32)})[0][0] for L in Lin])
            sm, _ = smooth_sequence(raw, Lin, w, cut) if w > 0 else (raw, 0)
            figs, fo, fg, prev = [], 0.0, 0.0, None
            for i, lab in enumerate(labs):
                H, W = lab.shape[:2]
                ab = upsample_ab(sm[i], W, H)
                ours = np.clip(lab2rgb(np.concatenate([lab[..., :1], ab], -1)), 0, 1)
                figs.append(place_figures(ab, lab[..., 1:], lab[..., 0], ours, frames[i] / 255.0, masks[i]))
                if prev is not None:
                    fo += float(np.abs(ab - prev[0]).mean())
                    fg += float(np.abs(lab[..., 1:] - prev[1]).mean())
                prev = (ab, lab[..., 1:])
                if i in rows:
                    rows[i].append(ours)
            n = max(len(labs) - 1, 1)
            res[k][c] = summarise_place(figs, (fo / n, fg / n))
            pooled[k].setdefault("clips", []).extend(figs)
            res[k].setdefault("_clip_flicker", []).append((fo / n, fg / n))
        for i in sorted(rows):
            rows[i].append(frames[i] / 255.0)
            grids.setdefault("hallway", []).append(rows[i])
    for k in sessions:
        fl = res[k].pop("_clip_flicker", None)
        both = pooled[k]["photo"] + pooled[k]["webcam look"]
        if both:
            res[k]["ALL photos, both looks"] = summarise_place(both)
        for kind, figs in pooled[k].items():
            if figs:
                res[k][f"ALL {kind}"] = summarise_place(figs, (sum(a for a, _ in fl) / len(fl), sum(b for _, b in fl) / len(fl))
                                                        if kind == "clips" and fl else None)
        for place, r in res[k].items():
            extra = f"; flicker {r['flicker_ratio']:.2f}x" if "flicker_ratio" in r else ""
            skin = f"{r['skin_ok_fraction']:.2f}" if r["skin_ok_fraction"] is not None else "-"
            print(f"[places{' val' if validation else ''}] {k} {place}: a/b {r['rmse_ratio']:.2f}x grey; colourfulness "
                  f"{r['colourfulness_ratio']:.2f}x; skin kept {skin}; neutral chroma {r['neutral_chroma_ours']:.1f} "
                  f"(orig {r['neutral_chroma_original']:.1f}){extra}")
    if grid_dir:
        os.makedirs(grid_dir, exist_ok=True)
        labels = ("grey (input)",) + tuple(sessions) + ("original",)
        for place, rows in grids.items():
            write_place_grid(os.path.join(grid_dir, f"{place}.png"), rows, labels)
    return res


def write_place_grid(path, rows, labels, cell=(220, 150)):
    pad, head = 4, 18
    W = len(labels) * (cell[0] + pad)
    H = head + len(rows) * (cell[1] + pad)
    img = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)
    for j, t in enumerate(labels):
        d.text((j * (cell[0] + pad) + 6, 4), t, fill=(0, 0, 0))
    for r, row in enumerate(rows):
        for j, im in enumerate(row):
            img.paste(thumb(im, cell), (j * (cell[0] + pad), head + r * (cell[1] + pad)))
    img.save(path, optimize=True)
    print("grid:", path, f"({os.path.getsize(path)} bytes)")


class Gained:
    """A session whose a/b output is multiplied by a chroma gain (the colorize node's vividness: gain = 2 x vividness)."""

    def __init__(self, sess, gain):
        self.sess, self.gain = sess, gain

    def get_inputs(self):
        return self.sess.get_inputs()

    def run(self, names, feeds):
        return [o * self.gain for o in self.sess.run(names, feeds)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+", help="ONNX models; NAME=PATH names one in the output; PATH@T replaces its "
                    "annealed-mean temperature by T (e.g. for a sweep); PATH%%V (or PATH@T%%V) applies the colorize node's "
                    "vividness V (a/b x 2V)")
    ap.add_argument("--val", default="../shared/data/bsds500/val")
    ap.add_argument("--webcam", default="../shared/media/webcam", help="folder of the webcam clips")
    ap.add_argument("--split", default=os.path.join(HERE, "webcam_split.json"), help="held-out clip list")
    ap.add_argument("--clips", help="comma-separated clip names instead of the split's held-out clips")
    ap.add_argument("--segmenter", default=None, help="selfie_segmentation.tflite (default: models/cache/, else "
                    "../shared/models/mediapipe/)")
    ap.add_argument("--smoothing", default="0,0.6", help="comma-separated smoothing weights w to report (0 = none)")
    ap.add_argument("--scene-cut", default="8", help="comma-separated scene-cut thresholds (mean |dL| of the 256x256 input)")
    ap.add_argument("--T", type=float, default=None, help="replace the models' annealed-mean temperature")
    ap.add_argument("--no-photos", action="store_true")
    ap.add_argument("--no-webcam", action="store_true")
    ap.add_argument("--grid", help="write a grey/ours/original grid PNG of 12 photos here (first model)")
    ap.add_argument("--webcam-grid", help="the same for held-out webcam frames (first model, last smoothing setting)")
    ap.add_argument("--json", help="write the metrics here")
    ap.add_argument("--bench", type=int, default=0, help="time this many single-thread predictions (each model)")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N photos (quick check)")
    ap.add_argument("--framegraph", help="path of the framegraph CLI: colorize each photo with FrameGraph's own "
                    "pipeline (pipelines/colorize-image.fg: its Lab, resize, runtime) instead of onnxruntime")
    ap.add_argument("--places", action="store_true", help="the places evaluation (places.py: photos from the tools' wheels, "
                    "the hallway clip), smoothing at the last --smoothing/--scene-cut setting")
    ap.add_argument("--places-val", action="store_true", help="the validation places instead (BSDS500 val, both looks)")
    ap.add_argument("--places-grids", help="folder for one grid PNG per place")
    a = ap.parse_args()

    paths, temps, gains = {}, {}, {}
    for m in a.models:
        name, _, p = m.rpartition("=")
        p, _, t = p.partition("@")
        t, _, v = t.partition("%") if t else ("", "", p.partition("%")[2])
        p = p.partition("%")[0]
        k = name or os.path.basename(p)
        paths[k] = p
        temps[k] = float(t) if t else a.T
        gains[k] = 2.0 * float(v) if v else 1.0
    sessions = {k: session(with_temperature(p, temps[k]) if temps[k] else p, 1) for k, p in paths.items()}
    sessions = {k: Gained(s_, gains[k]) if gains[k] != 1.0 else s_ for k, s_ in sessions.items()}
    root = os.path.dirname(os.path.dirname(HERE))
    out = dict(models={k: dict(path=os.path.relpath(p, root) if os.path.abspath(p).startswith(root + os.sep) else os.path.basename(p),
                               temperature=temps[k] or temperature_of(p)) for k, p in paths.items()})

    if not a.no_photos:
        ph = photo_metrics(sessions, a.val, a.limit, a.grid, a.framegraph, paths)
        for k in paths:
            out["models"][k]["photos_bsds500_val"] = ph[k]
    if not a.no_webcam:
        held = a.clips.split(",") if a.clips else json.load(open(a.split))["heldout"]
        clips = {c: os.path.join(a.webcam, c + ".mkv") for c in held}
        seg = a.segmenter
        if seg is None:
            root = os.path.dirname(os.path.dirname(HERE))
            for cand in (os.path.join(root, "models/cache/selfie_segmentation.tflite"),
                         os.path.join(root, "../shared/models/mediapipe/selfie_segmentation.tflite")):
                if os.path.exists(cand):
                    seg = cand
                    break
        segmenter = Segmenter(seg) if seg else None
        if not segmenter:
            print("no selfie_segmentation.tflite found: skin check skipped")
        settings = []
        for w in (float(v) for v in a.smoothing.split(",")):
            for cut in ([0.0] if w == 0 else [float(v) for v in a.scene_cut.split(",")]):
                settings.append((w, cut))
        wc, pc = webcam_metrics(sessions, clips, segmenter, settings, a.webcam_grid)
        for k in paths:
            out["models"][k]["webcam_heldout"] = dict(clips=held, settings=wc[k], per_clip=pc[k])
        out["skin_test"] = dict(hue_degrees=list(SKIN_HUE), min_chroma=SKIN_CHROMA, mask="selfie_segmentation > 0.5",
                                segmenter=os.path.basename(seg) if seg else None)

    if a.places or a.places_val:
        try:
            import ai_edge_litert  # noqa: F401
            names = ("selfie_segmentation.tflite",)
        except ImportError:
            names = ("selfie_segmentation.onnx",)
        seg = a.segmenter or next((c for n in names for c in (os.path.join(root, "models/cache", n),
                                                              os.path.join(root, "../shared/models/mediapipe", n))
                                   if os.path.exists(c)), None)
        print("[places] person mask:", seg)
        w = float(a.smoothing.split(",")[-1])
        cut = float(a.scene_cut.split(",")[-1])
        pr = places_metrics(sessions, Segmenter(seg) if seg else None, w, cut, a.places_grids, validation=a.places_val,
                            limit=a.limit)
        for k in paths:
            out["models"][k]["places_validation" if a.places_val else "places"] = dict(smoothing=w, scene_cut=cut, places=pr[k],
                                                                                        vividness_gain=gains[k])

    if a.bench:
        import onnxruntime as ort
        for k, sess in sessions.items():
            W_, H_ = model_size(sess)
            x = np.random.default_rng(0).uniform(-1, 1, (1, 1, H_, W_)).astype(np.float32)
            for _ in range(20):
                sess.run(["ab"], {"L": x})
            ts = []
            for _ in range(a.bench):
                t = time.perf_counter()
                sess.run(["ab"], {"L": x})
                ts.append((time.perf_counter() - t) * 1e3)
            ts = np.array(ts)
            out["models"][k]["bench"] = dict(runtime=f"onnxruntime {ort.__version__} CPUExecutionProvider, 1 intra-op thread",
                                             runs=a.bench, median_ms=float(np.median(ts)), p10_ms=float(np.percentile(ts, 10)),
                                             p90_ms=float(np.percentile(ts, 90)), min_ms=float(ts.min()),
                                             affinity=sorted(os.sched_getaffinity(0)))
            print(f"[bench] {k}: one prediction, 1 thread: median {np.median(ts):.2f} ms (p10 {np.percentile(ts, 10):.2f}, "
                  f"p90 {np.percentile(ts, 90):.2f}) over {a.bench} runs, cpus {sorted(os.sched_getaffinity(0))}")
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
