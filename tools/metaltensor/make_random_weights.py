#!/usr/bin/env python3
"""Deterministic random weights for a MetalTensor plist model whose .bin is not available
(MobileNetV2_1.0 ships only its .plist and .json).

  python tools/metaltensor/make_random_weights.py MODEL.plist --map MODEL.json --seed N --out X.bin [--check]

Every weight range of the JSON map is filled as spec §2.3 lays it out: n_w kernel floats (He-scaled
normal, std sqrt(2 / fan_in); fan_in = kH*kW*Cin, kH*kW for depthwise, H*W*Cin for dense) followed,
when the range has room for it, by the bias (normal, std 0.01). The lengths computed from the plist's
declared shapes are checked against the map's byte lengths first. Ranges are filled in byte-offset
order from numpy.random.default_rng(seed), so the same seed gives the same file. Bytes no range covers
stay 0. --check then runs the reference executor on a seeded random input and prints the output's
range (for a softmax output: that it is finite, sums to 1 and is not one-hot).

The output is little-endian float32, written beside the target and renamed when complete. Put it
in a git-ignored folder, for example models/cache/metaltensor/.
"""
import argparse
import math
import os
import sys

import numpy as np

from fgtools import mt_reference as mtr


def plan(model, wmap):
    """{weight name: (n_w, n_b, fan_in, bias_present)} checked against the map; raises MTError."""
    need = {}
    for n in model.nodes.values():
        for key, name, n_w, n_b, _shape, fan_in in mtr.weight_specs(n):
            if name in need and need[name][:3] != (n_w, n_b, fan_in):
                raise mtr.MTError(f"{model.path}: node '{n.name}': key '{key}': weight '{name}' is also used by "
                                  f"'{need[name][3]}' with a different shape")
            need.setdefault(name, (n_w, n_b, fan_in, n.name, key))
    out = {}
    for name, (n_w, n_b, fan_in, node, key) in need.items():
        if name not in wmap:
            raise mtr.MTError(f"{model.path}: node '{node}': key '{key}': weight '{name}' is not in the map "
                              f"{model.json_path}")
        off, ln = wmap[name]
        if ln == 4 * n_w:
            has_b = False
        elif ln == 4 * (n_w + n_b):
            has_b = True
        else:
            raise mtr.MTError(f"{model.path}: node '{node}': key '{key}': weight '{name}': the map gives {ln} bytes, "
                              f"the plist's shapes need 4*{n_w} = {4 * n_w} or 4*({n_w}+{n_b}) = {4 * (n_w + n_b)}")
        out[name] = (n_w, n_b, fan_in, has_b)
    return out


def make(plist, json_path, seed):
    model = mtr.parse_model(plist, json_path)
    wmap = mtr.parse_weight_map(model.json_path)
    p = plan(model, wmap)
    unused = sorted(set(wmap) - set(p))
    ranges = sorted(wmap.items(), key=lambda kv: kv[1][0])
    total = max(off + ln for _, (off, ln) in ranges)
    # tiling report (§2.2: the shipped maps tile the .bin with no gaps and no overlap)
    pos, gaps, overlaps = 0, [], []
    for name, (off, ln) in ranges:
        if off > pos:
            gaps.append((pos, off))
        elif off < pos:
            overlaps.append(name)
        pos = max(pos, off + ln)
    if overlaps:
        raise mtr.MTError(f"{model.json_path}: overlapping ranges at {', '.join(overlaps)}")
    blob = np.zeros(total // 4 + 1, "<f4")
    rng = np.random.default_rng(seed)
    for name, (off, ln) in ranges:
        if name not in p:
            continue
        if off % 4:
            raise mtr.MTError(f"{model.json_path}: key '{name}': offset {off} is not a multiple of 4")
        n_w, n_b, fan_in, has_b = p[name]
        w = rng.standard_normal(n_w) * math.sqrt(2.0 / fan_in)
        a = np.concatenate([w, rng.standard_normal(n_b) * 0.01]) if has_b else w
        blob[off // 4:off // 4 + len(a)] = a.astype(np.float32)
    data = blob.tobytes()[:total]
    return model, data, {"ranges": len(ranges), "bytes": total, "unused": unused, "gaps": gaps}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="MODEL.plist")
    ap.add_argument("--map", help="weight map (default: MODEL.json)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True, help="X.bin to write")
    ap.add_argument("--check", action="store_true", help="run the reference on a random input afterwards")
    a = ap.parse_args(argv)
    try:
        model, data, info = make(a.model, a.map, a.seed)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        tmp = a.out + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, a.out)
        print(f"wrote {a.out}: {info['ranges']} ranges, {info['bytes']} bytes, seed {a.seed}"
              + (f"; gaps {info['gaps']}" if info["gaps"] else "; the ranges tile the file")
              + (f"; map entries no node uses: {', '.join(info['unused'])}" if info["unused"] else ""))
        if a.check:
            m = mtr.load_model(a.model, a.map, a.out)
            h, w, c = m.nodes[m.input].shape
            x = np.random.default_rng(a.seed + 1).random((h, w, c), dtype=np.float32)
            for name, v in mtr.run(m, x).items():
                ok = bool(np.isfinite(v).all())
                msg = f"{name}: shape {list(v.shape)} finite {ok} min {v.min():.4g} max {v.max():.4g}"
                last = [k for k in m.order if m.nodes[k].type != "output"][-1]
                if m.nodes[last].type == "softmax":
                    s = float(v.sum())
                    top = np.sort(v.reshape(-1))[::-1][:5]
                    msg += f" sum {s:.6f} top-5 {np.round(top, 4).tolist()}"
                    ok = ok and abs(s - 1) < 1e-3 and top[0] < 0.99
                print(msg)
                if not ok:
                    print("error: the output is not finite or is one-hot", file=sys.stderr)
                    return 1
    except mtr.MTError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
