#!/usr/bin/env python3
"""Build the ECCV 2016 colorizer of Zhang, Isola & Efros ("Colorful Image Colorization")
in PyTorch with RANDOM weights and export it to ONNX with the same I/O contract as our model.

This is a size/speed reference for FrameGraph's runtime (about 32 M parameters, ~128 MB of
float32 weights; do not commit the output). The architecture follows the paper's Table/Fig. 2
(as in the authors' released "eccv16" model): 8 blocks of 3x3 convolutions with ReLU and
BatchNorm, strides 2 in blocks 1-3, dilation 2 in blocks 5-6, a stride-2 transposed convolution
in block 8, a 1x1 classifier over the a/b bins, then the annealed-mean decoding folded into the
graph (Mul 1/T -> Softmax(axis=1) -> 1x1 Conv with the bin centres as weights).

I/O: input "L" [1,1,256,256] = L/50 - 1 (our convention; the authors' code used (L-50)/100,
which only rescales the first layer), output "ab" [1,2,64,64] in Lab units. The bins are our
in-gamut 10-unit grid (tools/colorizer/colorcommon.py, 262 bins with skimage's Lab; the paper's
set has 313), or pass --bins 313 for a 313-bin head sized like the paper's (centres then come
from a ring of grid points and are only placeholders).

Usage:  python3 tools/colorizer/eccv16.py --out /tmp/eccv16.onnx
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def block(cin, cout, n, stride_last=1, dilation=1, bn=True):
    layers = []
    for i in range(n):
        s = stride_last if i == n - 1 else 1
        layers += [nn.Conv2d(cin if i == 0 else cout, cout, 3, s, dilation, dilation=dilation, bias=True),
                   nn.ReLU(inplace=True)]
    if bn:
        layers.append(nn.BatchNorm2d(cout))
    return nn.Sequential(*layers)


class ECCV16(nn.Module):
    def __init__(self, centres, T=0.38):
        super().__init__()
        q = len(centres)
        self.model1 = block(1, 64, 2, stride_last=2)          # 1/2
        self.model2 = block(64, 128, 2, stride_last=2)        # 1/4
        self.model3 = block(128, 256, 3, stride_last=2)       # 1/8
        self.model4 = block(256, 512, 3)
        self.model5 = block(512, 512, 3, dilation=2)
        self.model6 = block(512, 512, 3, dilation=2)
        self.model7 = block(512, 512, 3)
        self.model8 = nn.Sequential(
            nn.ConvTranspose2d(512, 256, 4, 2, 1), nn.ReLU(inplace=True),   # back to 1/4
            nn.Conv2d(256, 256, 3, 1, 1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, 3, 1, 1), nn.ReLU(inplace=True),
            nn.Conv2d(256, q, 1))
        self.inv_t = 1.0 / T
        self.register_buffer("w", torch.as_tensor(centres, dtype=torch.float32).t().reshape(2, q, 1, 1).contiguous())

    def forward(self, L):
        x = L
        for m in (self.model1, self.model2, self.model3, self.model4, self.model5, self.model6,
                  self.model7, self.model8):
            x = m(x)
        return F.conv2d(torch.softmax(x * self.inv_t, dim=1), self.w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/eccv16.onnx")
    ap.add_argument("--bins", type=int, default=0, help="0: our in-gamut bins; 313: a paper-sized head")
    a = ap.parse_args()
    if a.bins:
        g = np.stack(np.meshgrid(np.arange(-110, 111, 10), np.arange(-110, 111, 10), indexing="ij"), -1).reshape(-1, 2)
        g = g[np.argsort((g ** 2).sum(1), kind="stable")][:a.bins]
        centres = g.astype(np.float32)
    else:
        import colorcommon as cc
        centres = cc.in_gamut_bins(96)
    torch.manual_seed(0)
    m = ECCV16(centres).eval()
    # random BN statistics so the graph is not degenerate
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 2.0)
    params = sum(p.numel() for p in m.parameters())
    macs = [0]

    def hook(mod, i, o):
        if isinstance(mod, nn.Conv2d):
            macs[0] += o.numel() * (mod.in_channels // mod.groups) * mod.kernel_size[0] * mod.kernel_size[1]
        elif isinstance(mod, nn.ConvTranspose2d):
            macs[0] += i[0].numel() * mod.out_channels * mod.kernel_size[0] * mod.kernel_size[1]

    hs = [mod.register_forward_hook(hook) for mod in m.modules() if isinstance(mod, (nn.Conv2d, nn.ConvTranspose2d))]
    x = torch.zeros(1, 1, 256, 256)
    with torch.no_grad():
        y = m(x)
    for h in hs:
        h.remove()
    print(f"ECCV16 (random weights): {params / 1e6:.2f} M params, {macs[0] / 1e9:.2f} GMAC "
          f"({2 * macs[0] / 1e9:.1f} GFLOP) at 256x256, output {tuple(y.shape)}, bins {len(centres)}")
    kw = dict(input_names=["L"], output_names=["ab"], opset_version=13, do_constant_folding=True)
    try:
        torch.onnx.export(m, (x,), a.out, dynamo=False, **kw)
    except Exception as e:  # noqa: BLE001
        print("dynamo=False export failed:", repr(e), "- trying the default exporter")
        torch.onnx.export(m, (x,), a.out, **kw)
    import onnx
    mo = onnx.load(a.out)
    onnx.checker.check_model(a.out)
    print("wrote", a.out, os.path.getsize(a.out), "bytes; ops", sorted({n.op_type for n in mo.graph.node}))


if __name__ == "__main__":
    main()
