#!/usr/bin/env python3
"""Weight-space interpolation ("model soup", WiSE-FT style) of two exports of the same network:
every float initializer becomes (1 - alpha) * A + alpha * B, the decoding's temperature is set to --T.
Both must be unpruned exports of train.py (same graph, same bins, BatchNorm folded): the folded
convolution weights and biases are interpolated, which for two nearby checkpoints of one lineage
(B fine-tuned from A) is a path between the two functions. Prune bins afterwards (prune_bins.py).

  soup_onnx.py A.onnx B.onnx ALPHA OUT.onnx --T 0.6
"""
import argparse

import numpy as np
import onnx
from onnx import numpy_helper


def set_temperature(model, T):
    g = model.graph
    sm = [n for n in g.node if n.op_type == "Softmax"][0]
    mul = [n for n in g.node if n.output[0] == sm.input[0]][0]
    for name in mul.input:
        for n in g.node:
            if n.op_type == "Constant" and n.output[0] == name:
                v = numpy_helper.to_array(n.attribute[0].t)
                if v.size == 1:
                    n.attribute[0].t.CopyFrom(numpy_helper.from_array(np.full_like(v, 1.0 / T), n.attribute[0].t.name))
                    return
        for i in g.initializer:
            if i.name == name and numpy_helper.to_array(i).size == 1:
                v = numpy_helper.to_array(i)
                i.CopyFrom(numpy_helper.from_array(np.full_like(v, 1.0 / T), i.name))
                return
    raise SystemExit("temperature constant not found")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("alpha", type=float, help="weight of B")
    ap.add_argument("out")
    ap.add_argument("--T", type=float, required=True)
    a = ap.parse_args()
    ma, mb = onnx.load(a.a), onnx.load(a.b)
    assert [n.op_type for n in ma.graph.node] == [n.op_type for n in mb.graph.node], "graphs differ"
    ib = {i.name: numpy_helper.to_array(i) for i in mb.graph.initializer}
    assert set(ib) == {i.name for i in ma.graph.initializer}, "initializer names differ"
    for i in ma.graph.initializer:
        va, vb = numpy_helper.to_array(i), ib[i.name]
        assert va.shape == vb.shape, i.name
        if i.name == "dec.w":
            assert np.array_equal(va, vb), "bins differ"
            continue
        if va.dtype.kind == "f":
            i.CopyFrom(numpy_helper.from_array(((1 - a.alpha) * va.astype(np.float64) + a.alpha * vb).astype(va.dtype), i.name))
    set_temperature(ma, a.T)
    onnx.checker.check_model(ma)
    onnx.save(ma, a.out)
    print(f"wrote {a.out}: (1 - {a.alpha}) * {a.a} + {a.alpha} * {a.b}, T = {a.T}")


if __name__ == "__main__":
    main()
