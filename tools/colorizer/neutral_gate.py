#!/usr/bin/env python3
"""A "neutral" head for the shipped colorizer (issue 46, helper issue46e): a per-pixel probability that the true
colour is neutral (chroma < 4), learnt on frozen v4.1 features, used to gate the chroma.

Why: v4.1's classifier is trained with class rebalancing, which pushes probability away from the grey bins, so its
softmax does not say "this surface is neutral" (calibrate.py's fit gave the neutral-bin mass a weight of 0). A
separate head trained with a plain, unweighted binary cross-entropy on "true chroma < 4" can be calibrated.

Head (logistic regression, nothing else trained; the colour network stays v4.1 bit for bit):
    z = w_f . f + w_p . p + c        f: the decoder's last feature map (32 ch, the classifier's input, 48x48)
                                      p: the decoder's softmax at the graph's T (168 ch)
    P = sigmoid(z)                    target: the share of the cell's full-resolution pixels whose true chroma < 4
Two uses of P, folded into the ONNX after the annealed mean (ops FrameGraph runs: Conv, Add, Sigmoid,
GlobalAveragePool, Div, Sub, Clip, Mul; the output keeps its name, shape and units):
  1. gate (idea b):       ab' = ab * clip(g * (1 - h * P), 0, g)
     g > 1 gives more colour where the head is sure the surface is not neutral (the hallway is too grey), h sets how
     strongly likely-neutral pixels are muted (h >= 1: fully grey where P >= 1/h).
  2. cast removal (idea a, grey-world on the PREDICTION, weighted by P, with a confidence prior):
                          cast = sum(P * ab) / (sum(P) + m0 * N)      (per frame, N = 48*48 cells)
                          ab'  = (ab - cast) * clip(g * (1 - h * P), 0, g)
     the frame's colour bias on the surfaces the head calls neutral, shrunk towards 0 when few cells look neutral.
     Why: on training-side photos v4.1's chroma on truly neutral pixels (11.5 on average) is mostly one offset per
     image (|mean a/b vector| 10.0 there; 5.8 left after removing the true mean).

Training data of the head (never a validation or evaluation place, and images the colour network never trained on,
so that its features look as they do on new places): the 83 Debian training pictures (fetch_debian_photos.py,
split "train"), the 20 held-out BSDS500 train photos (the last 20 by name) and, for the webcam look of a room,
every 8th frame of the 11 training office clips (webcam_split.json; these the network did train on). Each photo
as shipped and with two seeded webcam looks (places.webcam_look, seeds "<name>#train1", "#train2"). 512 random
output cells per image (seeded).

Usage (repo root):
  .venv-tools/bin/python tools/colorizer/neutral_gate.py fit models/colorizer/colorizer.onnx /tmp/gate.npz
  .venv-tools/bin/python tools/colorizer/neutral_gate.py fold models/colorizer/colorizer.onnx /tmp/gate.npz OUT.onnx --g 1.15 --h 1.0 [--cast --m0 0.05]
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper
from PIL import Image
from skimage.color import rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import places as pl  # noqa: E402
from metrics import decode_clip, net_input, session  # noqa: E402

NEUTRAL_CHROMA = 4.0
CELLS_PER_IMAGE = 512


def tail_nodes(m):
    """(head Conv, Softmax, centres Conv) of an exported colorizer: logits = head(features) -> Mul(1/T) -> Softmax -> Conv."""
    by_out = {o: n for n in m.graph.node for o in n.output}
    sm = next(n for n in m.graph.node if n.op_type == "Softmax")
    mul = by_out[sm.input[0]]
    head = by_out[mul.input[0]] if mul.input[0] in by_out and by_out[mul.input[0]].op_type == "Conv" else by_out[mul.input[1]]
    dec = next(n for n in m.graph.node if n.op_type == "Conv" and n.input[0] == sm.output[0])
    return head, sm, dec


def with_taps(path):
    """The model's bytes with the features and the softmax as extra outputs, and their names."""
    m = onnx.load(path)
    head, sm, _ = tail_nodes(m)
    for name in (head.input[0], sm.output[0]):
        m.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    return m.SerializeToString(), head.input[0], sm.output[0]


def training_images(bsds_train, debian_train, webcam_dir, split_path, clip_step=8, bsds_skip=180):
    """Yield (name, rgb uint8) of the training side only (see the module docstring). bsds_skip: the photos of
    bsds_train before these many (by name) are skipped (180: the folder holds all 200; 0: only the held-out 20)."""
    names = [os.path.join(bsds_train, f) for f in sorted(f for f in os.listdir(bsds_train) if f.lower().endswith((".jpg", ".png")))[bsds_skip:]]
    names += [os.path.join(debian_train, f) for f in sorted(os.listdir(debian_train)) if f.lower().endswith((".jpg", ".png"))]
    for path in names:
        n = os.path.basename(path)
        rgb = np.asarray(Image.open(path).convert("RGB"))
        yield n, rgb
        for k in (1, 2):
            yield f"{n}#train{k}", pl.webcam_look(rgb, f"{n}#train{k}")
    held = set(json.load(open(split_path))["heldout"])
    for c in sorted(f[:-4] for f in os.listdir(webcam_dir) if f.endswith(".mkv")):
        if c in held:
            continue
        fr = decode_clip(os.path.join(webcam_dir, c + ".mkv"))
        for i in range(0, len(fr), clip_step):
            yield f"{c}:{i}", fr[i]


def cell_targets(lab, w, h):
    """Share of each output cell's pixels whose true chroma < 4 (box-averaged to the output grid)."""
    neu = (np.hypot(lab[..., 1], lab[..., 2]) < NEUTRAL_CHROMA).astype(np.float32)
    return np.asarray(Image.fromarray(neu, mode="F").resize((w, h), Image.BOX))


def extract(model, images, seed=0):
    blob, fname, pname = with_taps(model)
    sess = session(blob, 1)
    size = tuple(int(v) for v in sess.get_inputs()[0].shape[3:1:-1])
    rng = np.random.default_rng(seed)
    X, y, groups = [], [], []
    for gi, (name, rgb) in enumerate(images):
        lab = rgb2lab(rgb.astype(np.float64) / 255.0)
        f, p = sess.run([fname, pname], {"L": net_input(lab[..., 0].astype(np.float32), size)[1]})
        f, p = f[0], p[0]
        C, h, w = f.shape
        t = cell_targets(lab, w, h)
        idx = rng.choice(h * w, CELLS_PER_IMAGE, replace=False)
        X.append(np.concatenate([f.reshape(C, -1), p.reshape(p.shape[0], -1)])[:, idx].T)
        y.append(t.reshape(-1)[idx])
        groups.append(np.full(len(idx), gi))
    return np.concatenate(X).astype(np.float32), np.concatenate(y).astype(np.float32), np.concatenate(groups), f.shape[0]


def fit_logistic(X, y, l2=1e-3):
    """Soft-label logistic regression (mean BCE + l2 |w|^2 on standardised inputs), L-BFGS. Returns (w, c) on raw inputs."""
    from scipy.optimize import minimize
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = (X - mu) / sd
    n, d = Z.shape

    def f(theta):
        w, c = theta[:d], theta[d]
        z = Z @ w + c
        lp = -np.logaddexp(0, -z)          # log sigmoid
        ln = -np.logaddexp(0, z)           # log (1 - sigmoid)
        loss = -(y * lp + (1 - y) * ln).mean() + l2 * (w @ w)
        r = (1 / (1 + np.exp(-z)) - y) / n
        return loss, np.concatenate([Z.T @ r + 2 * l2 * w, [r.sum()]])

    res = minimize(f, np.zeros(d + 1), jac=True, method="L-BFGS-B", options=dict(maxiter=500))
    w = res.x[:d] / sd
    c = res.x[d] - (res.x[:d] * mu / sd).sum()
    return w.astype(np.float32), np.float32(c), float(res.fun)


def logit_nodes(G, feat, prob):
    """(initialisers, nodes) computing the head's logit "gate/z" ([1,2,H,W], two identical channels) from the features
    and the softmax: the linear head of this file, or neutral_head_conv.py's convolutional one (kind "conv")."""
    A = lambda a, n: numpy_helper.from_array(np.asarray(a, np.float32), n)  # noqa: E731
    if "kind" in G and str(G["kind"]) == "conv":
        inits = [A(G[k], f"gate.{k}") for k in ("w1f", "w1p", "b1", "w2", "b2", "w3", "b3", "w4", "b4")]
        nodes = [helper.make_node("Conv", [feat, "gate.w1f", "gate.b1"], ["gate/h1f"], name="/gate/C1f"),
                 helper.make_node("Conv", [prob, "gate.w1p"], ["gate/h1p"], name="/gate/C1p"),
                 helper.make_node("Add", ["gate/h1f", "gate/h1p"], ["gate/h1s"], name="/gate/A1"),
                 helper.make_node("Relu", ["gate/h1s"], ["gate/h1"], name="/gate/R1"),
                 helper.make_node("Conv", ["gate/h1", "gate.w2", "gate.b2"], ["gate/h2s"], name="/gate/C2",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["gate/h2s"], ["gate/h2"], name="/gate/R2"),
                 helper.make_node("Conv", ["gate/h2", "gate.w3", "gate.b3"], ["gate/h3s"], name="/gate/C3",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["gate/h3s"], ["gate/h3"], name="/gate/R3"),
                 helper.make_node("Conv", ["gate/h3", "gate.w4", "gate.b4"], ["gate/z"], name="/gate/C4")]
        return inits, nodes
    w, c, nf = G["w"], float(G["c"]), int(G["n_features"])
    wf = np.repeat(w[None, :nf, None, None], 2, 0)            # two identical channels: no broadcasting of P
    wp = np.repeat(w[None, nf:, None, None], 2, 0)
    inits = [A(wf, "gate.wf"), A([c, c], "gate.c"), A(wp, "gate.wp")]
    nodes = [helper.make_node("Conv", [feat, "gate.wf", "gate.c"], ["gate/zf"], name="/gate/Features"),
             helper.make_node("Conv", [prob, "gate.wp"], ["gate/zp"], name="/gate/Probabilities"),
             helper.make_node("Add", ["gate/zf", "gate/zp"], ["gate/z"], name="/gate/Add")]
    return inits, nodes


def fold(model, gate, out, g, h, cast=False, m0=0.05):
    """Write `model` with the neutral gate (and, with cast=True, the cast removal) folded in after the annealed mean."""
    G = np.load(gate)
    m = onnx.load(model)
    head, sm, dec = tail_nodes(m)
    final = dec.output[0]
    raw = final + "_ungated"
    dec.output[0] = raw
    inits, nodes = logit_nodes(G, head.input[0], sm.output[0])
    inits += [numpy_helper.from_array(np.full((2, 1, 1, 1), -g * h, np.float32), "gate.slope"),
              numpy_helper.from_array(np.full((2,), g, np.float32), "gate.g"),
              numpy_helper.from_array(np.array(0.0, np.float32), "gate.zero"),
              numpy_helper.from_array(np.array(g, np.float32), "gate.max")]
    nodes += [helper.make_node("Sigmoid", ["gate/z"], ["gate/neutral"], name="/gate/Sigmoid"),
              helper.make_node("Conv", ["gate/neutral", "gate.slope", "gate.g"], ["gate/pre"], name="/gate/Scale", group=2),
              helper.make_node("Clip", ["gate/pre", "gate.zero", "gate.max"], ["gate/scale"], name="/gate/Clip")]
    src = raw
    if cast:
        inits.append(numpy_helper.from_array(np.array(m0, np.float32), "gate.m0"))
        nodes += [helper.make_node("Mul", [raw, "gate/neutral"], ["gate/pab"], name="/gate/WeightAB"),
                  helper.make_node("GlobalAveragePool", ["gate/pab"], ["gate/num"], name="/gate/MeanPAB"),
                  helper.make_node("GlobalAveragePool", ["gate/neutral"], ["gate/mass"], name="/gate/MeanP"),
                  helper.make_node("Add", ["gate/mass", "gate.m0"], ["gate/den"], name="/gate/Prior"),
                  helper.make_node("Div", ["gate/num", "gate/den"], ["gate/cast"], name="/gate/Cast"),
                  helper.make_node("Sub", [raw, "gate/cast"], ["gate/uncast"], name="/gate/Uncast")]
        src = "gate/uncast"
    nodes.append(helper.make_node("Mul", [src, "gate/scale"], [final], name="/gate/Mul"))
    m.graph.initializer.extend(inits)
    idx = list(m.graph.node).index(dec) + 1
    for k, nd in enumerate(nodes):
        m.graph.node.insert(idx + k, nd)
    onnx.checker.check_model(m)
    onnx.save(m, out)


def reference(ab, f, p, w, c, g, h, cast=False, m0=0.05):
    """numpy of what fold() puts in the graph for the linear head (one frame: ab [2,H,W], f [C,H,W], p [Q,H,W])."""
    nf = f.shape[0]
    P = 1 / (1 + np.exp(-(np.tensordot(w[:nf], f, 1) + np.tensordot(w[nf:], p, 1) + c)))
    if cast:
        ab = ab - ((P * ab).mean((1, 2)) / (P.mean() + m0))[:, None, None]
    return ab * np.clip(g * (1 - h * P), 0, g)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a1 = sub.add_parser("fit")
    a1.add_argument("model")
    a1.add_argument("out", help=".npz with the head's weights")
    a1.add_argument("--bsds-train", default="../shared/data/bsds500/train")
    a1.add_argument("--debian-train", default=".colorizer-carry/debian/train", help="fetch_debian_photos.py --out DIR: DIR/train")
    a1.add_argument("--webcam", default="../shared/media/webcam")
    a1.add_argument("--split", default=os.path.join(HERE, "webcam_split.json"))
    a1.add_argument("--limit", type=int, default=0, help="only the first N training images (smoke)")
    a1.add_argument("--l2", type=float, default=1e-3)
    a2 = sub.add_parser("fold")
    a2.add_argument("model")
    a2.add_argument("gate")
    a2.add_argument("out")
    a2.add_argument("--g", type=float, required=True)
    a2.add_argument("--h", type=float, required=True)
    a2.add_argument("--cast", action="store_true", help="also remove the P-weighted cast")
    a2.add_argument("--m0", type=float, default=0.05, help="the cast's prior mass (share of the cells)")
    a = ap.parse_args()
    if a.cmd == "fold":
        fold(a.model, a.gate, a.out, a.g, a.h, a.cast, a.m0)
        print("folded:", a.out)
        return
    imgs = training_images(a.bsds_train, a.debian_train, a.webcam, a.split)
    if a.limit:
        import itertools
        imgs = itertools.islice(imgs, a.limit)
    X, y, groups, nf = extract(a.model, imgs)
    # a check on unseen images: fit on 80 % of the images (by image), report on the other 20 %, then fit on all
    rng = np.random.default_rng(1)
    ng = groups.max() + 1
    test = np.isin(groups, rng.choice(ng, max(ng // 5, 1), replace=False))
    w, c, _ = fit_logistic(X[~test], y[~test], a.l2)
    P = 1 / (1 + np.exp(-(X[test] @ w + c)))
    yt = y[test] > 0.5
    from sklearn.metrics import roc_auc_score
    auc = roc_auc_score(yt, P) if 0 < yt.sum() < len(yt) else float("nan")
    print(f"[gate] {ng} training images, {len(y)} cells, neutral share {(y > 0.5).mean():.3f}; held-back 20 % of images: "
          f"AUC {auc:.3f}, mean P on neutral cells {P[yt].mean():.3f}, on the others {P[~yt].mean():.3f}")
    w, c, loss = fit_logistic(X, y, a.l2)
    np.savez(a.out, w=w, c=c, n_features=nf, images=ng, cells=len(y), l2=a.l2, loss=loss, auc_heldback=auc)
    print(f"[gate] fitted on all: loss {loss:.4f} -> {a.out}")


if __name__ == "__main__":
    main()
