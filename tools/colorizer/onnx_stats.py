#!/usr/bin/env python3
"""Print an ONNX model's parameters, multiply-accumulates, op set and I/O, and check that it only
uses the ops FrameGraph's ONNX importer supports.

Usage: .venv-tools/bin/python tools/colorizer/onnx_stats.py models/colorizer/colorizer.onnx
"""
import collections
import sys

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

ALLOWED = {"Conv", "ConvTranspose", "BatchNormalization", "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh",
           "HardSigmoid", "HardSwish", "Clip", "Add", "Sub", "Mul", "Div", "Concat", "Resize", "Upsample",
           "MaxPool", "AveragePool", "GlobalAveragePool", "Gemm", "MatMul", "Flatten", "Reshape", "Softmax",
           "Pad", "Constant", "Identity"}


def shape_of(vi):
    return [d.dim_value for d in vi.type.tensor_type.shape.dim]


def main(path):
    m = shape_inference.infer_shapes(onnx.load(path))
    shapes = {vi.name: shape_of(vi) for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)}
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    params = sum(v.size for v in inits.values())
    macs = 0
    for n in m.graph.node:
        if n.op_type == "Conv":
            w = inits[n.input[1]]
            macs += int(np.prod(shapes[n.output[0]])) * int(np.prod(w.shape[1:]))
        elif n.op_type == "ConvTranspose":
            w = inits[n.input[1]]
            macs += int(np.prod(shapes[n.input[0]])) * int(np.prod(w.shape[1:]))
        elif n.op_type in ("Gemm", "MatMul"):
            a = shapes.get(n.input[0]) or list(inits[n.input[0]].shape)
            y = shapes[n.output[0]]
            k = a[0] if any(at.name == "transA" and at.i for at in n.attribute) else a[-1]
            macs += int(np.prod(y)) * k
    ops = collections.Counter(n.op_type for n in m.graph.node)
    bad = sorted(set(ops) - ALLOWED)
    print(f"{path}: {params} parameters ({params * 4 / 1e6:.2f} MB float32), {macs / 1e6:.1f} MMAC "
          f"= {2 * macs / 1e9:.3f} GFLOP (conv/gemm only)")
    print("opset", [(o.domain or "ai.onnx", o.version) for o in m.opset_import], "ops", dict(ops))
    for n in m.graph.node:
        if n.op_type in ("Resize", "Softmax"):
            print(" ", n.op_type, {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
    print("inputs", [(i.name, shape_of(i)) for i in m.graph.input],
          "outputs", [(o.name, shape_of(o)) for o in m.graph.output])
    print("unsupported ops:", bad or "none")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
