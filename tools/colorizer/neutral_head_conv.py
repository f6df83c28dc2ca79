#!/usr/bin/env python3
"""Round 2 of the neutral head (issue 46, helper issue46e): a small convolutional head with spatial context, trained
with PyTorch on frozen v4.1 taps (GPU if there is one). Writes an .npz that neutral_gate.py folds like the linear head.

Why: the linear head of round 1 separates neutral cells from the others with AUC 0.83 on held-back training-side
images; on the same cells a gradient-boosted model with 7x7 box-averaged neighbours reached AUC 0.92 (0.93 with the
frame's mean features), so context and non-linearity matter.

Head (ONNX layout; the colour network stays v4.1 bit for bit):
    h1 = relu(W1f * f + W1p * p + b1)       1x1, 200 -> 16   (f: the decoder's 32 features, p: the 168-bin softmax)
    h2 = relu(W2 (3x3) * h1 + b2)            16 -> 16, zero padding 1
    h3 = relu(W3 (3x3) * h2 + b3)            16 -> 16
    z  = W4 * h3 + b4                        1x1, 16 -> 2 (two identical channels), P = sigmoid(z)
about 18 M multiply-adds at 48x48 (v4.1: 218 M; onnx_stats.py: 236.4 M in all with the cast removal). Loss: plain binary cross-entropy against the share of each cell's
full-resolution pixels whose true chroma < 4, every cell of every image; AdamW, cosine, fixed steps.
Training data: as neutral_gate.py's (the 83 Debian training pictures, the 20 held-out BSDS500 train photos, every 8th
frame of the training office clips), each photo as shipped and with THREE seeded webcam looks ("#train1".."#train3").
A first fit on 80 % of the images (by image) reports the AUC on the other 20 % beside the linear head's on the same
split; the exported head is then fitted on all images with the same settings.

Usage: python3 tools/colorizer/neutral_head_conv.py models/colorizer/colorizer.onnx OUT.npz --debian-train DIR [--bsds-train DIR]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from skimage.color import rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import neutral_gate as ng  # noqa: E402
import places as pl  # noqa: E402
from metrics import net_input, session  # noqa: E402

HID = 16


def images(bsds_train, debian_train, webcam, split, looks=3, bsds_skip=180):
    for n, rgb in ng.training_images(bsds_train, debian_train, webcam, split, bsds_skip=bsds_skip):
        if "#train" in n:
            continue                      # neutral_gate.py's two looks: replaced by three below
        yield n, rgb
        if ":" not in n:                  # photos (not office frames): seeded webcam looks
            for k in range(1, looks + 1):
                yield f"{n}#train{k}", pl.webcam_look(rgb, f"{n}#train{k}")


def taps(model, items):
    blob, fname, pname = ng.with_taps(model)
    sess = session(blob, 4)
    X, Y = [], []
    for name, rgb in items:
        lab = rgb2lab(rgb.astype(np.float64) / 255.0)
        f, p = sess.run([fname, pname], {"L": net_input(lab[..., 0].astype(np.float32), (192, 192))[1]})
        X.append(np.concatenate([f[0], p[0]]).astype(np.float16))
        Y.append(ng.cell_targets(lab, f.shape[3], f.shape[2]).astype(np.float16))
    return np.stack(X), np.stack(Y), f.shape[1]


class Head(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.c1 = nn.Conv2d(cin, HID, 1)
        self.c2 = nn.Conv2d(HID, HID, 3, padding=1)
        self.c3 = nn.Conv2d(HID, HID, 3, padding=1)
        self.c4 = nn.Conv2d(HID, 1, 1)

    def forward(self, x):
        return self.c4(F.relu(self.c3(F.relu(self.c2(F.relu(self.c1(x)))))))


def train(X, Y, mu, sd, steps, dev, seed=0):
    torch.manual_seed(seed)
    net = Head(X.shape[1]).to(dev)
    Xt = torch.from_numpy(X).to(dev)
    Yt = torch.from_numpy(Y).to(dev)
    m_, s_ = torch.from_numpy(mu).to(dev)[None, :, None, None], torch.from_numpy(sd).to(dev)[None, :, None, None]
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.05)
    g = torch.Generator(device="cpu").manual_seed(seed)
    for it in range(steps):
        idx = torch.randint(0, len(Xt), (64,), generator=g).to(dev)
        x = (Xt[idx].float() - m_) / s_
        y = Yt[idx].float()[:, None]
        if torch.rand(1, generator=g).item() < 0.5:          # horizontal flips: the maps of a mirrored frame, roughly
            x, y = x.flip(3), y.flip(3)
        loss = F.binary_cross_entropy_with_logits(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return net, float(loss)


def predict(net, X, mu, sd, dev):
    with torch.no_grad():
        m_, s_ = torch.from_numpy(mu).to(dev)[None, :, None, None], torch.from_numpy(sd).to(dev)[None, :, None, None]
        return torch.cat([torch.sigmoid(net((torch.from_numpy(X[i:i + 64]).to(dev).float() - m_) / s_)).cpu()
                          for i in range(0, len(X), 64)]).numpy()[:, 0]


def export(net, mu, sd, nf):
    """Weights in ONNX layout with the input standardisation folded into the first layer."""
    w1 = net.c1.weight.detach().cpu().numpy()[:, :, 0, 0] / sd[None]
    b1 = net.c1.bias.detach().cpu().numpy() - (w1 * mu[None]).sum(1)
    t = lambda v: v.detach().cpu().numpy().astype(np.float32)  # noqa: E731
    return dict(kind="conv", n_features=nf, w1f=w1[:, :nf, None, None].astype(np.float32),
                w1p=w1[:, nf:, None, None].astype(np.float32), b1=b1.astype(np.float32),
                w2=t(net.c2.weight), b2=t(net.c2.bias), w3=t(net.c3.weight), b3=t(net.c3.bias),
                w4=np.repeat(t(net.c4.weight), 2, 0), b4=np.repeat(t(net.c4.bias), 2, 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--bsds-train", default="../shared/data/bsds500/train")
    ap.add_argument("--debian-train", default=".colorizer-carry/debian/train")
    ap.add_argument("--webcam", default="../shared/media/webcam")
    ap.add_argument("--split", default=os.path.join(HERE, "webcam_split.json"))
    ap.add_argument("--bsds-skip", type=int, default=180, help="0 when --bsds-train holds only the 20 held-out photos")
    ap.add_argument("--steps", type=int, default=3000)
    a = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.time()
    X, Y, nf = taps(a.model, images(a.bsds_train, a.debian_train, a.webcam, a.split, bsds_skip=a.bsds_skip))
    print(f"[head] {len(X)} training images, taps {X.shape}, {time.time() - t0:.0f} s; device {dev}")
    flat = X.transpose(1, 0, 2, 3).reshape(X.shape[1], -1).astype(np.float32)
    mu, sd = flat.mean(1), flat.std(1) + 1e-6
    rng = np.random.default_rng(1)
    test = np.zeros(len(X), bool)
    test[rng.choice(len(X), len(X) // 5, replace=False)] = True
    from sklearn.metrics import roc_auc_score
    net, loss = train(X[~test], Y[~test], mu, sd, a.steps, dev)
    P = predict(net, X[test], mu, sd, dev)
    yt = Y[test].astype(np.float32) > 0.5
    auc = roc_auc_score(yt.ravel(), P.ravel())
    # the linear head on the same split (512 cells per training image, as neutral_gate.py fits it)
    cells = rng.choice(X.shape[2] * X.shape[3], 512, replace=False)
    Xl = X[~test].reshape(int((~test).sum()), X.shape[1], -1)[:, :, cells].transpose(0, 2, 1).reshape(-1, X.shape[1]).astype(np.float32)
    yl = Y[~test].reshape(int((~test).sum()), -1)[:, cells].reshape(-1).astype(np.float32)
    w, c, _ = ng.fit_logistic(Xl, yl)
    Zt = np.einsum("nchw,c->nhw", X[test].astype(np.float32), w) + c
    auc_lin = roc_auc_score(yt.ravel(), (1 / (1 + np.exp(-Zt))).ravel())
    print(f"[head] held-back 20 % of images ({int(test.sum())}): conv head AUC {auc:.3f} (final loss {loss:.4f}); "
          f"linear head on the same split AUC {auc_lin:.3f}; mean P on neutral cells {P[yt].mean():.3f}, others {P[~yt].mean():.3f}")
    net, loss = train(X, Y, mu, sd, a.steps, dev)
    np.savez(a.out, **export(net, mu, sd, nf), images=len(X), auc_heldback=auc, auc_linear_heldback=auc_lin, steps=a.steps)
    print(f"[head] fitted on all {len(X)} images (final loss {loss:.4f}) -> {a.out}; {time.time() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
