#!/usr/bin/env python3
"""Convert MediaPipe's float TFLite models to ONNX (small, dependency-light).

Why our own converter: tf2onnx's TFLite path imports TensorFlow (hundreds of MB,
numpy/protobuf pins that clash with the tools venv), and it cannot map
MediaPipe's custom op ``Convolution2DTransposeBias`` anyway. This converter
reads the flatbuffer with the ``tflite`` package and writes ONNX with ``onnx``.

Supported ops (enough for the four MediaPipe models FrameGraph uses):
DEQUANTIZE (fp16 weights -> fp32 initialisers), CONV_2D, DEPTHWISE_CONV_2D,
ADD, MUL, RELU, RELU6, LOGISTIC, HARD_SWISH, PRELU, AVERAGE_POOL_2D,
MAX_POOL_2D, MEAN, PAD, RESIZE_BILINEAR, RESHAPE, CONCATENATION and the custom
``Convolution2DTransposeBias`` (MediaPipe: inputs x, weights [O,H,W,I], bias
[O]; custom options = TfLiteTransposeConvParams {padding, stride_w, stride_h}
as three int32; the selfie models use padding SAME, stride 2x2), which becomes
a standard ONNX ConvTranspose with bias.

Layout: the ONNX model keeps TFLite's NHWC graph inputs/outputs (same names,
same shapes) and works in NCHW inside (one Transpose at each end).

Usage:
  tflite_to_onnx.py MODEL.tflite OUT.onnx [--check] [--tol 1e-4]
  --check runs LiteRT (XNNPACK) and onnxruntime on the same seeded random input
  in [0,1) and fails (exit 1) when max |diff| > tol + rtol * max |output|.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import onnx
import tflite
from onnx import TensorProto, helper, numpy_helper

OPSET = 17

_BUILTIN_NAMES = {v: k for k, v in tflite.BuiltinOperator.__dict__.items() if not k.startswith("_")}
_TFL_DTYPES = {
    tflite.TensorType.FLOAT32: np.float32,
    tflite.TensorType.FLOAT16: np.float16,
    tflite.TensorType.INT32: np.int32,
    tflite.TensorType.INT64: np.int64,
    tflite.TensorType.UINT8: np.uint8,
    tflite.TensorType.INT8: np.int8,
}
NHWC_TO_NCHW = [0, 3, 1, 2]
NCHW_TO_NHWC = [0, 2, 3, 1]


def _opts(op, cls):
    o = cls()
    t = op.BuiltinOptions()
    o.Init(t.Bytes, t.Pos)
    return o


def _same_pads(in_size, k, s, d=1):
    out = -(-in_size // s)
    eff = (k - 1) * d + 1
    total = max((out - 1) * s + eff - in_size, 0)
    return total // 2, total - total // 2


class Converter:
    def __init__(self, buf: bytes):
        self.model = tflite.Model.GetRootAsModel(buf, 0)
        self.g = self.model.Subgraphs(0)
        self.nodes: list = []
        self.inits: dict[str, np.ndarray] = {}
        self.layout: dict[int, str] = {}  # tensor index -> 'nchw' | 'plain'
        self.const: dict[int, np.ndarray] = {}
        self._uid = 0

    # ---- helpers -------------------------------------------------------
    def tname(self, i: int) -> str:
        return f"t{i}_" + self.g.Tensors(i).Name().decode()

    def shape(self, i: int) -> list[int]:
        return [int(x) for x in self.g.Tensors(i).ShapeAsNumpy()]

    def uniq(self, base: str) -> str:
        self._uid += 1
        return f"{base}__{self._uid}"

    def buffer_of(self, i: int):
        t = self.g.Tensors(i)
        b = self.model.Buffers(t.Buffer())
        if b is None or b.DataLength() == 0:
            return None
        raw = b.DataAsNumpy().tobytes()
        return np.frombuffer(raw, dtype=_TFL_DTYPES[t.Type()]).reshape(self.shape(i))

    def value(self, i: int):
        if i in self.const:
            return self.const[i]
        v = self.buffer_of(i)
        if v is not None:
            self.const[i] = v
        return v

    def add_init(self, arr: np.ndarray, base: str) -> str:
        name = self.uniq(base)
        self.inits[name] = np.ascontiguousarray(arr)
        return name

    def node(self, op_type, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=self.uniq(op_type), **attrs))

    def act_input(self, i: int) -> str:
        """Name of activation tensor i (an ONNX value, or a constant turned initialiser)."""
        if i in self.layout:
            return self.tname(i)
        v = self.value(i)
        if v is None:
            raise ValueError(f"tensor {i} has neither producer nor data")
        v = v.astype(np.float32) if v.dtype == np.float16 else v
        if v.ndim == 4:
            return self.add_init(v.transpose(NHWC_TO_NCHW), "c")
        return self.add_init(v, "c")

    def broadcast_const(self, i: int, rank4: bool) -> str:
        """Constant operand of a binary op; NHWC-broadcastable -> NCHW-broadcastable."""
        v = self.value(i).astype(np.float32)
        if rank4:
            v = v.reshape([1] * (4 - v.ndim) + list(v.shape)).transpose(NHWC_TO_NCHW)
        return self.add_init(v, "c")

    def fused(self, out_name: str, act: int) -> tuple[str, str | None]:
        """Returns (name the op must write, activation to apply after)."""
        A = tflite.ActivationFunctionType
        if act == A.NONE:
            return out_name, None
        pre = self.uniq(out_name + "_pre")
        if act == A.RELU:
            self.pending = ("Relu", pre, out_name, {})
        elif act == A.RELU6:
            self.pending = ("Clip", pre, out_name, {"min": 0.0, "max": 6.0})
        elif act == A.RELU_N1_TO_1:
            self.pending = ("Clip", pre, out_name, {"min": -1.0, "max": 1.0})
        elif act == A.TANH:
            self.pending = ("Tanh", pre, out_name, {})
        else:
            raise NotImplementedError(f"fused activation {act}")
        return pre, "pending"

    def finish(self, flag):
        if flag is None:
            return
        kind, src, dst, lim = self.pending
        if kind == "Clip":
            lo = self.add_init(np.array(lim["min"], np.float32), "lo")
            hi = self.add_init(np.array(lim["max"], np.float32), "hi")
            self.node("Clip", [src, lo, hi], [dst])
        else:
            self.node(kind, [src], [dst])

    # ---- conversion ----------------------------------------------------
    def convert(self) -> onnx.ModelProto:
        g = self.g
        graph_inputs, graph_outputs = [], []
        for k in range(g.InputsLength()):
            i = g.Inputs(k)
            name = g.Tensors(i).Name().decode()
            shp = self.shape(i)
            graph_inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shp))
            if len(shp) == 4:
                self.node("Transpose", [name], [self.tname(i)], perm=NHWC_TO_NCHW)
                self.layout[i] = "nchw"
            else:
                self.node("Identity", [name], [self.tname(i)])
                self.layout[i] = "plain"

        for n in range(g.OperatorsLength()):
            self.convert_op(g.Operators(n))

        for k in range(g.OutputsLength()):
            i = g.Outputs(k)
            name = g.Tensors(i).Name().decode()
            shp = self.shape(i)
            graph_outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shp))
            if self.layout[i] == "nchw":
                self.node("Transpose", [self.tname(i)], [name], perm=NCHW_TO_NHWC)
            else:
                self.node("Identity", [self.tname(i)], [name])

        graph = helper.make_graph(
            self.nodes, "converted_from_tflite", graph_inputs, graph_outputs,
            initializer=[numpy_helper.from_array(v, k) for k, v in self.inits.items()],
        )
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="framegraph-tflite_to_onnx")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    def convert_op(self, op):
        oc = self.model.OperatorCodes(op.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = _BUILTIN_NAMES.get(code, str(code))
        ins = [int(x) for x in op.InputsAsNumpy()]
        outs = [int(x) for x in op.OutputsAsNumpy()]
        o = outs[0]
        out = self.tname(o)
        B = tflite.BuiltinOperator
        P = tflite.Padding

        if code == B.DEQUANTIZE:
            v = self.value(ins[0])
            if v is None:
                raise NotImplementedError("DEQUANTIZE of a runtime tensor")
            self.const[o] = v.astype(np.float32)
            return

        if code in (B.CONV_2D, B.DEPTHWISE_CONV_2D):
            x = self.g.Tensors(ins[0])
            w = self.value(ins[1]).astype(np.float32)
            bias = self.value(ins[2]).astype(np.float32) if len(ins) > 2 and ins[2] >= 0 else None
            in_shape = self.shape(ins[0])
            if code == B.CONV_2D:
                opt = _opts(op, tflite.Conv2DOptions)
                wk = w.transpose(0, 3, 1, 2)  # [O,H,W,I] -> [O,I,H,W]
                group = 1
            else:
                opt = _opts(op, tflite.DepthwiseConv2DOptions)
                wk = w.transpose(3, 0, 1, 2)  # [1,H,W,C*m] -> [C*m,1,H,W]
                group = in_shape[3]
            kh, kw = wk.shape[2], wk.shape[3]
            sh, sw = opt.StrideH(), opt.StrideW()
            dh, dw = opt.DilationHFactor(), opt.DilationWFactor()
            if opt.Padding() == P.SAME:
                pt, pb = _same_pads(in_shape[1], kh, sh, dh)
                pl, pr = _same_pads(in_shape[2], kw, sw, dw)
            else:
                pt = pb = pl = pr = 0
            tgt, flag = self.fused(out, opt.FusedActivationFunction())
            inputs = [self.act_input(ins[0]), self.add_init(wk, "w")]
            if bias is not None:
                inputs.append(self.add_init(bias, "b"))
            self.node("Conv", inputs, [tgt], kernel_shape=[kh, kw], strides=[sh, sw],
                      dilations=[dh, dw], pads=[pt, pl, pb, pr], group=group)
            self.finish(flag)
            self.layout[o] = "nchw"
            return

        if name == "CUSTOM":
            cname = oc.CustomCode().decode()
            if cname != "Convolution2DTransposeBias":
                raise NotImplementedError(f"custom op {cname}")
            padding, stride_w, stride_h = np.frombuffer(op.CustomOptionsAsNumpy().tobytes(), dtype=np.int32)[:3]
            w = self.value(ins[1]).astype(np.float32)  # [O,H,W,I]
            bias = self.value(ins[2]).astype(np.float32)
            wk = w.transpose(3, 0, 1, 2)  # -> [I,O,H,W] (ONNX ConvTranspose)
            kh, kw = wk.shape[2], wk.shape[3]
            in_shape = self.shape(ins[0])
            out_shape = self.shape(o)
            if padding == P.SAME:
                # crop of the full transposed-conv output, as TF's conv2d_transpose SAME
                th = max((in_shape[1] - 1) * stride_h + kh - out_shape[1], 0)
                tw = max((in_shape[2] - 1) * stride_w + kw - out_shape[2], 0)
                pads = [th // 2, tw // 2, th - th // 2, tw - tw // 2]
            else:
                pads = [0, 0, 0, 0]
            self.node("ConvTranspose", [self.act_input(ins[0]), self.add_init(wk, "w"), self.add_init(bias, "b")],
                      [out], kernel_shape=[kh, kw], strides=[int(stride_h), int(stride_w)], pads=pads,
                      output_shape=[out_shape[1], out_shape[2]])
            self.layout[o] = "nchw"
            return

        if code in (B.ADD, B.MUL):
            opt = _opts(op, tflite.AddOptions if code == B.ADD else tflite.MulOptions)
            rank4 = len(self.shape(o)) == 4
            args = []
            for i in ins:
                if i in self.layout:
                    if self.layout[i] != ("nchw" if rank4 else "plain"):
                        raise NotImplementedError("mixed layouts in binary op")
                    args.append(self.tname(i))
                else:
                    args.append(self.broadcast_const(i, rank4))
            tgt, flag = self.fused(out, opt.FusedActivationFunction())
            self.node("Add" if code == B.ADD else "Mul", args, [tgt])
            self.finish(flag)
            self.layout[o] = "nchw" if rank4 else "plain"
            return

        simple = {B.RELU: "Relu", B.LOGISTIC: "Sigmoid", B.HARD_SWISH: "HardSwish", B.TANH: "Tanh"}
        if code in simple:
            self.node(simple[code], [self.act_input(ins[0])], [out])
            self.layout[o] = self.layout[ins[0]]
            return
        if code == B.RELU6:
            lo = self.add_init(np.array(0, np.float32), "lo")
            hi = self.add_init(np.array(6, np.float32), "hi")
            self.node("Clip", [self.act_input(ins[0]), lo, hi], [out])
            self.layout[o] = self.layout[ins[0]]
            return

        if code == B.PRELU:
            alpha = self.value(ins[1]).astype(np.float32)  # [1,1,C] (NHWC, broadcast)
            a4 = alpha.reshape([1] * (4 - alpha.ndim) + list(alpha.shape)).transpose(NHWC_TO_NCHW)[0]
            self.node("PRelu", [self.act_input(ins[0]), self.add_init(a4, "alpha")], [out])
            self.layout[o] = "nchw"
            return

        if code in (B.AVERAGE_POOL_2D, B.MAX_POOL_2D):
            opt = _opts(op, tflite.Pool2DOptions)
            in_shape = self.shape(ins[0])
            kh, kw, sh, sw = opt.FilterHeight(), opt.FilterWidth(), opt.StrideH(), opt.StrideW()
            if opt.Padding() == P.SAME:
                pt, pb = _same_pads(in_shape[1], kh, sh)
                pl, pr = _same_pads(in_shape[2], kw, sw)
            else:
                pt = pb = pl = pr = 0
            tgt, flag = self.fused(out, opt.FusedActivationFunction())
            kind = "AveragePool" if code == B.AVERAGE_POOL_2D else "MaxPool"
            extra = {"count_include_pad": 0} if kind == "AveragePool" else {}
            self.node(kind, [self.act_input(ins[0])], [tgt], kernel_shape=[kh, kw], strides=[sh, sw],
                      pads=[pt, pl, pb, pr], **extra)
            self.finish(flag)
            self.layout[o] = "nchw"
            return

        if code == B.MEAN:
            opt = _opts(op, tflite.ReducerOptions)
            axes = [int(a) for a in self.value(ins[1]).reshape(-1)]
            if self.layout[ins[0]] == "nchw":
                axes = [NHWC_TO_NCHW.index(a % 4) for a in axes]
                if not opt.KeepDims():
                    raise NotImplementedError("MEAN without keep_dims on 4-D input")
            self.node("ReduceMean", [self.act_input(ins[0])], [out], axes=axes, keepdims=int(opt.KeepDims()))
            self.layout[o] = self.layout[ins[0]]
            return

        if code == B.PAD:
            p = self.value(ins[1]).astype(np.int64)  # [rank, 2] in NHWC order
            if self.layout[ins[0]] == "nchw":
                p = p[NHWC_TO_NCHW]
            pads = np.concatenate([p[:, 0], p[:, 1]])
            self.node("Pad", [self.act_input(ins[0]), self.add_init(pads, "pads")], [out], mode="constant")
            self.layout[o] = self.layout[ins[0]]
            return

        if code == B.RESIZE_BILINEAR:
            opt = _opts(op, tflite.ResizeBilinearOptions)
            size = [int(s) for s in self.value(ins[1]).reshape(-1)]
            in_shape = self.shape(ins[0])
            if opt.AlignCorners():
                mode = "align_corners"
            elif opt.HalfPixelCenters():
                mode = "half_pixel"
            else:
                mode = "asymmetric"
            sizes = np.array([in_shape[0], in_shape[3], size[0], size[1]], np.int64)
            self.node("Resize", [self.act_input(ins[0]), "", "", self.add_init(sizes, "sizes")], [out],
                      mode="linear", coordinate_transformation_mode=mode)
            self.layout[o] = "nchw"
            return

        if code == B.RESHAPE:
            src = self.act_input(ins[0])
            if self.layout.get(ins[0]) == "nchw":
                t = self.uniq("nhwc")
                self.node("Transpose", [src], [t], perm=NCHW_TO_NHWC)
                src = t
            shp = np.array(self.shape(o), np.int64)
            self.node("Reshape", [src, self.add_init(shp, "shape")], [out])
            self.layout[o] = "plain"
            return

        if code == B.CONCATENATION:
            opt = _opts(op, tflite.ConcatenationOptions)
            lays = {self.layout.get(i, "plain") for i in ins}
            if len(lays) != 1:
                raise NotImplementedError("mixed layouts in CONCATENATION")
            lay = lays.pop()
            axis = opt.Axis()
            rank = len(self.shape(o))
            axis %= rank
            if lay == "nchw":
                axis = NHWC_TO_NCHW.index(axis)
            tgt, flag = self.fused(out, opt.FusedActivationFunction())
            self.node("Concat", [self.act_input(i) for i in ins], [tgt], axis=axis)
            self.finish(flag)
            self.layout[o] = lay
            return

        raise NotImplementedError(f"TFLite op {name} ({code})")


def convert_file(tflite_path: str, onnx_path: str | None = None) -> onnx.ModelProto:
    with open(tflite_path, "rb") as f:
        m = Converter(f.read()).convert()
    if onnx_path:
        onnx.save(m, onnx_path)
    return m


def check(tflite_path: str, onnx_path: str, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Per output: (max |LiteRT(XNNPACK) - onnxruntime|, max |LiteRT|) on a seeded random input in [0,1]."""
    import onnxruntime as ort
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=tflite_path, num_threads=1)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    x = np.random.default_rng(seed).random(d["shape"], dtype=np.float32)
    it.set_tensor(d["index"], x)
    it.invoke()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    res = sess.run(None, {sess.get_inputs()[0].name: x})
    diffs = {}
    for o, r in zip(it.get_output_details(), res):
        ref = it.get_tensor(o["index"])
        onx = dict(zip([s.name for s in sess.get_outputs()], res))[o["name"]]
        diffs[o["name"]] = (float(np.max(np.abs(ref - onx))), float(np.max(np.abs(ref))))
    return diffs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tflite")
    ap.add_argument("onnx")
    ap.add_argument("--check", action="store_true", help="compare with LiteRT on a seeded random input")
    ap.add_argument("--tol", type=float, default=1e-4, help="absolute tolerance (default 1e-4)")
    ap.add_argument("--rtol", type=float, default=2e-6,
                    help="plus this times max|output| (outputs in pixels, e.g. landmarks, need it; default 2e-6)")
    a = ap.parse_args(argv)
    m = convert_file(a.tflite, a.onnx)
    print(f"wrote {a.onnx}: {len(m.graph.node)} ONNX nodes, opset {OPSET}")
    if a.check:
        diffs = check(a.tflite, a.onnx)
        ok = all(d <= a.tol + a.rtol * m for d, m in diffs.values())
        for k, (d, m) in diffs.items():
            print(f"  {k}: max|LiteRT - onnxruntime| = {d:.3g}  (max|LiteRT| = {m:.4g})")
        print("check:", "OK" if ok else f"FAILED (tol {a.tol} + {a.rtol} * max|output|)")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
