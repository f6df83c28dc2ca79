#!/usr/bin/env python3
"""Calibrated colour (issue 46): a per-pixel chroma scale from the prediction's confidence, folded into the ONNX.

Where the model is unsure (probability spread over many colour bins) or thinks the surface is neutral,
a confident-looking annealed mean still paints a hue. This tool fits, on the VALIDATION places
(places.py: BSDS500 val, each photo as shipped and with the webcam look; never the evaluation places),
a scale per output pixel

    s = clip(alpha * q + gamma * n + beta, 0, 1),   q = sum_k p_k^2 (purity: 1 = one bin, ~0 = spread),
                                                    n = sum of p_k over the bins with chroma <= 10 (neutral)

where p is the decoder's own softmax (at the graph's temperature T), by least squares of s * ab against the
photo's a/b (area-averaged to the output grid), over a grid of (alpha, gamma, beta). The scale is folded into
the graph with the ops FrameGraph already runs (Mul, Conv, Add, Clip):

    p = Softmax(logits / T);  ab = Conv_centres(p)                       (as before)
    s2 = Clip(Conv_alpha(p * p) + Conv_gamma,beta(p), 0, 1)              (two identical channels)
    ab_out = ab * s2

so the output "ab" keeps its name, shape and units. The colorize node's `vividness` v then scales the
calibrated a/b by 2v at run time (0.5 = the calibrated colour as exported).

Rule for the vividness default (written before measuring): on the validation places, both looks pooled,
among v in {0.40, 0.45, ..., 1.00} take the one with the lowest a/b RMSE whose colourfulness ratio is at
least 0.80; if none reaches 0.80, the one with the highest colourfulness ratio. (metrics.py --places-val
with MODEL%V measures each v.)

Usage (repo root):
  taskset -c 1 .venv-tools/bin/python tools/colorizer/calibrate.py models/colorizer/colorizer.onnx /tmp/colorizer_cal.onnx
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper
from PIL import Image
from skimage.color import rgb2lab

import places as pl
from metrics import net_input, session

NEUTRAL_BIN_CHROMA = 10.0


def decoder_parts(m):
    """(softmax node, centres [2, Q], output name) of an exported colorizer graph."""
    sm = next(n for n in m.graph.node if n.op_type == "Softmax")
    conv = next(n for n in m.graph.node if n.op_type == "Conv" and n.input[0] == sm.output[0])
    inits = {t.name: t for t in m.graph.initializer}
    w = numpy_helper.to_array(inits[conv.input[1]])           # [2, Q, 1, 1]
    return sm, conv, w[:, :, 0, 0]


def with_probabilities(path):
    m = onnx.load(path)
    sm, _, centres = decoder_parts(m)
    m.graph.output.append(helper.make_tensor_value_info(sm.output[0], onnx.TensorProto.FLOAT, None))
    return m.SerializeToString(), sm.output[0], centres


def features(path, items):
    """Per output pixel of every validation image: ab (2), q, n, and the target a/b (2)."""
    blob, pname, centres = with_probabilities(path)
    sess = session(blob, 1)
    W_, H_ = (int(v) for v in sess.get_inputs()[0].shape[3:1:-1])
    neutral = (np.hypot(centres[0], centres[1]) <= NEUTRAL_BIN_CHROMA).astype(np.float32)
    rows = []
    for _, _, rgb in items:
        lab = rgb2lab(rgb.astype(np.float64) / 255.0)
        ab, p = sess.run(["ab", pname], {"L": net_input(lab[..., 0].astype(np.float32), (W_, H_))[1]})
        ab, p = ab[0], p[0]
        h, w = ab.shape[1:]
        gt = np.stack([np.asarray(Image.fromarray(lab[..., c].astype(np.float32), mode="F").resize((w, h), Image.BOX))
                       for c in (1, 2)])
        q = (p * p).sum(0)
        n = np.tensordot(neutral, p, 1)
        rows.append(np.stack([ab[0], ab[1], q, n, gt[0], gt[1]], -1).reshape(-1, 6))
    return np.concatenate(rows), neutral


def fit(F):
    ab, q, n, gt = F[:, :2], F[:, 2], F[:, 3], F[:, 4:]
    best = None
    for alpha in np.arange(0.0, 4.01, 0.25):
        for gamma in np.arange(-3.0, 0.01, 0.25):
            for beta in np.arange(0.0, 1.51, 0.05):
                s = np.clip(alpha * q + gamma * n + beta, 0, 1)[:, None]
                mse = float(((s * ab - gt) ** 2).mean())
                if best is None or mse < best[0]:
                    best = (mse, float(alpha), float(gamma), float(beta))
    return best


def fold(path, out, alpha, gamma, beta, neutral):
    m = onnx.load(path)
    sm, conv, _ = decoder_parts(m)
    Q = neutral.size
    ab_raw = conv.output[0] + "_uncalibrated"
    final = conv.output[0]
    conv.output[0] = ab_raw
    wa = np.full((2, Q, 1, 1), alpha, np.float32)
    wg = np.repeat((gamma * neutral)[None, :, None, None], 2, 0).astype(np.float32)
    bg = np.full((2,), beta, np.float32)
    m.graph.initializer.extend([numpy_helper.from_array(wa, "cal.alpha"), numpy_helper.from_array(wg, "cal.gamma"),
                                numpy_helper.from_array(bg, "cal.beta"),
                                numpy_helper.from_array(np.array(0.0, np.float32), "cal.zero"),
                                numpy_helper.from_array(np.array(1.0, np.float32), "cal.one")])
    nodes = [helper.make_node("Mul", [sm.output[0], sm.output[0]], ["cal/p2"], name="/cal/Square"),
             helper.make_node("Conv", ["cal/p2", "cal.alpha"], ["cal/purity"], name="/cal/Purity"),
             helper.make_node("Conv", [sm.output[0], "cal.gamma", "cal.beta"], ["cal/neutral"], name="/cal/Neutral"),
             helper.make_node("Add", ["cal/purity", "cal/neutral"], ["cal/pre"], name="/cal/Add"),
             helper.make_node("Clip", ["cal/pre", "cal.zero", "cal.one"], ["cal/scale"], name="/cal/Clip"),
             helper.make_node("Mul", [ab_raw, "cal/scale"], [final], name="/cal/Mul")]
    idx = list(m.graph.node).index(conv) + 1
    for k, nd in enumerate(nodes):
        m.graph.node.insert(idx + k, nd)
    onnx.checker.check_model(m)
    onnx.save(m, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="exported (pruned) colorizer ONNX")
    ap.add_argument("out", help="the calibrated ONNX")
    ap.add_argument("--limit", type=int, default=0, help="only the first N validation photos (quick check)")
    ap.add_argument("--json", help="write the fit here")
    a = ap.parse_args()
    items = pl.val_photos(limit=a.limit)
    F, neutral = features(a.model, items)
    mse, alpha, gamma, beta = fit(F)
    mse0 = float(((F[:, :2] - F[:, 4:]) ** 2).mean())
    mseg = float((F[:, 4:] ** 2).mean())
    print(f"validation places: {len(items)} images, {len(F)} output pixels; a/b RMSE at the output grid: uncalibrated "
          f"{mse0 ** 0.5:.2f}, calibrated {mse ** 0.5:.2f}, grey {mseg ** 0.5:.2f}; alpha {alpha:g} gamma {gamma:g} beta {beta:g}")
    fold(a.model, a.out, alpha, gamma, beta, neutral)
    check = session(a.out, 1)
    x = np.random.default_rng(0).uniform(-1, 1, tuple(int(v) for v in check.get_inputs()[0].shape)).astype(np.float32)
    print("folded:", a.out, "output", check.run(["ab"], {"L": x})[0].shape)
    if a.json:
        json.dump(dict(images=len(items), pixels=len(F), alpha=alpha, gamma=gamma, beta=beta,
                       neutral_bin_chroma=NEUTRAL_BIN_CHROMA, neutral_bins=int(neutral.sum()),
                       rmse_uncalibrated=mse0 ** 0.5, rmse_calibrated=mse ** 0.5, rmse_grey=mseg ** 0.5), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
