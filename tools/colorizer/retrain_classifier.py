#!/usr/bin/env python3
"""Retrain only the colorizer's colour classifier on the CPU (issue 46, model card "Tried (6)"; helper issue46g).

What is trained: the last 1x1 Conv of the shipped colorizer (32 decoder features -> 168 a/b-bin logits, weights and
bias), nothing else. The encoder and decoder stay v4.1's bit for bit, and so does the in-graph decoding (Mul 1/T with
T 0.7, Softmax, the 1x1 Conv of the 168 bin centres), so the retrained model has the same interface, ops and cost.

Why: no GPU is lent to this session, so synth_rooms.py's rooms ("Tried (5)") cannot fine-tune the whole network. The
classifier can be fitted in numpy on features computed once with onnxruntime: it decides which colour each 48x48
cell gets from what the decoder saw, which is where the rooms' "white wall -> neutral" lesson would first go.

Data (training side only; no validation place, evaluation place or held-out office clip):
  * photos: the first 180 BSDS500 train photos by name (the last 20 held out, as train.py), and the 83 Debian training
    pictures (fetch_debian_photos.py, split "train"); each as shipped and with --looks seeded webcam looks
    (places.webcam_look, seeds "<name>#cls<k>": other seeds than the evaluation's and neutral_gate.py's);
  * webcam: every --clip-step-th frame of the 11 training office clips (webcam_split.json), decoded as metrics.py does;
  * rooms: synth_rooms.py's rooms (a folder of .jpg), each as drawn and with --looks webcam looks.
Per image: the L channel (skimage rgb2lab), stretched to 192x192 as metrics.py (PIL bilinear), L/50 - 1 into the ONNX
cut at the classifier's input ([1,32,48,48]); the target a/b is the image's a/b box-averaged to 48x48 (the area
averaging of train.py / neutral_gate.py). Every cell is kept (features float16).

Loss (v4's as far as it carries over; train.py): cross-entropy of softmax(logits) (T 1 in training, as train.py)
against soft targets over the 168 bins (5 nearest, Gaussian sigma 5), class rebalancing w = ((1 - lam) p~ + lam/Q)^-1,
lam 0.5, p~ the bins' frequency of the training cells as mixed (smoothed sigma 5), normalised sum p~ w = 1; the sources
mixed as train.py samples them: webcam share 0.25 of the rows, the photo rows split (1 - room_share) photos / room_share
rooms; v4's skin weight x3 on webcam cells whose true a/b is skin-hued (chroma >= 5, hue 15-80 degrees); optionally
train.py's --neutral-weight on cells whose true chroma < 4 ("Tried (3)"); plus an L2 pull l2 * (|W - W0|^2 + |b - b0|^2) towards v4.1's weights. Optimiser: L-BFGS (scipy), full batch
over --cells random cells per image (seeded). 10 % of the images of every source (seeded, by image) are held back and
only reported (loss, and the mean chroma at T 0.7 where the truth is neutral).

Usage (repo root; PY a python with the pinned tools packages):
  $PY tools/colorizer/retrain_classifier.py features models/colorizer/colorizer.onnx /tmp/feat.npz \
      --rooms .colorizer-carry/rooms [--looks 1 --clip-step 3]
  $PY tools/colorizer/retrain_classifier.py fit models/colorizer/colorizer.onnx /tmp/feat.npz OUT.onnx \
      --room-share 0.3 --l2 1e-3
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
from PIL import Image
from skimage.color import rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import colorcommon as cc  # noqa: E402
import places as pl  # noqa: E402
from metrics import decode_clip, net_input, session  # noqa: E402
from neutral_gate import tail_nodes, with_taps  # noqa: E402

NUM_HOLDOUT = 20          # the last 20 BSDS500 train photos by name: never used
NEUTRAL_CHROMA = 4.0      # metrics.py's "neutral" (the truth's chroma < 4)
WEBCAM_SHARE = 0.25       # v4's --webcam-frac


def list_jpgs(d):
    return sorted(f for f in os.listdir(d) if f.lower().endswith((".jpg", ".jpeg", ".png")))


def training_images(a):
    """Yield (source, name, rgb uint8): photos, webcam, rooms (see the module docstring)."""
    bsds = list_jpgs(a.bsds_train)
    assert len(bsds) == 200, len(bsds)
    photos = [os.path.join(a.bsds_train, f) for f in bsds[:-NUM_HOLDOUT]]
    photos += [os.path.join(a.debian_train, f) for f in list_jpgs(a.debian_train)]
    for path in photos:
        n = os.path.basename(path)
        rgb = np.asarray(Image.open(path).convert("RGB"))
        yield "photo", n, rgb
        for k in range(1, a.looks + 1):
            yield "photo", f"{n}#cls{k}", pl.webcam_look(rgb, f"{n}#cls{k}")
    held = set(json.load(open(a.split))["heldout"])
    for c in sorted(f[:-4] for f in os.listdir(a.webcam) if f.endswith(".mkv")):
        if c in held:
            continue
        fr = decode_clip(os.path.join(a.webcam, c + ".mkv"))
        for i in range(0, len(fr), a.clip_step):
            yield "webcam", f"{c}:{i}", fr[i]
    if a.rooms:
        for f in list_jpgs(a.rooms)[:a.max_rooms or None]:
            rgb = np.asarray(Image.open(os.path.join(a.rooms, f)).convert("RGB"))
            yield "room", f, rgb
            for k in range(1, a.looks + 1):
                yield "room", f"{f}#cls{k}", pl.webcam_look(rgb, f"{f}#cls{k}")


def box(x, w, h):
    return np.asarray(Image.fromarray(x.astype(np.float32), mode="F").resize((w, h), Image.BOX))


def features(a):
    blob, fname, _ = with_taps(a.model)
    sess = session(blob, 1)
    size = tuple(int(v) for v in sess.get_inputs()[0].shape[3:1:-1])
    F, AB, src, names = [], [], [], []
    t0 = time.time()
    for i, (s, n, rgb) in enumerate(training_images(a)):
        lab = rgb2lab(rgb.astype(np.float64) / 255.0)
        f = sess.run([fname], {"L": net_input(lab[..., 0].astype(np.float32), size)[1]})[0][0]
        C, h, w = f.shape
        F.append(f.reshape(C, -1).T.astype(np.float16))
        AB.append(np.stack([box(lab[..., 1], w, h), box(lab[..., 2], w, h)], -1).reshape(-1, 2))
        src.append(s)
        names.append(n)
        if i % 100 == 0:
            print(f"[features] {i} images, {time.time() - t0:.0f} s ({s} {n})", flush=True)
    src = np.array(src)
    print(f"[features] {len(F)} images: " + ", ".join(f"{k} {int((src == k).sum())}" for k in ("photo", "webcam", "room")) +
          f"; {time.time() - t0:.0f} s")
    np.savez(a.out, F=np.stack(F), AB=np.stack(AB).astype(np.float32), source=src, name=np.array(names))


def head_params(model):
    m = onnx.load(model)
    head, _, dec = tail_nodes(m)
    I = {t.name: t for t in m.graph.initializer}
    W = numpy_helper.to_array(I[head.input[1]])[:, :, 0, 0].astype(np.float64)
    b = numpy_helper.to_array(I[head.input[2]]).astype(np.float64)
    centres = numpy_helper.to_array(I[dec.input[1]])[:, :, 0, 0].T.astype(np.float64)      # [Q, 2]
    return m, head, W, b, centres


def fold(m, head, W, b, out):
    I = {t.name: t for t in m.graph.initializer}
    I[head.input[1]].CopyFrom(numpy_helper.from_array(W[:, :, None, None].astype(np.float32), head.input[1]))
    I[head.input[2]].CopyFrom(numpy_helper.from_array(b.astype(np.float32), head.input[2]))
    onnx.checker.check_model(m)
    onnx.save(m, out)


def soft_targets(ab, centres, k=5, sigma=5.0):
    """ab [N,2] -> (idx [N,k] of the k nearest bins, nearest first; Gaussian weights [N,k] summing to 1)."""
    idx, w = np.empty((len(ab), k), np.int64), np.empty((len(ab), k), np.float32)
    for s in range(0, len(ab), 1 << 16):
        d2 = ((ab[s:s + (1 << 16), None, :].astype(np.float64) - centres[None]) ** 2).sum(-1)
        i = np.argsort(d2, 1)[:, :k]
        dk = np.take_along_axis(d2, i, 1)
        e = np.exp(-(dk - dk[:, :1]) / (2 * sigma ** 2))
        idx[s:s + (1 << 16)], w[s:s + (1 << 16)] = i, e / e.sum(1, keepdims=True)
    return idx, w


def fit(a):
    from scipy.optimize import minimize
    m, head, W0, b0, centres = head_params(a.model)
    Q, C = W0.shape
    D = np.load(a.features)
    F, AB, src = D["F"], D["AB"], D["source"]
    nimg, ncell = F.shape[:2]
    rng = np.random.default_rng(a.seed)
    held = np.zeros(nimg, bool)
    for s in np.unique(src):
        ii = np.flatnonzero(src == s)
        held[rng.choice(ii, max(1, len(ii) // 10), replace=False)] = True
    share = {"webcam": WEBCAM_SHARE, "photo": (1 - WEBCAM_SHARE) * (1 - a.room_share), "room": (1 - WEBCAM_SHARE) * a.room_share}
    if not (src == "room").any():
        share["photo"] += share.pop("room")

    def cells(sel):
        X, Y, S = [], [], []
        for i in np.flatnonzero(sel):
            j = rng.choice(ncell, a.cells, replace=False) if a.cells < ncell else np.arange(ncell)
            X.append(F[i, j])
            Y.append(AB[i, j])
            S.append(np.full(len(j), i))
        return np.concatenate(X).astype(np.float32), np.concatenate(Y), np.concatenate(S)

    sets = {}
    for part, sel in (("train", ~held), ("held", held)):
        X, Y, S = cells(sel & np.isin(src, list(share)))
        idx, w = soft_targets(Y, centres)
        s_of = src[S]
        sw = np.zeros(len(S), np.float32)
        for s, sh in share.items():
            k = s_of == s
            if k.any():
                sw[k] = sh / k.sum()
        sets[part] = dict(X=X, Y=Y, idx=idx, w=w, sw=sw * len(S), src=s_of)
    T = sets["train"]
    counts = np.bincount(T["idx"][:, 0], weights=T["sw"], minlength=Q)
    prior, cw = cc.rebalance_weights(np.round(counts / counts.sum() * 1e8).astype(np.int64), centres.astype(np.float32),
                                     lam=a.lam, sigma=5.0)
    for P in sets.values():
        nw = np.where(np.hypot(P["Y"][:, 0], P["Y"][:, 1]) < NEUTRAL_CHROMA, a.neutral_weight, 1.0)
        hue = np.degrees(np.arctan2(P["Y"][:, 1], P["Y"][:, 0]))
        skin = (P["src"] == "webcam") & (np.hypot(P["Y"][:, 0], P["Y"][:, 1]) >= 5) & (hue >= 15) & (hue <= 80)
        nw = nw * np.where(skin, a.skin_weight, 1.0)
        P["pw"] = (cw[P["idx"][:, 0]] * P["sw"] * nw).astype(np.float32)
    n = len(T["X"])
    print(f"[fit] shares {share}; train cells {n} ({int((~held).sum())} images), held-back cells {len(sets['held']['X'])}; "
          f"rebalancing weights {cw.min():.3f}..{cw.max():.3f}; l2 {a.l2}, lam {a.lam}, neutral weight {a.neutral_weight}")

    def loss_grad(theta, P, l2):
        W = theta[:Q * C].reshape(Q, C).astype(np.float32)
        b = theta[Q * C:].astype(np.float32)
        Z = P["X"] @ W.T + b
        Z -= Z.max(1, keepdims=True)
        E = np.exp(Z)
        se = E.sum(1, keepdims=True)
        logp = np.take_along_axis(Z, P["idx"], 1) - np.log(se)
        ce = -(logp * P["w"]).sum(1)
        N = len(Z)
        loss = float((ce * P["pw"]).sum() / N)
        G = E / se
        for k in range(P["idx"].shape[1]):
            G[np.arange(N), P["idx"][:, k]] -= P["w"][:, k]
        G *= (P["pw"] / N)[:, None]
        gW = (G.T @ P["X"]).astype(np.float64)
        gb = G.sum(0).astype(np.float64)
        dW, db = W - W0, b - b0
        loss += l2 * float((dW ** 2).sum() + (db ** 2).sum())
        return loss, np.concatenate([(gW + 2 * l2 * dW).ravel(), gb + 2 * l2 * db])

    def report(tag, W, b):
        out = {}
        for part, P in sets.items():
            Z = P["X"] @ W.T.astype(np.float32) + b.astype(np.float32)
            L = loss_grad(np.concatenate([W.ravel(), b]), P, 0.0)[0]
            Zt = Z / 0.7
            Zt -= Zt.max(1, keepdims=True)
            Pt = np.exp(Zt)
            Pt /= Pt.sum(1, keepdims=True)
            ab = Pt @ centres.astype(np.float32)
            neu = np.hypot(P["Y"][:, 0], P["Y"][:, 1]) < NEUTRAL_CHROMA
            r = {"loss": L}
            for s in np.unique(P["src"]):
                k = (P["src"] == s) & neu
                r[f"neutral_chroma_{s}"] = float(np.hypot(ab[k, 0], ab[k, 1]).mean())
                k = P["src"] == s
                r[f"rmse_{s}"] = float(np.sqrt(((ab[k] - P["Y"][k]) ** 2).sum(1).mean()))
                r[f"rmse_grey_{s}"] = float(np.sqrt((P["Y"][k] ** 2).sum(1).mean()))
                r[f"chroma_ratio_{s}"] = float(np.hypot(ab[k, 0], ab[k, 1]).mean() / np.hypot(P["Y"][k, 0], P["Y"][k, 1]).mean())
            out[part] = r
            print(f"[fit] {tag:8s} {part:5s} loss {L:.4f} | " + " ".join(
                f"{s}: neutral chroma {r[f'neutral_chroma_{s}']:.2f}, a/b rmse {r[f'rmse_{s}']:.2f} (grey {r[f'rmse_grey_{s}']:.2f}), "
                f"mean chroma ratio {r[f'chroma_ratio_{s}']:.2f};"
                for s in np.unique(P["src"])), flush=True)
        return out

    before = report("v4.1", W0, b0)
    t0 = time.time()
    res = minimize(loss_grad, np.concatenate([W0.ravel(), b0]), args=(T, a.l2), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=a.iters))
    W, b = res.x[:Q * C].reshape(Q, C), res.x[Q * C:]
    print(f"[fit] L-BFGS {res.nit} iterations, {time.time() - t0:.0f} s, objective {res.fun:.4f} ({res.message}); "
          f"|W - W0| {np.linalg.norm(W - W0):.3f} (|W0| {np.linalg.norm(W0):.3f}), |b - b0| {np.linalg.norm(b - b0):.3f}")
    after = report("fitted", W, b)
    fold(m, head, W, b, a.out)
    json.dump(dict(room_share=a.room_share, l2=a.l2, lam=a.lam, neutral_weight=a.neutral_weight, skin_weight=a.skin_weight, cells=a.cells, seed=a.seed, shares=share, iters=int(res.nit),
                   objective=float(res.fun), dW=float(np.linalg.norm(W - W0)), db=float(np.linalg.norm(b - b0)),
                   before=before, after=after), open(a.out[:-5] + ".json", "w"), indent=1)
    print("[fit] wrote", a.out)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("features")
    f.add_argument("model")
    f.add_argument("out")
    f.add_argument("--bsds-train", default="../shared/data/bsds500/train", help="all 200; the last 20 are skipped")
    f.add_argument("--debian-train", default=".colorizer-carry/debian/train")
    f.add_argument("--webcam", default="../shared/media/webcam")
    f.add_argument("--split", default=os.path.join(HERE, "webcam_split.json"))
    f.add_argument("--rooms", help="folder of synth_rooms.py rooms")
    f.add_argument("--max-rooms", type=int, default=0)
    f.add_argument("--looks", type=int, default=1, help="seeded webcam looks per photo and room")
    f.add_argument("--clip-step", type=int, default=3)
    t = sub.add_parser("fit")
    t.add_argument("model")
    t.add_argument("features")
    t.add_argument("out")
    t.add_argument("--room-share", type=float, default=0.3)
    t.add_argument("--l2", type=float, default=1e-3)
    t.add_argument("--lam", type=float, default=0.5)
    t.add_argument("--neutral-weight", type=float, default=1.0, help="weight of cells whose true chroma < 4 (train.py's "
                   "--neutral-weight, 'Tried (3)')")
    t.add_argument("--skin-weight", type=float, default=3.0, help="v4's x3 on training-clip cells whose true a/b is skin-hued")
    t.add_argument("--cells", type=int, default=256, help="random cells per image (of 48x48)")
    t.add_argument("--iters", type=int, default=200)
    t.add_argument("--seed", type=int, default=46)
    a = ap.parse_args()
    features(a) if a.cmd == "features" else fit(a)


if __name__ == "__main__":
    main()
