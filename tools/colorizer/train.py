#!/usr/bin/env python3
"""Train FrameGraph's small colorizer (L 256x256 in, a/b 64x64 out) and export it to ONNX.

Method: classification over quantised a/b (10-unit grid, in-gamut bins) with soft encoding
(5 nearest bins, Gaussian sigma 5) and class rebalancing (lambda 0.5, prior smoothed with
sigma 5), decoded with the annealed mean (softmax with temperature T, then the expectation
over bin centres), all as in Zhang, Isola & Efros, "Colorful Image Colorization", ECCV 2016.
The decoding is folded into the exported graph: Mul(1/T) -> Softmax(axis=1) -> 1x1 Conv whose
weights are the bin centres, so the ONNX output "ab" is in real Lab units.

Network: MobileNetV2-style encoder (inverted residual blocks, depthwise 3x3) down to 1/32,
U-Net style decoder (bilinear x2 upsampling + 1x1 lateral convs + add) back to 1/4, then a
1x1 classifier over the bins. About 0.29 GMAC (0.58 GFLOP) at 256x256.

Data: photos are decoded once, converted to Lab with skimage, and kept on the GPU; every
batch is a set of random crops (scale 0.3-1 of each side, aspect jitter), flips, and a mild
brightness/contrast jitter on the L input only, resampled with grid_sample.

Usage (GPU machine):
  python3 tools/colorizer/train.py --data .colorizer-carry --out $OUT --minutes 6
A quick check of the whole path (a few steps, export, onnx check):
  python3 tools/colorizer/train.py --data .colorizer-carry --out /tmp/smoke --smoke
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import colorcommon as cc  # noqa: E402

IMG = 256          # network input size
OUT_RES = 64       # a/b output size (1/4)
NUM_HOLDOUT = 20   # last 20 training photos (sorted by name) are held out to choose T


# ----------------------------------------------------------------------------- model
def conv_bn(cin, cout, k=3, s=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class IR(nn.Module):
    """MobileNetV2 inverted residual: 1x1 expand, 3x3 depthwise, 1x1 linear project."""

    def __init__(self, cin, cout, stride=1, t=6):
        super().__init__()
        hid = cin * t
        self.res = stride == 1 and cin == cout
        self.body = nn.Sequential(
            conv_bn(cin, hid, 1),
            conv_bn(hid, hid, 3, stride, groups=hid),
            conv_bn(hid, cout, 1, act=False),
        )

    def forward(self, x):
        y = self.body(x)
        return x + y if self.res else y


def up2(x):
    return F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)


class ColorNet(nn.Module):
    def __init__(self, nbins):
        super().__init__()
        self.stem = conv_bn(1, 16, 3, 2)                                   # 128
        self.e1 = nn.Sequential(IR(16, 24, 2, 2), IR(24, 24, 1, 3))        # 64  (skip1)
        self.e2 = nn.Sequential(IR(24, 32, 2, 4), IR(32, 32, 1, 4), IR(32, 32, 1, 4))   # 32 (skip2)
        self.e3 = nn.Sequential(IR(32, 64, 2, 6), IR(64, 64, 1, 6), IR(64, 64, 1, 6),
                                IR(64, 96, 1, 6), IR(96, 96, 1, 6))       # 16 (skip3)
        self.e4 = nn.Sequential(IR(96, 128, 2, 6), IR(128, 128, 1, 6))   # 8
        self.l4 = conv_bn(128, 96, 1)
        self.d3 = IR(96, 96, 1, 3)
        self.l3 = conv_bn(96, 64, 1)
        self.s2 = conv_bn(32, 64, 1)
        self.d2 = IR(64, 64, 1, 2)
        self.l2 = conv_bn(64, 32, 1)
        self.s1 = conv_bn(24, 32, 1)
        self.d1 = IR(32, 32, 1, 3)
        self.head = nn.Conv2d(32, nbins, 1)

    def forward(self, x):                      # x: [N,1,256,256] = L/50 - 1
        x = self.stem(x)
        s1 = self.e1(x)
        s2 = self.e2(s1)
        s3 = self.e3(s2)
        x = self.e4(s3)
        x = self.d3(up2(self.l4(x)) + s3)
        x = self.d2(up2(self.l3(x)) + self.s2(s2))
        x = self.d1(up2(self.l2(x)) + self.s1(s1))
        return self.head(x)                    # logits [N,Q,64,64]


class AnnealedMean(nn.Module):
    """logits -> softmax(logits / T) -> expectation over bin centres (a 1x1 conv)."""

    def __init__(self, centres, T):
        super().__init__()
        self.inv_t = float(1.0 / T)
        self.register_buffer("w", torch.as_tensor(centres, dtype=torch.float32).t().reshape(2, -1, 1, 1).contiguous())

    def forward(self, logits):
        return F.conv2d(torch.softmax(logits * self.inv_t, dim=1), self.w)


class Exported(nn.Module):
    def __init__(self, net, centres, T):
        super().__init__()
        self.net = net
        self.dec = AnnealedMean(centres, T)

    def forward(self, L):
        return self.dec(self.net(L))


def count_macs(model, shape):
    macs = [0]

    def hook(m, i, o):
        if isinstance(m, nn.Conv2d):
            macs[0] += o.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        model(torch.zeros(shape, device=next(model.parameters()).device))
    for h in hs:
        h.remove()
    return macs[0]


# ----------------------------------------------------------------------------- data
def load_lab(folder):
    from skimage.color import rgb2lab
    names = sorted(f for f in os.listdir(folder) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    labs = []
    for n in names:
        rgb = np.asarray(Image.open(os.path.join(folder, n)).convert("RGB"), dtype=np.float32) / 255.0
        labs.append(rgb2lab(rgb).astype(np.float32))
    return names, labs


class GPUSampler:
    """All photos on the GPU, grouped by size; random crops/flips via affine_grid + grid_sample."""

    def __init__(self, labs, device):
        groups = {}
        for lab in labs:
            groups.setdefault(lab.shape[:2], []).append(lab)
        self.groups = [torch.from_numpy(np.stack(v)).permute(0, 3, 1, 2).contiguous().to(device)
                       for v in groups.values()]
        sizes = np.array([g.shape[0] for g in self.groups], np.float64)
        self.p = sizes / sizes.sum()
        self.device = device

    def sample(self, n, res):
        counts = np.random.multinomial(n, self.p)
        outs = []
        for g, c in zip(self.groups, counts):
            if c == 0:
                continue
            idx = torch.randint(0, g.shape[0], (c,), device=self.device)
            src = g[idx]
            dev = self.device
            full = torch.rand(c, device=dev) < 0.15                     # some full frames (as at inference)
            s = torch.empty(c, device=dev).uniform_(0.3, 1.0)
            fw = (s * torch.exp(torch.empty(c, device=dev).uniform_(-0.3, 0.3))).clamp(max=1.0)
            fh = (s * torch.exp(torch.empty(c, device=dev).uniform_(-0.3, 0.3))).clamp(max=1.0)
            fw = torch.where(full, torch.ones_like(fw), fw)
            fh = torch.where(full, torch.ones_like(fh), fh)
            tx = (torch.rand(c, device=dev) * 2 - 1) * (1 - fw)
            ty = (torch.rand(c, device=dev) * 2 - 1) * (1 - fh)
            flip = torch.where(torch.rand(c, device=dev) < 0.5, -1.0, 1.0)
            theta = torch.zeros(c, 2, 3, device=dev)
            theta[:, 0, 0] = fw * flip
            theta[:, 0, 2] = tx
            theta[:, 1, 1] = fh
            theta[:, 1, 2] = ty
            grid = F.affine_grid(theta, (c, 3, res, res), align_corners=False)
            outs.append(F.grid_sample(src, grid, mode="bilinear", padding_mode="reflection", align_corners=False))
        x = torch.cat(outs)
        return x[torch.randperm(n, device=self.device)]


def l_input(L, jitter=False):
    if jitter:
        n = L.shape[0]
        c = torch.empty(n, 1, 1, 1, device=L.device).uniform_(0.85, 1.15)
        b = torch.empty(n, 1, 1, 1, device=L.device).uniform_(-6, 6)
        L = ((L - 50) * c + 50 + b).clamp(0, 100)
    return L / 50.0 - 1.0


# ----------------------------------------------------------------------------- loss
def soft_encode(ab, centres_t, k=5, sigma=5.0):
    """ab [N,2,h,w] -> (idx [N,k,h,w], weights [N,k,h,w], nearest [N,h,w])."""
    d2 = ((ab[:, None] - centres_t[None, :, :, None, None]) ** 2).sum(2)   # [N,Q,h,w]
    dk, idx = torch.topk(d2, k, dim=1, largest=False)
    w = torch.exp(-dk / (2 * sigma ** 2))
    w = w / w.sum(1, keepdim=True)
    return idx, w, idx[:, 0]


def loss_fn(logits, ab_small, centres_t, class_w):
    idx, w, nearest = soft_encode(ab_small, centres_t)
    logp = F.log_softmax(logits.float(), dim=1)
    ce = -(torch.gather(logp, 1, idx) * w).sum(1)           # [N,h,w]
    pw = class_w[nearest]
    return (ce * pw).sum() / pw.numel()


# ----------------------------------------------------------------------------- eval
@torch.no_grad()
def predict_probs(net, labs, device):
    """For each full-size Lab photo: probs [Q,64,64] (T=1 logits kept) on CPU."""
    out = []
    for lab in labs:
        t = torch.from_numpy(lab).permute(2, 0, 1)[None].to(device)
        L = F.interpolate(t[:, :1], size=(IMG, IMG), mode="bilinear", align_corners=False, antialias=True)
        out.append(net(l_input(L)).float().cpu())
    return out


def decode(logits, centres_t, T):
    p = torch.softmax(logits / T, dim=1)
    return torch.einsum("nqhw,qc->nchw", p, centres_t.cpu())


_ORIG_CF = {}


def evaluate(logits_list, labs, centres, T):
    from skimage.color import lab2rgb
    ct = torch.as_tensor(centres)
    cf_ours, cf_orig, se, se0, npx = [], [], 0.0, 0.0, 0
    for lg, lab in zip(logits_list, labs):
        if id(lab) not in _ORIG_CF:
            _ORIG_CF[id(lab)] = cc.colourfulness(np.clip(lab2rgb(lab), 0, 1) * 255)
        H, W = lab.shape[:2]
        ab = decode(lg, ct, T)
        ab = F.interpolate(ab, size=(H, W), mode="bilinear", align_corners=False)[0].permute(1, 2, 0).numpy()
        gt = lab[..., 1:]
        se += float(((ab - gt) ** 2).sum())
        se0 += float((gt ** 2).sum())
        npx += gt.size
        pred = np.concatenate([lab[..., :1], ab], -1)
        cf_ours.append(cc.colourfulness(np.clip(lab2rgb(pred), 0, 1) * 255))
        cf_orig.append(_ORIG_CF[id(lab)])
    rmse, rmse0 = math.sqrt(se / npx), math.sqrt(se0 / npx)
    return dict(T=T, colourfulness_ours=float(np.mean(cf_ours)), colourfulness_orig=float(np.mean(cf_orig)),
                colourfulness_ratio=float(np.mean(cf_ours) / np.mean(cf_orig)),
                rmse_ab=rmse, rmse_ab_grey=rmse0, rmse_ratio=rmse / rmse0)


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".colorizer-carry", help="folder with train/ and val/ photos")
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=6.0, help="wall-clock training budget")
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--wd", type=float, default=5e-4)
    ap.add_argument("--lam", type=float, default=0.5, help="rebalancing mix with the uniform distribution")
    ap.add_argument("--T", type=float, default=None, help="annealed-mean temperature; default: chosen on the held-out photos")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logf = open(os.path.join(a.out, "train_log.txt"), "w")

    def log(*s):
        msg = " ".join(str(x) for x in s)
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    log("argv:", " ".join(sys.argv))
    log("torch", torch.__version__, "device", dev, torch.cuda.get_device_name() if dev.type == "cuda" else "")
    t0 = time.time()
    names, labs = load_lab(os.path.join(a.data, "train"))
    vnames, vlabs = load_lab(os.path.join(a.data, "val"))
    if a.smoke:
        labs, names, vlabs, vnames = labs[:30], names[:30], vlabs[:5], vnames[:5]
    tr_labs, ho_labs = labs[:-NUM_HOLDOUT], labs[-NUM_HOLDOUT:]
    log(f"photos: train {len(tr_labs)}, held-out (for T) {len(ho_labs)} ({names[-NUM_HOLDOUT]}..{names[-1]}), "
        f"val {len(vlabs)}; load {time.time() - t0:.1f}s")

    # bins and rebalancing weights from the training photos
    centres = cc.in_gamut_bins(96)
    counts = np.zeros(len(centres), np.int64)
    for lab in tr_labs:
        nb = cc.nearest_bin(lab[::2, ::2, 1:], centres)
        counts += np.bincount(nb.ravel(), minlength=len(centres))
    prior, weights = cc.rebalance_weights(counts, centres, lam=a.lam, sigma=5.0)
    Q = len(centres)
    log(f"bins Q={Q}, occupied {int((counts > 0).sum())}, weight range {weights.min():.3f}..{weights.max():.3f}")
    json.dump(dict(grid=cc.GRID, centres=centres.tolist(), counts=counts.tolist(), prior=prior.tolist(),
                   weights=weights.tolist(), lam=a.lam, sigma=5.0),
              open(os.path.join(a.out, "bins.json"), "w"))
    centres_t = torch.as_tensor(centres, device=dev)
    class_w = torch.as_tensor(weights, device=dev)

    net = ColorNet(Q).to(dev)
    macs = count_macs(Exported(net, centres, 0.38).to(dev).eval(), (1, 1, IMG, IMG))
    nparams = sum(p.numel() for p in net.parameters())
    log(f"model: {nparams} params, {macs / 1e6:.1f} MMAC ({2 * macs / 1e9:.3f} GFLOP) per 256x256 prediction")
    net = net.to(memory_format=torch.channels_last)
    ema = torch.optim.swa_utils.AveragedModel(net, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999),
                                              use_buffers=True)
    decay, no_decay = [], []
    for n_, p in net.named_parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    opt = torch.optim.AdamW([dict(params=decay, weight_decay=a.wd), dict(params=no_decay, weight_decay=0)],
                            lr=a.lr, betas=(0.9, 0.99))
    sampler = GPUSampler(tr_labs, dev)
    budget = 20.0 if a.smoke else a.minutes * 60
    torch.backends.cudnn.benchmark = True

    step, t_start, last_eval = 0, time.time(), time.time()
    run_loss = None
    while True:
        frac = (time.time() - t_start) / budget
        if frac >= 1.0:
            break
        lr = a.lr * min(1.0, frac / 0.03) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.no_grad():
            batch = sampler.sample(a.batch, IMG)
            x = l_input(batch[:, :1], jitter=True).contiguous(memory_format=torch.channels_last)
            ab_small = F.avg_pool2d(batch[:, 1:], IMG // OUT_RES)
        net.train()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = net(x)
        loss = loss_fn(logits, ab_small, centres_t, class_w)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema.update_parameters(net)
        step += 1
        if step % 50 == 0:
            lv = loss.item()
            run_loss = lv if run_loss is None else 0.9 * run_loss + 0.1 * lv
        if time.time() - last_eval > (5 if a.smoke else 30):
            last_eval = time.time()
            ema.module.eval()
            with torch.no_grad():
                hl = []
                for lab in ho_labs + vlabs[:20]:
                    t = torch.from_numpy(lab).permute(2, 0, 1)[None].to(dev)
                    L = F.interpolate(t[:, :1], size=(IMG, IMG), mode="bilinear", align_corners=False, antialias=True)
                    ab = F.interpolate(t[:, 1:], size=(OUT_RES, OUT_RES), mode="area")
                    hl.append(loss_fn(ema.module(l_input(L)), ab, centres_t, class_w).item())
            log(f"t={time.time() - t_start:6.0f}s step {step:6d} lr {lr:.2e} train_loss {run_loss if run_loss else float('nan'):.3f} "
                f"heldout_loss {np.mean(hl[:len(ho_labs)]):.3f} val20_loss {np.mean(hl[len(ho_labs):]):.3f}")
    train_s = time.time() - t_start
    log(f"training done: {step} steps of batch {a.batch} in {train_s:.0f}s "
        f"({step * a.batch / len(tr_labs):.0f} epochs of random crops)")

    # use_buffers=True: the EMA also averages the BatchNorm running statistics
    final = ema.module.float().eval().to(memory_format=torch.contiguous_format)
    torch.save(dict(state=final.state_dict(), centres=centres, weights=weights), os.path.join(a.out, "colorizer.pt"))

    # choose T on the held-out training photos
    ho_logits = predict_probs(final, ho_labs, dev)
    v_logits = predict_probs(final, vlabs, dev)
    sweep = []
    for T in (0.2, 0.3, 0.38, 0.5, 0.7, 1.0):
        r = evaluate(ho_logits, ho_labs, centres, T)
        rv = evaluate(v_logits, vlabs, centres, T)
        sweep.append(dict(T=T, heldout=r, val=rv))
        log(f"T={T:.2f} heldout: colourful {r['colourfulness_ratio']:.3f}x rmse {r['rmse_ratio']:.3f}x | "
            f"val: colourful {rv['colourfulness_ratio']:.3f}x rmse {rv['rmse_ratio']:.3f}x "
            f"({rv['rmse_ab']:.2f} vs grey {rv['rmse_ab_grey']:.2f})")
    if a.T is not None:
        T = a.T
    else:
        ok = [s["T"] for s in sweep if s["heldout"]["colourfulness_ratio"] >= 0.6 and s["heldout"]["rmse_ratio"] <= 1.2]
        T = min(ok, key=lambda t: abs(t - 0.38)) if ok else 0.38
    log(f"chosen T = {T} (rule: closest to 0.38 among T meeting both goals on the held-out photos)")
    json.dump(dict(T=T, sweep=sweep, train_seconds=train_s, steps=step, batch=a.batch, params=nparams, macs=macs),
              open(os.path.join(a.out, "summary.json"), "w"), indent=1)

    # export
    exp = Exported(final.cpu(), centres, T).eval()
    dummy = torch.zeros(1, 1, IMG, IMG)
    path = os.path.join(a.out, "colorizer.onnx")
    kw = dict(input_names=["L"], output_names=["ab"], opset_version=13, do_constant_folding=True)
    try:
        torch.onnx.export(exp, (dummy,), path, dynamo=False, **kw)
    except Exception as e:  # noqa: BLE001  (torch without the TorchScript exporter)
        log("dynamo=False export failed:", repr(e), "- trying the default exporter")
        torch.onnx.export(exp, (dummy,), path, **kw)
    import onnx
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    ops = sorted({n.op_type for n in m.graph.node})
    log("onnx ops:", ops, "opset", [o.version for o in m.opset_import], "size", os.path.getsize(path))
    try:
        import onnxruntime as ort
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        xin = torch.rand(1, 1, IMG, IMG) * 2 - 1
        y = s.run(None, {"L": xin.numpy()})[0]
        with torch.no_grad():
            yt = exp(xin).numpy()
        log("onnxruntime output", y.shape, "max |ort - torch|", float(np.abs(y - yt).max()))
    except Exception as e:  # noqa: BLE001
        log("onnxruntime check failed:", repr(e))
    log(f"total wall {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
