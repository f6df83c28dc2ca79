#!/usr/bin/env python3
"""Convert a MetalTensor plist model (+ .json + .bin) to ONNX (opset 17) with MetalTensor's exact MPS
window semantics, as a drop-in for comparisons: the input is NHWC float32 [1, H, W, C] named after the
`input` node, and every `output` node becomes an NHWC output [1, h, w, c] of the same name. Inside,
the graph is NCHW.

  python tools/metaltensor/export_onnx.py MODEL.plist --out OUT.onnx [--map X.json --weights-bin X.bin]
                                          [--check] [--check-input IN.f32] [--tol 1e-4]

How the MPS rules (spec §1, §6, §7) are expressed:
* convolution / depthwise / the inverted-residual stages: Conv with explicit, possibly asymmetric
  pads (pad_begin = -(offset - (k >> 1)), pad_end from the output length); a negative pad becomes a
  Slice of the input, and a longer Conv result is sliced to the MPS output length.
* trans_conv: ConvTranspose with the stored (Cout, kH, kW, Cin) kernel rotated by 180 degrees and
  transposed to (Cin, Cout, kH, kW), pads_begin = k - 1 + offset - ((k - 1) >> 1) (the zero-inserted
  image of §6.3); negative pads become a zero Pad of the result, with the bias added after it.
* pooling: MaxPool / AveragePool after a Slice, only when every window lies inside the input (then the
  clamp edge mode never applies; true for the example models' whole-map pools). Other cases stop with
  an error.
* reshape: NHWC reinterpretation (Transpose, Reshape, Transpose back).
* concatenate: each input zero-padded to the maximum height/width and to a multiple of 4 channels.
* arithmetic: secondary images/data become constants (float32 RGB/255); strides other than 1,1,1 stop
  with an error.
--check runs onnxruntime and the numpy reference (fp32) on the same input (default: the centre square of
again.mkv at t = 0.5 s resized to the input size) and fails when an output differs by more than --tol.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from fgtools import mt_reference as mtr


class _G:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}__{self.n}"

    def const(self, base, arr, dtype=np.float32):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype=dtype), nm))
        return nm

    def op(self, op_type, inputs, base, **attrs):
        out = self.name(base)
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def _act(g, x, neuron, base):
    name, a, b, c = neuron
    if name == "none":
        return x
    if name == "relu":
        return g.op("Relu", [x], base) if a == 0 else g.op("LeakyRelu", [x], base, alpha=float(a))
    if name == "relun":
        if a == 0 and b >= 0:
            return g.op("Clip", [x, g.const(base + "_lo", 0.0), g.const(base + "_hi", b)], base)
        r = g.op("Relu", [x], base) if a == 0 else g.op("LeakyRelu", [x], base, alpha=float(a))
        return g.op("Min", [r, g.const(base + "_n", b)], base)
    if name == "linear":
        return g.op("Add", [g.op("Mul", [x, g.const(base + "_a", a)], base), g.const(base + "_b", b)], base)
    if name == "sigmod":
        return g.op("Sigmoid", [x], base)
    if name == "power":
        y = g.op("Add", [g.op("Mul", [x, g.const(base + "_a", a)], base), g.const(base + "_b", b)], base)
        return g.op("Pow", [y, g.const(base + "_c", c)], base)
    raise mtr.MTError(f"unknown activation {name}")


def _slice(g, x, axis, start, end, base):
    return g.op("Slice", [x, g.const(base + "_s", [start], np.int64), g.const(base + "_e", [end], np.int64),
                          g.const(base + "_ax", [axis], np.int64)], base)


def _conv(g, x, in_hw, w_oihw, bias, stride, start_yx, out_hw, group, base):
    """MPS correlation: out[t] reads rows stride*t + start + (0..k-1), zero outside the input."""
    k = w_oihw.shape[2:]
    pads_b, pads_e, got = [], [], []
    for ax in range(2):
        n, st, K, out = in_hw[ax], start_yx[ax], k[ax], out_hw[ax]
        pb = -st
        pe = (out - 1) * stride + st + K - n
        if pb < 0:  # the first window starts inside the input: drop the rows before it
            x = _slice(g, x, 2 + ax, -pb, 1 << 30, base)
            n, pe, pb = n + pb, pe, 0
        pe = max(pe, 0)
        pads_b.append(pb)
        pads_e.append(pe)
        got.append((n + pb + pe - K) // stride + 1)
    ins = [x, g.const(base + "_w", w_oihw)] + ([g.const(base + "_bias", bias)] if bias is not None else [])
    y = g.op("Conv", ins, base, kernel_shape=list(k), strides=[stride, stride], pads=pads_b + pads_e, group=group)
    for ax in range(2):  # a longer result (pad_end < 0 was raised to 0) is cut to the MPS length
        if got[ax] != out_hw[ax]:
            y = _slice(g, y, 2 + ax, 0, out_hw[ax], base)
    return y


def _tconv(g, x, in_hw, w_stored, bias, stride, start_yx, out_hw, depthwise, base):
    kh, kw = w_stored.shape[1], w_stored.shape[2]
    if depthwise:
        wct = w_stored[:, ::-1, ::-1][:, None, :, :]                     # (C, 1, kH, kW)
        group = w_stored.shape[0]
    else:
        wct = w_stored[:, ::-1, ::-1, :].transpose(3, 0, 1, 2)           # (Cin, Cout, kH, kW)
        group = 1
    wct = np.ascontiguousarray(wct, np.float32)
    pb, pe = [], []
    for ax, K in enumerate((kh, kw)):
        b = K - 1 + start_yx[ax]
        e = stride * (in_hw[ax] - 1) + K - b - out_hw[ax]
        pb.append(b)
        pe.append(e)
    clamp = any(v < 0 for v in pb + pe)
    ins = [x, g.const(base + "_w", wct)]
    if not clamp:
        ins.append(g.const(base + "_bias", bias))
    y = g.op("ConvTranspose", ins, base, kernel_shape=[kh, kw], strides=[stride, stride],
             pads=[max(0, v) for v in pb + pe], group=group)
    if clamp:
        pads = [0, 0, max(0, -pb[0]), max(0, -pb[1]), 0, 0, max(0, -pe[0]), max(0, -pe[1])]
        y = g.op("Pad", [y, g.const(base + "_pads", pads, np.int64)], base, mode="constant")
        y = g.op("Add", [y, g.const(base + "_bias", bias.reshape(1, -1, 1, 1))], base)
    return y


def export(model, opset=17):
    """ONNX ModelProto of a loaded model (mt_reference.load_model), fp32 weights."""
    g = _G()
    nodes = model.nodes
    wc = mtr._weights(model, "fp32")
    val = {}
    inp = model.input
    H, W, C = nodes[inp].shape
    graph_inputs = [helper.make_tensor_value_info(inp, TensorProto.FLOAT, [1, H, W, C])]
    graph_outputs = []
    for v in model.order:
        n = nodes[v]
        t, p = n.type, n.p
        ctx = mtr._Ctx(model.path, v)
        ins = [None if s == "<secondary>" else val[s] for _, s in sorted(n.slots.items())]
        in_shape = None if t == "input" else nodes[n.slots[0]].shape
        if t == "input":
            y = g.op("Transpose", [inp], v, perm=[0, 3, 1, 2])
        elif t == "output":
            y = ins[0]
            oh, ow, oc = n.shape
            g.nodes.append(helper.make_node("Transpose", [y], [v], name=v + "__nhwc", perm=[0, 2, 3, 1]))
            graph_outputs.append(helper.make_tensor_value_info(v, TensorProto.FLOAT, [1, oh, ow, oc]))
        elif t == "neuron":
            y = _act(g, ins[0], p["activation"], v)
            if y == ins[0]:
                y = g.op("Identity", [y], v)
        elif t == "softmax":
            y = g.op("Softmax", [ins[0]], v, axis=1)
        elif t in ("convolution", "trans_conv"):
            (w, b), = wc[v]
            sy, sx = mtr.conv_params(n, in_shape[0], in_shape[1])
            if t == "convolution":
                if p["depthwise"]:
                    woihw, group = w[:, None, :, :], w.shape[0]
                else:
                    woihw, group = w.transpose(0, 3, 1, 2), 1
                y = _conv(g, ins[0], in_shape[:2], np.ascontiguousarray(woihw), b, p["stride"], (sy, sx),
                          n.shape[:2], group, v)
            else:
                y = _tconv(g, ins[0], in_shape[:2], w, b, p["stride"], (sy, sx), n.shape[:2], p["depthwise"], v)
            y = _act(g, y, p["activation"], v)
        elif t == "inverted_residual":
            (we, be), (wd, bd), (wp, bp) = wc[v]
            n0, n1, n2 = p["neurons"]
            h, w_, _ = in_shape
            e = _act(g, _conv(g, ins[0], (h, w_), we.transpose(0, 3, 1, 2).copy(), be, 1, (0, 0), (h, w_), 1,
                              v + "_expand"), n0, v + "_expand")
            s = p["stride"]
            (kh, kw), (ox, oy) = p["kernel"], p["offset"]
            oh, ow = n.shape[:2]
            d = _act(g, _conv(g, e, (h, w_), wd[:, None].copy(), bd, s, (oy - (kh >> 1), ox - (kw >> 1)), (oh, ow),
                              wd.shape[0], v + "_depthwise"), n1, v + "_depthwise")
            y = _act(g, _conv(g, d, (oh, ow), wp.transpose(0, 3, 1, 2).copy(), bp, 1, (0, 0), (oh, ow), 1,
                              v + "_project"), n2, v + "_project")
            if tuple(n.shape) == tuple(in_shape):
                y = g.op("Add", [ins[0], y], v + "_residual")
        elif t == "dense":
            (w, b), = wc[v]
            x = g.op("Transpose", [ins[0]], v, perm=[0, 2, 3, 1])
            x = g.op("Reshape", [x, g.const(v + "_flat", [1, -1], np.int64)], v)
            y = g.op("Gemm", [x, g.const(v + "_w", w.reshape(w.shape[0], -1)), g.const(v + "_b", b)], v, transB=1)
            y = g.op("Reshape", [y, g.const(v + "_nchw", [1, w.shape[0], 1, 1], np.int64)], v)
            y = _act(g, y, p["activation"], v)
        elif t in ("pooling_max", "pooling_average"):
            (kh, kw), s = p["kernel"], p["stride"]
            ox, oy = mtr.pool_offsets(n)
            x = ins[0]
            for ax, (K, off, out) in enumerate(((kh, oy, n.shape[0]), (kw, ox, n.shape[1]))):
                first = off - (K >> 1)
                last = s * (out - 1) + first + K - 1
                if first < 0 or last > in_shape[ax] - 1:
                    raise ctx.err(f"a pooling window reaches outside the input (rows/cols {first}..{last} of "
                                  f"{in_shape[ax]}): the clamp edge mode is not exported", "kernel")
                x = _slice(g, x, 2 + ax, first, last + 1, v)
            y = g.op("MaxPool" if t == "pooling_max" else "AveragePool", [x], v, kernel_shape=[kh, kw],
                     strides=[s, s])
        elif t == "reshape":
            x = g.op("Transpose", [ins[0]], v, perm=[0, 2, 3, 1])
            x = g.op("Reshape", [x, g.const(v + "_shape", [1] + list(n.shape), np.int64)], v)
            y = g.op("Transpose", [x], v, perm=[0, 3, 1, 2])
        elif t == "concatenate":
            oh, ow, _ = n.shape
            parts = []
            for x, s_ in zip(ins, n.inputs):
                c4 = 4 * ((s_[2] + 3) // 4)
                pads = [0, 0, 0, 0, 0, c4 - s_[2], oh - s_[0], ow - s_[1]]
                if any(pads):
                    x = g.op("Pad", [x, g.const(v + "_pads", pads, np.int64)], v, mode="constant")
                parts.append(x)
            y = g.op("Concat", parts, v, axis=1)
        elif t == "arithmetic":
            shape = tuple(n.inputs[0])
            for key in ("primary_strides", "secondary_strides"):
                if p[key] != (1, 1, 1):
                    raise ctx.err(f"strides {p[key]} are not exported (only 1,1,1)", key)
            a = ins[0]
            if p["has_secondary"]:
                sec = wc[v + "\0sec"]
                if sec.shape != shape:
                    raise ctx.err(f"secondary operand {sec.shape} differs from the declared {shape}: not exported",
                                  "secondary_image")
                bb = g.const(v + "_secondary", sec.transpose(2, 0, 1)[None])
            else:
                if tuple(nodes[n.slots[1]].shape) != shape:
                    raise ctx.err("slot 1's shape differs from the declared shape: not exported", "inputs")
                bb = ins[1]
            if p["primary_scale"] != 1:
                a = g.op("Mul", [a, g.const(v + "_ps", p["primary_scale"])], v)
            if p["secondary_scale"] != 1:
                bb = g.op("Mul", [bb, g.const(v + "_ss", p["secondary_scale"])], v)
            op = {"addition": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div"}[p["op"]]
            y = g.op(op, [a, bb], v)
            if p["bias"] != 0:
                y = g.op("Add", [y, g.const(v + "_bias", p["bias"])], v)
        else:
            raise ctx.err(f"type {t} is not exported")
        val[v] = y
    graph = helper.make_graph(g.nodes, os.path.splitext(os.path.basename(model.path))[0], graph_inputs,
                              graph_outputs, g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="framegraph tools/metaltensor/export_onnx.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def default_input(model):
    """A real frame: the centre square of again.mkv at t = 0.5 s resized to the input size (§10)."""
    from fgtools import mt_demos
    frame = mt_demos.decode_frame(mt_demos.default_clip(), 0.5)
    h, w, _ = model.nodes[model.input].shape
    H, W = frame.shape[:2]
    return mt_demos.to_input(mt_demos.resample(frame, *mt_demos.centre_square(W, H), w, h))


def compare(model, onnx_path, x):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    got = sess.run(None, {model.input: x[None].astype(np.float32)})
    ref = mtr.run(model, x, "fp32")
    out = {}
    for o, v in zip([o.name for o in sess.get_outputs()], got):
        r = ref[o]
        out[o] = (float(np.abs(v[0] - r).max()), float(np.abs(r).max()))
    return out


def self_check(verbose=True):
    """Export tiny generated models that exercise the cases the example models do not (odd sizes with
    stride 2, 1x1 stride 2, even kernels, valid/full padding, explicit offsets, trans_conv with negative
    pads, inner pooling windows, ragged concatenation, reshape, arithmetic with two inputs, every
    activation) and compare onnxruntime with the numpy reference."""
    import plistlib
    import tempfile
    rng = np.random.default_rng(7)
    cases = [  # (label, input shape, node dict without inputs/targets)
        ("conv same odd s2", (7, 9, 3), {"kernel": "3", "filters": "4", "stride": "2", "activation": "relu,0.1"}),
        ("conv 1x1 s2", (7, 6, 3), {"kernel": "1", "filters": "5", "stride": "2"}),
        ("conv even k2 s1", (6, 7, 2), {"kernel": "2", "filters": "3", "activation": "relun,0,0.5"}),
        ("conv 4x2 s2", (9, 8, 2), {"kernel": "4,2", "filters": "3", "stride": "2"}),
        ("conv valid 3x5", (9, 7, 3), {"kernel": "3,5", "filters": "2", "padding": "valid"}),
        ("conv valid s2", (9, 8, 2), {"kernel": "3", "filters": "3", "stride": "2", "padding": "valid"}),
        ("conv full", (5, 6, 2), {"kernel": "3", "filters": "2", "padding": "full"}),
        ("conv full 5x3 s2", (5, 7, 2), {"kernel": "5,3", "filters": "3", "stride": "2", "padding": "full"}),
        ("conv offset 0,2", (7, 7, 2), {"kernel": "3", "filters": "2", "stride": "2", "offset": "0,2"}),
        ("conv offset -1,3", (6, 5, 2), {"kernel": "3", "filters": "3", "offset": "-1,3"}),
        ("depthwise odd s2", (7, 9, 3), {"kernel": "3", "filters": "3", "stride": "2", "depthwise": True,
                                          "activation": "linear,2,-1"}),
        ("trans_conv same s2", (4, 5, 3), {"type": "trans_conv", "kernel": "3", "filters": "2", "stride": "2"}),
        ("trans_conv k2 s2", (3, 3, 2), {"type": "trans_conv", "kernel": "2", "filters": "3", "stride": "2"}),
        ("trans_conv k4 s2", (4, 3, 2), {"type": "trans_conv", "kernel": "4", "filters": "2", "stride": "2"}),
        ("trans_conv valid", (3, 4, 2), {"type": "trans_conv", "kernel": "3", "filters": "3", "stride": "2",
                                         "padding": "valid"}),
        ("trans_conv full", (4, 4, 2), {"type": "trans_conv", "kernel": "3", "filters": "2", "stride": "2",
                                        "padding": "full", "activation": "sigmod"}),
        ("trans_conv offset 0,-2", (4, 4, 2), {"type": "trans_conv", "kernel": "3", "filters": "2", "stride": "2",
                                               "offset": "0,-2"}),
        ("trans_conv s3", (3, 3, 2), {"type": "trans_conv", "kernel": "3", "filters": "3", "stride": "3"}),
        ("trans_conv depthwise", (4, 4, 3), {"type": "trans_conv", "kernel": "3", "filters": "3", "stride": "2",
                                             "depthwise": "YES"}),
        ("max pool 2x2 s2", (8, 8, 3), {"type": "pooling_max", "kernel": "2", "stride": "2"}),
        ("avg pool 7x7", (7, 7, 5), {"type": "pooling_average", "kernel": "7", "stride": "7"}),
        ("avg pool 3 s3 inner", (9, 6, 2), {"type": "pooling_average", "kernel": "3", "stride": "3"}),
        ("inverted_residual k5 s2", (9, 7, 8), {"type": "inverted_residual", "expansion": "3", "kernel": "5",
                                                "filters": "6", "stride": "2"}),
        ("inverted_residual residual", (6, 6, 8), {"type": "inverted_residual", "expansion": "2",
                                                   "neurons": "relu;relun,0,6;linear,0.5,0.1"}),
        ("dense", (2, 3, 4), {"type": "dense", "filters": "7", "activation": "relu"}),
        ("softmax", (3, 2, 6), {"type": "softmax"}),
        ("reshape", (2, 3, 4), {"type": "reshape", "output": "4,3,2"}),
        ("power", (3, 3, 2), {"type": "neuron", "activation": "power,0.5,2,3"}),
        ("relun", (3, 3, 2), {"type": "neuron", "activation": "relun,0.2,1.5"}),
    ]
    lines, worst = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        def save(name, plist, weights):
            blob, wmap = b"", {}
            for k, arr in weights.items():
                a = np.asarray(arr, "<f4").tobytes()
                wmap[k] = f"{len(blob)},{len(a)}"
                blob += a
            base = os.path.join(tmp, name)
            with open(base + ".plist", "wb") as f:
                plistlib.dump(plist, f)
            with open(base + ".json", "w") as f:
                f.write("{" + ",".join(f'"{k}":"{v}"' for k, v in wmap.items()) + ",}")
            with open(base + ".bin", "wb") as f:
                f.write(blob)
            return base + ".plist"

        def check(label, path, inputs=None):
            nonlocal worst
            model = mtr.load_model(path)
            onnx_path = path.replace(".plist", ".onnx")
            onnx.save(export(model), onnx_path)
            h, w, c = model.nodes[model.input].shape
            x = rng.standard_normal((h, w, c)).astype(np.float32) if inputs is None else inputs
            for o, (d, mag) in compare(model, onnx_path, x).items():
                worst = max(worst, d)
                lines.append(f"  {label:28s} {o}: max|diff| {d:.2e} (|out| up to {mag:.3g})")
                if d > 1e-4 * max(1.0, mag):
                    raise mtr.MTError(f"export self-check failed: {label}: {d}")

        def rand_weights(node):
            nm = mtr._parse_node("case", "op", dict(node))
            return {wn: np.concatenate([rng.standard_normal(n_w) / np.sqrt(fan), rng.standard_normal(n_b)])
                    for _k, wn, n_w, n_b, _s, fan in mtr.weight_specs(nm)}

        for i, (label, (H, W, C), d) in enumerate(cases):
            t = d.get("type", "convolution")
            node = dict(d, inputs=f"{H},{W},{C}")
            if t in ("convolution", "trans_conv"):
                node["weight"] = "op_w"
            elif t == "dense":
                node["weights"] = "op_w"
            elif t == "inverted_residual":
                node["weights"] = "op_e,op_d,op_p"
            weights = rand_weights(node)
            plist = {"in": {"type": "input", "inputs": f"{H},{W},{C}", "targets": "op"}, "op": node}
            shape = mtr.parse_model(save(f"c{i}", plist, weights)).nodes["op"].shape  # the reference's shapes
            plist["op"] = dict(node, targets="out")
            plist["out"] = {"type": "output", "inputs": ",".join(map(str, shape))}
            check(label, save(f"c{i}", plist, weights))
        # two-input nodes: concatenate with ragged depths and sizes, arithmetic between two tensors
        H, W = 4, 5
        plist = {
            "in": {"type": "input", "inputs": f"{H},{W},3", "targets": "a,b"},
            "a": {"type": "neuron", "inputs": f"{H},{W},3", "activation": "relu", "targets": "cat", "indices": "0"},
            "b": {"type": "pooling_max", "inputs": f"{H},{W},3", "kernel": "2", "stride": "2",
                  "targets": "cat,m,m2", "indices": "1,1,0"},
            "cat": {"type": "concatenate", "inputs": f"{H},{W},3;2,2,3", "targets": "o1"},
            "o1": {"type": "output", "inputs": f"{H},{W},8"},
            "m2": {"type": "neuron", "inputs": "2,2,3", "activation": "linear,1,1", "targets": "m"},
            "m": {"type": "arithmetic", "arithmetic": "divide", "inputs": "2,2,3", "primary_scale": "2",
                  "secondary_scale": "0.5", "bias": "0.25", "targets": "o2"},
            "o2": {"type": "output", "inputs": "2,2,3"},
        }
        x = (rng.random((H, W, 3)) + 0.5).astype(np.float32)
        check("concatenate + arithmetic", save("multi", plist, {}), x)
    if verbose:
        print("\n".join(lines))
        print(f"export self-check passed: {len(lines)} outputs, worst max|diff| {worst:.2e}")
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", help="MODEL.plist")
    ap.add_argument("--out", help="OUT.onnx (put it in a git-ignored folder, e.g. models/cache/)")
    ap.add_argument("--self-check", action="store_true",
                    help="export tiny generated models covering the non-example cases and compare")
    ap.add_argument("--map")
    ap.add_argument("--weights-bin")
    ap.add_argument("--check", action="store_true", help="compare onnxruntime with the numpy reference")
    ap.add_argument("--check-input", help="raw float32 HWC input for --check (default: a real frame)")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args(argv)
    try:
        if a.self_check:
            self_check()
            if not a.model:
                return 0
        if not a.model or not a.out:
            ap.error("MODEL.plist and --out are required (or --self-check)")
        model = mtr.load_model(a.model, a.map, a.weights_bin)
        m = export(model)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        onnx.save(m, a.out + ".tmp")
        os.replace(a.out + ".tmp", a.out)
        print(f"wrote {a.out}: {len(m.graph.node)} ONNX nodes, opset 17, input {model.input} "
              f"NHWC {[1] + list(model.nodes[model.input].shape)}, outputs {', '.join(model.outputs)}")
        if a.check:
            if a.check_input:
                h, w, c = model.nodes[model.input].shape
                x = np.fromfile(a.check_input, "<f4").reshape(h, w, c)
            else:
                x = default_input(model)
            worst = 0.0
            for o, (d, mag) in compare(model, a.out, x).items():
                print(f"  {o}: max|onnxruntime - reference| {d:.3g} (outputs up to {mag:.3g})")
                worst = max(worst, d)
            if worst > a.tol:
                print(f"error: max diff {worst:.3g} > tol {a.tol}", file=sys.stderr)
                return 1
    except mtr.MTError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
