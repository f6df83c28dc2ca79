#!/usr/bin/env python3
"""Benchmark helper: rewrite the colorizer's tail so that the softmax runs over a contiguous axis.

onnxruntime keeps tensors in NCHW, so Softmax(axis=1) over [1,Q,H,W] (v1-v3: 64x64, v4: 48x48) is strided and slow there
(about 6 ms of a 12.7 ms prediction), while a channels-last runtime such as XNNPACK reads the
bins of a pixel contiguously. This script writes an equivalent model whose tail is
  Reshape [C,H*W] -> Gemm(transA, weights/T) -> Softmax(axis=1) on [H*W,Q] -> Gemm with the
  bin centres -> Reshape [1,2,H,W]   (H, W and the input size read from the model)
(only ops on FrameGraph's list), checks that it gives the same a/b, and is used to time the
same arithmetic with a contiguous softmax in onnxruntime. The committed model keeps the
Conv/Softmax(axis=1)/Conv tail.

Usage: .venv-tools/bin/python tools/colorizer/gemm_tail.py models/colorizer/colorizer.onnx /tmp/colorizer_gemm.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

from prune_bins import tail_nodes  # beside this file


def main(src, dst):
    m = onnx.load(src)
    head, mul, sm, dec = tail_nodes(m)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in m.graph.node if n.op_type == "Constant"}
    inv_t = float(np.asarray(consts.get(mul.input[1], inits.get(mul.input[1]))).ravel()[0])
    W = inits[head.input[1]]                      # [Q,C,1,1]
    B = inits[head.input[2]] if len(head.input) > 2 else np.zeros(W.shape[0], np.float32)
    Cw = inits[dec.input[1]][:, :, 0, 0]          # [2,Q]
    q, c = W.shape[:2]
    oh, ow = (d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim[2:4])
    in_shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    new = [
        numpy_helper.from_array(np.array([c, oh * ow], np.int64), "gt_shape_in"),
        numpy_helper.from_array(np.ascontiguousarray(W[:, :, 0, 0].T * inv_t).astype(np.float32), "gt_w"),
        numpy_helper.from_array((B * inv_t).astype(np.float32), "gt_b"),
        numpy_helper.from_array(Cw.astype(np.float32), "gt_centres"),
        numpy_helper.from_array(np.array([1, 2, oh, ow], np.int64), "gt_shape_out"),
    ]
    nodes = [
        helper.make_node("Reshape", [head.input[0], "gt_shape_in"], ["gt_feat"]),
        helper.make_node("Gemm", ["gt_feat", "gt_w", "gt_b"], ["gt_logits"], transA=1),
        helper.make_node("Softmax", ["gt_logits"], ["gt_p"], axis=1),
        helper.make_node("Gemm", ["gt_centres", "gt_p"], ["gt_ab"], transB=1),
        helper.make_node("Reshape", ["gt_ab", "gt_shape_out"], ["ab"]),
    ]
    drop = {id(head), id(mul), id(sm), id(dec)}
    keep = [n for n in m.graph.node if id(n) not in drop and not (n.op_type == "Constant" and n.output[0] == mul.input[1])]
    del m.graph.node[:]
    m.graph.node.extend(keep + nodes)
    m.graph.initializer.extend(new)
    used = {i for n in m.graph.node for i in n.input}
    live = [t for t in m.graph.initializer if t.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(live)
    del m.graph.value_info[:]
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, dst)
    import onnxruntime as ort
    x = np.random.default_rng(0).uniform(-1, 1, in_shape).astype(np.float32)
    a = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(["ab"], {"L": x})[0]
    b = ort.InferenceSession(dst, providers=["CPUExecutionProvider"]).run(["ab"], {"L": x})[0]
    print(f"wrote {dst}; max |difference| vs {src}: {np.abs(a - b).max():.2e} (a/b std {a.std():.2f})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
