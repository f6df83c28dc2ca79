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
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", path], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    w, h = (int(v) for v in probe.split(",")[:2])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-vsync", "0", "-"],
                         check=True, stdout=subprocess.PIPE).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


class Segmenter:
    """MediaPipe selfie segmentation (.tflite) through LiteRT: frame -> person mask (bool, frame size)."""

    def __init__(self, path):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+", help="ONNX models; NAME=PATH names one in the output; PATH@T replaces its "
                    "annealed-mean temperature by T (e.g. for a sweep)")
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
    a = ap.parse_args()

    paths, temps = {}, {}
    for m in a.models:
        name, _, p = m.rpartition("=")
        p, _, t = p.partition("@")
        k = name or os.path.basename(p)
        paths[k] = p
        temps[k] = float(t) if t else a.T
    sessions = {k: session(with_temperature(p, temps[k]) if temps[k] else p, 1) for k, p in paths.items()}
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
