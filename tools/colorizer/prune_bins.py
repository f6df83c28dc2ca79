#!/usr/bin/env python3
"""Drop a/b bins that the trained colorizer never uses, to shrink the classifier and softmax.

Runs the exported ONNX (onnxruntime, CPU) on the TRAINING photos and every 3rd frame of the TRAINING
webcam clips only (the clips not held out in webcam_split.json; original and mirrored),
records each bin's largest annealed-softmax probability over all pixels, and removes the bins
whose largest probability stays below --threshold from the head Conv (weights and bias) and from
the decoding Conv (the bin centres). The removed bins' probability mass is then spread over the
rest by the softmax; with threshold 1e-3 a pixel's a/b moves by at most ~0.1 per dropped bin,
and the script reports the largest change it sees on the photos it ran.

Usage:
  taskset -c 1 .venv-tools/bin/python tools/colorizer/prune_bins.py in.onnx out.onnx \
      --photos ../shared/data/bsds500/train --webcam ../shared/media/webcam --threshold 1e-3
"""
import argparse
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper
from PIL import Image
from skimage.color import rgb2lab

from metrics import decode_clip, model_size, resize_f, session, with_temperature  # beside this file


def tail_nodes(m):
    by_out = {o: n for n in m.graph.node for o in n.output}
    dec = by_out["ab"]
    sm = by_out[dec.input[0]]
    assert dec.op_type == "Conv" and sm.op_type == "Softmax"
    mul = by_out[sm.input[0]]
    assert mul.op_type == "Mul"
    head = by_out[mul.input[0]]
    assert head.op_type == "Conv"
    return head, mul, sm, dec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--photos", default="../shared/data/bsds500/train")
    ap.add_argument("--webcam", default="../shared/media/webcam", help="webcam clips folder ('' to skip)")
    ap.add_argument("--split", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "webcam_split.json"))
    ap.add_argument("--frame-step", type=int, default=3)
    ap.add_argument("--threshold", type=float, default=1e-3)
    ap.add_argument("--T", type=float, default=None, help="set the annealed-mean temperature first (else keep the model's)")
    a = ap.parse_args()

    load = (lambda: onnx.load_from_string(with_temperature(a.src, a.T))) if a.T else (lambda: onnx.load(a.src))
    m = load()
    head, mul, sm, dec = tail_nodes(m)
    # expose the softmax output to measure per-bin use
    probe = load()
    probe.graph.output.append(helper.make_tensor_value_info(sm.output[0], onnx.TensorProto.FLOAT, None))
    tmp = a.dst + ".probe.onnx"
    onnx.save(probe, tmp)
    sess = session(tmp, 1)
    size = model_size(sess)                  # the network input (W, H): 256x256 for v1-v3
    names = sorted(f for f in os.listdir(a.photos) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    pmax = None
    xs = []
    inputs = [np.asarray(Image.open(os.path.join(a.photos, n)).convert("RGB"), dtype=np.float64) / 255.0 for n in names]
    nclips = 0
    if a.webcam:
        import json
        held = set(json.load(open(a.split))["heldout"])
        for c in sorted(f[:-4] for f in os.listdir(a.webcam) if f.endswith(".mkv")):
            if c not in held:
                nclips += 1
                inputs += [f.astype(np.float64) / 255.0 for f in decode_clip(os.path.join(a.webcam, c + ".mkv"))[::a.frame_step]]
    for rgb in inputs:
        L = rgb2lab(rgb)[..., 0].astype(np.float32)
        x = (resize_f(L, size) / 50.0 - 1.0)[None, None].astype(np.float32)
        for xi in (x, x[..., ::-1].copy()):
            ab, p = sess.run(["ab", sm.output[0]], {"L": xi})
            pm = p[0].max(axis=(1, 2))
            pmax = pm if pmax is None else np.maximum(pmax, pm)
            xs.append((xi, ab))
    os.remove(tmp)
    keep = np.nonzero(pmax >= a.threshold)[0]
    print(f"{len(names)} photos + {len(inputs) - len(names)} frames of {nclips} training clips, x2: keeping {len(keep)} of {len(pmax)} bins (max prob >= {a.threshold})")

    inits = {t.name: t for t in m.graph.initializer}

    def replace(name, arr):
        t = inits[name]
        t.CopyFrom(numpy_helper.from_array(arr.astype(np.float32), name))

    w = numpy_helper.to_array(inits[head.input[1]])
    replace(head.input[1], w[keep])
    if len(head.input) > 2:
        replace(head.input[2], numpy_helper.to_array(inits[head.input[2]])[keep])
    replace(dec.input[1], numpy_helper.to_array(inits[dec.input[1]])[:, keep])
    # drop stale intermediate shape info
    del m.graph.value_info[:]
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, a.dst)

    s2 = session(a.dst, 1)
    diff = max(float(np.abs(s2.run(["ab"], {"L": xi})[0] - ab).max()) for xi, ab in xs[::7])
    print(f"wrote {a.dst} ({os.path.getsize(a.dst)} bytes); largest |a/b change| on {len(xs[::7])} training inputs: {diff:.3f}")


if __name__ == "__main__":
    main()
