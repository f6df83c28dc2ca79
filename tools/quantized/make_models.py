#!/usr/bin/env python3
"""Make FrameGraph's quantized / fp16 / bundled / SSD test models with the standard converters.

  tools/quantized/ensure.sh                                     # setup.sh, then this; a no-op when current
  tools/quantized/setup.sh                                      # .venv-quant (TensorFlow, onnxruntime, …)
  .venv-quant/bin/python tools/quantized/make_models.py         # everything (about 80 s on 2 cores)
  .venv-quant/bin/python tools/quantized/make_models.py --force # even when the stamp says it is current
  .venv-quant/bin/python tools/quantized/make_models.py --only opzoo ssd task

Writes models/cache/quantized/ (git-ignored; FRAMEGRAPH_QUANT_OUT: another folder): the models,
manifest.json (for each model: how it was made, SHA-256, inputs/outputs with their quantization,
operator counts, what LiteRT delegates to XNNPACK; the photos used; the stamp) and
reference/MODEL/PHOTO/ (reference.py's outputs on the first 8 val photos).

Photos: BSDS500 (../shared/data/bsds500: the first 100 train photos by name for calibration, val
for the references) when present, else frames of samples/media/portrait.mp4 (tools/make-samples.sh):
100 "train" and 8 "val" frames spread over the clip (qcommon.images).
FRAMEGRAPH_QUANT_PHOTOS=samples forces the frames (what a clone without ../shared gets).

A full run ends by writing a stamp into manifest.json: the SHA-256 of make_models.py, qcommon.py,
reference.py, requirements.txt, the photos (source and bytes) and the source models. A later full
run with the same stamp, every model and reference there, does nothing (~0.2 s).

Groups (--only):
  mobilenet  MobileNetV2 1.0/224 (Keras, random weights made meaningful, below): TFLiteConverter
             full-integer int8 (int8 I/O), int8 with uint8 I/O, dynamic-range, and an all-uint8
             model from a fake-quant graph (the TF1 quantization-aware form of TF Hub's classic
             *_quant.tflite models).
  opzoo      a ~20 KB model using every builtin issue 41 lists, as float, int8, int8 with uint8 I/O,
             all-uint8 and dynamic-range.
  onnx       EfficientNet-Lite0 (models/cache/efficientnet_lite0.onnx): quantize_static QDQ
             per-channel (uint8 and int8 activations), QOperator (QLinearConv …), fp16 (whole graph,
             Cast at the I/O) and fp16 weights only (fp16 initializers → Cast → float ops).
  task       face_landmarker.task: a MediaPipe Tasks bundle (stored, 4-byte aligned zip) of the face
             detector and landmark models; and a deflated copy MediaPipe itself refuses.
  ssd        a small SSD whose graph ends in TFLite_Detection_PostProcess: fast and regular NMS
             float, and full-integer int8, the op attached as TF's object detection API does; and an
             all-uint8 one whose op takes uint8 boxes/scores/anchors (appended to the flatbuffer).

Random weights, made meaningful: BatchNorm statistics are set from photos (one training-mode pass
with momentum 0), so every layer sees normalised activations as in a trained network; a
classifier's last layer is centred and scaled on the photos' features so that its logits spread
(top-1 differs from photo to photo and softmax is not flat). Parity is about arithmetic; the labels
mean nothing.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # the same float arithmetic run to run

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qcommon as qc  # noqa: E402
import reference as ref  # noqa: E402

SEED = 41
N_CALIB = 100        # calibration photos (BSDS500 train, sorted; else sample frames)
N_BN = 32            # photos for the BatchNorm statistics
REF_PHOTOS = 8       # reference outputs on this many val photos per model (BSDS500 val, else sample frames)
MANIFEST_MODELS: dict = {}
TIMINGS: dict = {}


# ----------------------------------------------------------------------------------------------
# TensorFlow / Keras
# ----------------------------------------------------------------------------------------------

def tf_init():
    import tensorflow as tf
    import keras
    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()
    return tf, keras


def signed(x_u8: np.ndarray) -> np.ndarray:
    """Bytes to the −1…1 input the Keras models take: (b − 127.5) / 127.5."""
    return (x_u8.astype(np.float32) - 127.5) / 127.5


SIGNED_NORM = {"mean": 127.5, "std": 127.5, "note": "float input = (byte − 127.5) / 127.5"}


def calibrate_batchnorm(model, x: np.ndarray, rng: np.random.Generator, gamma=(0.6, 1.4), beta=(0.0, 0.25)) -> None:
    """Give every BatchNormalization random affine parameters (gamma uniform in `gamma`, beta
    normal with (mean, sd) `beta`), then statistics from `x`: one training-mode pass with momentum
    0 sets each moving mean/variance to its batch's moments.

    A deep random network whose units sit at the ReLU's kink half the time (beta 0) is chaotic: a
    one-step change of its input decorrelates its output (MobileNetV2: relative change 1.1 at
    out_relu for ±1/127.5 on the input), so two correct integer implementations would disagree on
    top-1. A positive beta keeps most units on the linear side (8 % at zero with beta 1.5) and the
    change stays about what it was at the input (0.13 → 0.19 over the depth)."""
    import keras
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            n = layer.gamma.shape[0]
            layer.gamma.assign(rng.uniform(*gamma, n).astype(np.float32))
            layer.beta.assign(rng.normal(*beta, n).astype(np.float32))
            layer.momentum = 0.0
    model(x, training=True)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.momentum = 0.99


def spread_head(model, dense_name: str, x: np.ndarray, rng: np.random.Generator, spread: float,
                principal: int | None = None, live: int | None = None) -> None:
    """Set Dense `dense_name`'s weights so that, over the photos `x`, its logits are centred and an
    image's logits across classes have standard deviation ≈ `spread`.

    With `principal` = k the logits read only the k directions in which the photos' features vary
    most (their principal components, each in proportion to its spread) through a random k×classes matrix. In a random
    network the features of different photos differ little, and quantization noise spreads
    over every feature alike; reading the few directions where the photos really differ keeps the
    top-1 class a property of the photo rather than of rounding (a trained network's features are
    similarly concentrated).

    With `live` = m only the first m classes get that spread; the others read the same directions
    ten times more weakly and sit `3 × spread` lower, so they never win. Among 1000 classes that
    all vary, some pair is always nearly tied and the top-1 flips with the last bit; a trained
    classifier is sure of its answer on most photos, and so is this one."""
    import keras
    dense = model.get_layer(dense_name)
    feats = keras.Model(model.inputs, dense.input).predict(x, verbose=0).reshape(len(x), -1).astype(np.float64)
    mu = feats.mean(0)
    centred = feats - mu
    n_in, n_out = dense.kernel.shape
    if principal:
        _, sv, vt = np.linalg.svd(centred, full_matrices=False)
        std = sv[:principal] / np.sqrt(len(x))
        w = (vt[:principal].T / std[0]) @ rng.normal(0.0, 1.0, (principal, n_out))
    else:
        w = rng.normal(0.0, 1.0, (n_in, n_out))
    m = live or n_out
    w *= spread / (np.linalg.norm(centred @ w[:, :m], axis=1) / np.sqrt(m)).mean()
    bias = -mu @ w
    if live:
        w[:, live:] *= 0.1
        bias[live:] = -mu @ w[:, live:] - 3.0 * spread
    dense.kernel.assign(w.astype(np.float32))
    dense.bias.assign(bias.astype(np.float32))


def representative(x_float: np.ndarray):
    def gen():
        for i in range(len(x_float)):
            yield [x_float[i:i + 1]]
    return gen


def convert_keras(model, mode: str, x_calib: np.ndarray | None) -> bytes:
    """TFLiteConverter.from_keras_model with mode: float | dynamic | int8 | int8-uint8io."""
    import tensorflow as tf
    c = tf.lite.TFLiteConverter.from_keras_model(model)
    if mode != "float":
        c.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode in ("int8", "int8-uint8io"):
        c.representative_dataset = representative(x_calib)
        c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io_type = tf.int8 if mode == "int8" else tf.uint8
        c.inference_input_type = io_type
        c.inference_output_type = io_type
    with contextlib.redirect_stdout(io.StringIO()):   # Keras' export prints the whole signature
        return c.convert()


def converter_settings(mode: str) -> dict:
    return {
        "float": {"converter": "tf.lite.TFLiteConverter.from_keras_model", "optimizations": []},
        "dynamic": {"converter": "tf.lite.TFLiteConverter.from_keras_model", "optimizations": ["DEFAULT"],
                    "representative_dataset": None, "quantization": "dynamic range: int8 weights (per channel for conv), float activations and I/O"},
        "int8": {"converter": "tf.lite.TFLiteConverter.from_keras_model", "optimizations": ["DEFAULT"],
                 "representative_dataset": "photos", "supported_ops": ["TFLITE_BUILTINS_INT8"],
                 "inference_input_type": "int8", "inference_output_type": "int8",
                 "quantization": "full integer: int8 activations (asymmetric, per tensor), int8 weights (symmetric, per channel for conv/depthwise, per tensor for fully connected), int32 bias"},
        "int8-uint8io": {"converter": "tf.lite.TFLiteConverter.from_keras_model", "optimizations": ["DEFAULT"],
                         "representative_dataset": "photos", "supported_ops": ["TFLITE_BUILTINS_INT8"],
                         "inference_input_type": "uint8", "inference_output_type": "uint8",
                         "quantization": "full integer, int8 inside; QUANTIZE uint8→int8 at the input and int8→uint8 at the output"},
    }[mode]


# ----------------------------------------------------------------------------------------------
# All-uint8 models: a TF1 graph with FakeQuant nodes (quantization-aware form), converted with
# inference_type=uint8 — how TF Hub's classic *_quant.tflite models were made. Weights uint8
# asymmetric per tensor, activations uint8 asymmetric per tensor, bias int32.
# ----------------------------------------------------------------------------------------------

_COMPUTE = ("Conv2D", "DepthwiseConv2D", "Dense", "Conv2DTranspose")
_SAME_SCALE = ("ZeroPadding2D", "MaxPooling2D", "AveragePooling2D", "Flatten", "Reshape", "Resize", "Dropout")


def _inbound(layer) -> list:
    node = layer._inbound_nodes[0]
    return [kt._keras_history[0] for kt in node.input_tensors]


def _act_name(layer) -> str:
    """relu | relu6 | linear | other for a ReLU/Activation layer or a layer's inline activation."""
    import keras
    if isinstance(layer, keras.layers.ReLU):
        if layer.max_value is not None and float(layer.max_value) == 6.0 and not layer.negative_slope and not layer.threshold:
            return "relu6"
        if layer.max_value is None and not layer.negative_slope and not layer.threshold:
            return "relu"
        return "other"
    act = getattr(layer, "activation", None)
    if act is None:
        return "linear"
    return {"linear": "linear", "relu": "relu", "relu6": "relu6"}.get(getattr(act, "__name__", ""), "other")


def layer_ranges(model, x: np.ndarray, names: list[str]) -> dict[str, tuple[float, float]]:
    """min/max of each named layer's output over the photos (float model), widened to contain 0."""
    import keras
    probe = keras.Model(model.inputs, [model.get_layer(n).output for n in names])
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    for i in range(0, len(x), 10):
        outs = probe.predict(x[i:i + 10], verbose=0)
        outs = outs if isinstance(outs, list) else [outs]
        for n, o in zip(names, outs):
            lo[n] = min(lo[n], float(o.min()))
            hi[n] = max(hi[n], float(o.max()))
    return {n: (min(lo[n], 0.0), max(hi[n], 0.0)) for n in names}


def convert_uint8_fakequant(model, x_calib: np.ndarray) -> bytes:
    """All-uint8 TFLite from a Keras functional model: each layer re-emitted as TF1 ops, BatchNorm
    folded into the convolution before it, FakeQuant with the photos' min/max after every op that
    changes the scale (weights: their own min/max, per tensor), then the converter's legacy
    quantized path (inference_type=uint8, quantized_input_stats)."""
    import keras
    import tensorflow as tf
    tf1 = tf.compat.v1
    layers = model.layers
    consumers = collections.defaultdict(list)
    for layer in layers:
        if not isinstance(layer, keras.layers.InputLayer):
            for p in _inbound(layer):
                consumers[p.name].append(layer)
    # Groups: compute layer [+ BatchNorm] [+ ReLU/ReLU6], each consumer the only one of the last.
    absorbed: dict[str, str] = {}
    groups: dict[str, list] = {}
    for layer in layers:
        if type(layer).__name__ not in _COMPUTE:
            continue
        g = [layer]
        nxt = consumers[layer.name]
        if _act_name(layer) == "linear" and len(nxt) == 1 and isinstance(nxt[0], keras.layers.BatchNormalization):
            g.append(nxt[0])
            nxt = consumers[nxt[0].name]
        if _act_name(layer) == "linear" and len(nxt) == 1 and type(nxt[0]).__name__ in ("ReLU", "Activation") \
                and _act_name(nxt[0]) in ("relu", "relu6"):
            g.append(nxt[0])
        groups[layer.name] = g
        for m in g[1:]:
            absorbed[m.name] = layer.name
    quant_after = []
    for layer in layers:
        kind = type(layer).__name__
        if isinstance(layer, keras.layers.InputLayer) or layer.name in absorbed or kind in _SAME_SCALE:
            continue
        quant_after.append(groups[layer.name][-1].name if layer.name in groups else layer.name)
    ranges = layer_ranges(model, x_calib, quant_after)

    def fq(t, lo, hi):
        return tf.quantization.fake_quant_with_min_max_args(t, min=float(lo), max=float(hi), num_bits=8)

    def fq_weights(w):
        w = np.asarray(w, np.float32)
        return fq(tf.constant(w), min(float(w.min()), 0.0), max(float(w.max()), 0.0))

    # Weights as numpy, read before the TF1 graph (where eager reads are off).
    npv = {(layer.name, attr): getattr(layer, attr).numpy() for layer in layers
           for attr in ("kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance")
           if getattr(layer, attr, None) is not None}
    graph = tf.Graph()
    out_names = [o._keras_history[0].name for o in model.outputs]
    with graph.as_default():
        t: dict[str, tf.Tensor] = {}
        inp = None
        for layer in layers:
            kind = type(layer).__name__
            if isinstance(layer, keras.layers.InputLayer):
                shape = [1] + list(layer.output.shape[1:])
                inp = tf1.placeholder(tf.float32, shape, name="input")
                t[layer.name] = fq(inp, -1.0, 127.0 / 128.0)   # quantized_input_stats (128, 128)
                continue
            if layer.name in absorbed:
                continue
            xs = [t[p.name] for p in _inbound(layer)]
            x = xs[0]
            if layer.name in groups:
                g = groups[layer.name]
                w = np.asarray(npv[layer.name, "kernel"], np.float32)
                b = np.asarray(npv[layer.name, "bias"], np.float32) if (layer.name, "bias") in npv else None
                out_axis = {"Conv2D": 3, "DepthwiseConv2D": None, "Dense": 1, "Conv2DTranspose": 2}[kind]
                n_out = w.shape[2] * w.shape[3] if kind == "DepthwiseConv2D" else w.shape[out_axis]
                b = np.zeros(n_out, np.float32) if b is None else b
                for m in g[1:]:
                    if isinstance(m, keras.layers.BatchNormalization):
                        s = npv[m.name, "gamma"] / np.sqrt(npv[m.name, "moving_variance"] + m.epsilon)
                        shift = npv[m.name, "beta"] - npv[m.name, "moving_mean"] * s
                        if kind == "DepthwiseConv2D":
                            w = w * s.reshape(w.shape[2], w.shape[3])
                        else:
                            shp = [1] * w.ndim
                            shp[out_axis] = -1
                            w = w * s.reshape(shp)
                        b = b * s + shift
                wq = fq_weights(w)
                strides = list(layer.strides) if hasattr(layer, "strides") else None
                padding = layer.padding.upper() if hasattr(layer, "padding") else None
                if kind == "Conv2D":
                    y = tf.nn.conv2d(x, wq, strides=[1] + strides + [1], padding=padding,
                                     dilations=[1] + list(layer.dilation_rate) + [1])
                elif kind == "DepthwiseConv2D":
                    y = tf.nn.depthwise_conv2d(x, wq, strides=[1] + strides + [1], padding=padding,
                                               dilations=list(layer.dilation_rate))
                elif kind == "Conv2DTranspose":
                    oshape = [1] + list(layer.output.shape[1:])
                    y = tf.nn.conv2d_transpose(x, wq, output_shape=oshape, strides=[1] + strides + [1], padding=padding)
                else:
                    y = tf.matmul(x, wq)
                y = tf.nn.bias_add(y, tf.constant(b.astype(np.float32)))
                act = _act_name(g[-1]) if len(g) > 1 and type(g[-1]).__name__ in ("ReLU", "Activation") else _act_name(layer)
                if act == "relu6":
                    y = tf.nn.relu6(y)
                elif act == "relu":
                    y = tf.nn.relu(y)
                elif act != "linear":
                    raise SystemExit(f"uint8 graph: {layer.name}: activation {layer.activation} not supported")
                t[layer.name] = fq(y, *ranges[g[-1].name])
                for m in g[1:]:
                    t[m.name] = t[layer.name]
                continue
            if kind == "ZeroPadding2D":
                (pt, pb), (pl, pr) = layer.padding
                y = tf.pad(x, [[0, 0], [pt, pb], [pl, pr], [0, 0]])
            elif kind in ("MaxPooling2D", "AveragePooling2D"):
                fn = tf.nn.max_pool2d if kind == "MaxPooling2D" else tf.nn.avg_pool2d
                y = fn(x, ksize=list(layer.pool_size), strides=list(layer.strides), padding=layer.padding.upper())
            elif kind in ("Flatten", "Reshape"):
                y = tf.reshape(x, [1] + list(layer.output.shape[1:]))
            elif kind == "Resize":
                y = layer.resize(x)
            elif kind == "Dropout":
                y = x
            elif kind == "Add":
                y = fq(tf.add_n(xs) if len(xs) > 2 else tf.add(xs[0], xs[1]), *ranges[layer.name])
            elif kind == "Multiply":
                y = fq(tf.multiply(xs[0], xs[1]), *ranges[layer.name])
            elif kind == "Concatenate":
                y = fq(tf.concat(xs, axis=layer.axis), *ranges[layer.name])
            elif kind == "GlobalAveragePooling2D":
                y = fq(tf.reduce_mean(x, axis=[1, 2], keepdims=layer.keepdims), *ranges[layer.name])
            elif kind == "Softmax":
                y = fq(tf.nn.softmax(x), 0.0, 255.0 / 256.0)
            elif kind == "Activation" and layer.activation.__name__ == "sigmoid":
                y = fq(tf.sigmoid(x), 0.0, 255.0 / 256.0)
            elif kind == "HardSwish":
                y = fq(x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0), *ranges[layer.name])
            elif kind in ("ReLU", "Activation") and _act_name(layer) in ("relu", "relu6"):
                y = fq(tf.nn.relu6(x) if _act_name(layer) == "relu6" else tf.nn.relu(x), *ranges[layer.name])
            else:
                raise SystemExit(f"uint8 graph: layer {layer.name} ({kind}) not supported")
            t[layer.name] = y
        outs = [tf.identity(t[n], name=n) for n in out_names]
        with tf1.Session(graph=graph) as sess:
            c = tf1.lite.TFLiteConverter.from_session(sess, [inp], outs)
            c.inference_type = tf.uint8
            c.quantized_input_stats = {"input": (128.0, 128.0)}
            return c.convert()


# Custom layers the op zoo uses (TF ops inside, so the converter sees HARD_SWISH and the resizes).

def _custom_layers():
    import keras
    import tensorflow as tf

    class HardSwish(keras.layers.Layer):
        """x · relu6(x + 3) / 6, written as MobileNetV3 does; the converter fuses it to HARD_SWISH."""
        def call(self, x):
            return x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0)

        def compute_output_shape(self, s):
            return s

    class Resize(keras.layers.Layer):
        """tf.raw_ops.ResizeBilinear / ResizeNearestNeighbor with explicit align_corners/half_pixel_centers."""
        def __init__(self, size, method, align_corners=False, half_pixel_centers=True, **kw):
            super().__init__(**kw)
            self.size, self.method = tuple(size), method
            self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

        def resize(self, x):
            op = tf.raw_ops.ResizeBilinear if self.method == "bilinear" else tf.raw_ops.ResizeNearestNeighbor
            return op(images=x, size=list(self.size), align_corners=self.align_corners,
                      half_pixel_centers=self.half_pixel_centers)

        def call(self, x):
            return self.resize(x)

        def compute_output_shape(self, s):
            return (s[0], self.size[0], self.size[1], s[3])

    return HardSwish, Resize


# ----------------------------------------------------------------------------------------------
# Describing a model for the manifest
# ----------------------------------------------------------------------------------------------

def describe_tflite(path: str) -> dict:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    ops = collections.Counter(o["op_name"] for o in it._get_ops_details())

    def tensor(d):
        return {"name": d["name"], "shape": [int(s) for s in d["shape"]], "dtype": np.dtype(d["dtype"]).name,
                "quantization": qc.litert_quant(d)}
    # What the default XNNPACK delegate takes (LiteRT's default resolver, one thread).
    it2 = Interpreter(model_path=path, num_threads=1, experimental_op_resolver_type=OpResolverType.AUTO)
    it2.allocate_tensors()
    info = {"inputs": [tensor(d) for d in it.get_input_details()], "outputs": [tensor(d) for d in it.get_output_details()],
            "operators": dict(sorted(ops.items())), "litert_xnnpack": qc.litert_delegation(it2)}
    custom = custom_options(path)
    if custom:
        info["custom_options"] = custom
    return info


def custom_options(path: str) -> dict:
    """Custom operators' options (flexbuffer maps), read with the `tflite` and `flatbuffers` packages."""
    import tflite
    from flatbuffers import flexbuffers
    buf = open(path, "rb").read()
    m = tflite.Model.GetRootAsModel(buf, 0)
    out = {}
    for si in range(m.SubgraphsLength()):
        sg = m.Subgraphs(si)
        for oi in range(sg.OperatorsLength()):
            op = sg.Operators(oi)
            code = m.OperatorCodes(op.OpcodeIndex())
            if code.CustomCode():
                name = code.CustomCode().decode()
                raw = bytes(op.CustomOptionsAsNumpy()) if op.CustomOptionsLength() else b""
                opts = flexbuffers.Loads(raw) if raw else {}
                out[name] = {k: (float(v) if isinstance(v, float) else v) for k, v in sorted(opts.items())}
                out[name]["inputs"] = [sg.Tensors(op.Inputs(i)).Name().decode() for i in range(op.InputsLength())]
                out[name]["outputs"] = [sg.Tensors(op.Outputs(i)).Name().decode() for i in range(op.OutputsLength())]
    return out


def describe_onnx(path: str) -> dict:
    import onnx
    m = onnx.load(path)
    # operators outside the standard domain carry it: com.microsoft.QLinearAdd
    ops = collections.Counter((n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type for n in m.graph.node)
    dt = {1: "float32", 10: "float16", 2: "uint8", 3: "int8", 7: "int64", 6: "int32"}
    init_types = collections.Counter(dt.get(i.data_type, str(i.data_type)) for i in m.graph.initializer)

    def vi(v):
        tt = v.type.tensor_type
        return {"name": v.name, "shape": [d.dim_value if d.HasField("dim_value") else d.dim_param for d in tt.shape.dim],
                "dtype": dt.get(tt.elem_type, str(tt.elem_type))}
    return {"inputs": [vi(v) for v in m.graph.input if v.name not in {i.name for i in m.graph.initializer}],
            "outputs": [vi(v) for v in m.graph.output], "operators": dict(sorted(ops.items())),
            "initializer_types": dict(sorted(init_types.items())),
            "opset": {o.domain or "ai.onnx": o.version for o in m.opset_import},
            "metadata_props": {p.key: (p.value if len(p.value) < 80 else p.value[:60] + f"… ({len(p.value)} chars)") for p in m.metadata_props}}


def record(file: str, how: dict, *, normalization: dict | None = None, group: str) -> None:
    path = os.path.join(qc.OUT, file)
    entry = {"group": group, "bytes": os.path.getsize(path), "sha256": qc.sha256(path), "how": how}
    if normalization:
        entry["input_normalization"] = normalization
    if file.endswith(".tflite"):
        entry.update(describe_tflite(path))
    elif file.endswith(".onnx"):
        entry.update(describe_onnx(path))
    MANIFEST_MODELS[file] = entry
    # reference.py reads the normalisation from the manifest: keep it current as models are made.
    save_manifest(partial=True)
    print(f"  {file}: {entry['bytes']:,} bytes  sha256 {entry['sha256']}", flush=True)


def save_manifest(partial: bool = False) -> None:
    import importlib.metadata as md
    old = qc.load_manifest()
    models = dict(old.get("models", {}))
    models.update(MANIFEST_MODELS)
    versions = {p: md.version(p) for p in ("tensorflow-cpu", "keras", "onnx", "onnxruntime", "onnxconverter-common",
                                            "ai-edge-litert", "numpy", "pillow", "tflite", "flatbuffers")}
    doc = {"generator": "tools/quantized/make_models.py", "seed": SEED, "versions": versions,
           "photos": PHOTOS, "calibration": CALIB_SOURCE, "timings_s": {**old.get("timings_s", {}), **TIMINGS},
           **({"stamp": STAMP} if STAMP else {}), "models": dict(sorted(models.items()))}
    qc.write_atomically(qc.MANIFEST, (json.dumps(doc, indent=1) + "\n").encode())


CALIB_SOURCE: dict = {}
PHOTOS: dict = {}   # where the photos came from: source (bsds500 | samples), calibration, references
STAMP: dict = {}    # stamp() of the inputs, written when a full run ends


def calibration_photos(size: int) -> tuple[np.ndarray, str]:
    """The first N_CALIB train photos (BSDS500 train, else sample frames) at size×size, recorded in the manifest."""
    imgs, desc = qc.images("train", N_CALIB)
    src = f"{desc}, centre square, bilinear to {size}"
    CALIB_SOURCE[str(size)] = src
    PHOTOS["calibration"] = desc
    return np.stack([qc.center_square(img, size) for _, img in imgs]), src


def save_tflite(name: str, data: bytes) -> None:
    qc.write_atomically(os.path.join(qc.OUT, name), data)


# ----------------------------------------------------------------------------------------------
# Groups
# ----------------------------------------------------------------------------------------------

def make_mobilenet() -> None:
    tf, keras = tf_init()
    rng = np.random.default_rng(SEED)
    x_u8, src = calibration_photos(224)
    x = signed(x_u8)
    base = keras.applications.MobileNetV2(input_shape=(224, 224, 3), alpha=1.0, weights=None, classifier_activation=None)
    model = keras.Model(base.inputs, keras.layers.Softmax(name="probabilities")(base.outputs[0]), name="mobilenetv2_1.00_224")
    calibrate_batchnorm(model, x[:N_BN], rng, gamma=(0.8, 1.2), beta=(1.5, 0.3))
    spread_head(model, "predictions", x, rng, spread=4.0, principal=4, live=10)
    base_how = {"source": "keras.applications.MobileNetV2(input_shape=(224,224,3), alpha=1.0, weights=None, classifier_activation=None) + Softmax",
                "weights": f"random (keras seed {SEED}); BatchNorm gamma U(0.8,1.2), beta N(1.5,0.3) (not chaotic, see calibrate_batchnorm), statistics from {N_BN} photos; "
                           "classifier reads the 4 principal components of the photos' features; 10 live classes with logits centred, spread 4, the other 990 weak and 12 lower (see spread_head)",
                "input": "[1,224,224,3] float −1…1 = (byte − 127.5)/127.5 before quantization",
                "calibration": src}
    for mode, name in (("int8", "mobilenet_v2_1.0_224_int8.tflite"), ("int8-uint8io", "mobilenet_v2_1.0_224_int8_uint8io.tflite"),
                       ("dynamic", "mobilenet_v2_1.0_224_dynamic.tflite")):
        t0 = time.time()
        save_tflite(name, convert_keras(model, mode, x))
        TIMINGS[name] = round(time.time() - t0, 1)
        record(name, {**base_how, **converter_settings(mode)}, group="mobilenet",
               normalization=SIGNED_NORM if mode == "dynamic" else None)
    t0 = time.time()
    name = "mobilenet_v2_1.0_224_uint8.tflite"
    save_tflite(name, convert_uint8_fakequant(model, x))
    TIMINGS[name] = round(time.time() - t0, 1)
    record(name, {**base_how, **UINT8_HOW}, group="mobilenet")


UINT8_HOW = {"converter": "tf.compat.v1.lite.TFLiteConverter.from_session (legacy quantized path)",
             "graph": "the Keras model re-emitted as TF1 ops, BatchNorm folded into the convolutions, "
                      "FakeQuantWithMinMaxArgs after every op that changes the scale (ranges: min/max over the photos) "
                      "and on every weight tensor (its min/max)",
             "inference_type": "uint8", "quantized_input_stats": {"input": [128.0, 128.0]},
             "quantization": "all uint8: activations and weights asymmetric per tensor, int32 bias; input scale 1/128, zero point 128; "
                             "softmax/logistic outputs scale 1/256, zero point 0 (as TF Hub's classic *_quant.tflite models)"}


def opzoo_model(keras):
    """Every builtin issue 41 lists, at 64×64: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MUL,
    AVERAGE_POOL_2D, MAX_POOL_2D, MEAN, RESHAPE, SOFTMAX, LOGISTIC, HARD_SWISH, CONCATENATION, PAD,
    RESIZE_BILINEAR (half-pixel and align-corners), RESIZE_NEAREST_NEIGHBOR, TRANSPOSE_CONV."""
    L = keras.layers
    HardSwish, Resize = _custom_layers()
    inp = keras.Input((64, 64, 3), batch_size=1, name="image")
    x = L.Conv2D(16, 3, strides=2, padding="same", use_bias=False, name="stem")(inp)            # 32×32×16
    x = L.BatchNormalization(name="stem_bn")(x)
    x = L.ReLU(6.0, name="stem_relu6")(x)
    # Padding (2,1) before a 4×4 valid depthwise: not what SAME would do ((1,2)), so the converter
    # keeps the PAD instead of folding it into the convolution.
    a = L.ZeroPadding2D(((2, 1), (2, 1)), name="pad")(x)                                          # PAD 35×35
    a = L.DepthwiseConv2D(4, padding="valid", use_bias=False, name="dw")(a)                       # DEPTHWISE_CONV_2D 32×32
    a = L.BatchNormalization(name="dw_bn")(a)
    a = HardSwish(name="hswish")(a)                                                              # HARD_SWISH
    se = L.GlobalAveragePooling2D(keepdims=True, name="se_mean")(a)                               # MEAN
    se = L.Conv2D(8, 1, activation="relu", name="se_reduce")(se)
    se = L.Conv2D(16, 1, name="se_expand")(se)
    se = L.Activation("sigmoid", name="se_sigmoid")(se)                                          # LOGISTIC
    a = L.Multiply(name="se_mul")([a, se])                                                       # MUL
    b = L.Conv2D(16, 1, use_bias=False, name="project")(a)
    b = L.BatchNormalization(name="project_bn")(b)
    x = L.Add(name="residual")([x, b])                                                           # ADD
    p1 = L.MaxPooling2D(2, name="maxpool")(x)                                                    # MAX_POOL_2D 16×16
    p2 = L.AveragePooling2D(2, name="avgpool")(x)                                                # AVERAGE_POOL_2D
    c = L.Concatenate(name="concat_pools")([p1, p2])                                             # CONCATENATION 16×16×32
    d = L.Conv2D(24, 3, strides=2, padding="same", activation="relu", name="down")(c)             # 8×8×24
    u1 = Resize((16, 16), "bilinear", name="up_bilinear")(d)                                      # RESIZE_BILINEAR half-pixel
    u2 = Resize((16, 16), "nearest", name="up_nearest")(d)                                        # RESIZE_NEAREST_NEIGHBOR
    u3 = Resize((16, 16), "bilinear", align_corners=True, half_pixel_centers=False, name="up_bilinear_ac")(d)
    tc = L.Conv2DTranspose(8, 3, strides=2, padding="same", name="up_transpose")(d)               # TRANSPOSE_CONV
    m = L.Concatenate(name="concat_up")([u1, u2, u3, tc])                                         # 16×16×80
    m = L.Conv2D(1, 1, name="mask_logits")(m)
    mask = L.Activation("sigmoid", name="mask")(m)                                               # LOGISTIC [1,16,16,1]
    h = L.AveragePooling2D(4, name="head_pool")(d)                                               # 2×2×24
    h = L.Flatten(name="flatten")(h)                                                             # RESHAPE [1,96]
    h = L.Dense(10, name="logits")(h)                                                            # FULLY_CONNECTED
    probs = L.Softmax(name="probabilities")(h)                                                   # SOFTMAX
    return keras.Model(inp, [probs, mask], name="opzoo")


def make_opzoo() -> None:
    tf, keras = tf_init()
    rng = np.random.default_rng(SEED + 1)
    x_u8, src = calibration_photos(64)
    x = signed(x_u8)
    model = opzoo_model(keras)
    calibrate_batchnorm(model, x[:N_BN], rng)
    spread_head(model, "logits", x, rng, spread=2.0)
    # mask: centre the logit on the photos so the sigmoid is not saturated
    ml = model.get_layer("mask_logits")
    pre = keras.Model(model.inputs, ml.output).predict(x, verbose=0)
    ml.bias.assign(ml.bias.numpy() - np.float32(pre.mean()))
    base_how = {"source": "tools/quantized/make_models.py opzoo_model(): Keras functional, 64×64×3 → probabilities [1,10] (softmax), mask [1,16,16,1] (sigmoid)",
                "weights": f"random (keras seed {SEED}, numpy seed {SEED + 1}); BatchNorm statistics from {N_BN} photos; head spread 2",
                "input": "[1,64,64,3] float −1…1 = (byte − 127.5)/127.5 before quantization", "calibration": src}
    for mode, name in (("float", "opzoo_float.tflite"), ("int8", "opzoo_int8.tflite"),
                       ("int8-uint8io", "opzoo_int8_uint8io.tflite"), ("dynamic", "opzoo_dynamic.tflite")):
        save_tflite(name, convert_keras(model, mode, x))
        record(name, {**base_how, **converter_settings(mode)}, group="opzoo",
               normalization=SIGNED_NORM if mode in ("float", "dynamic") else None)
    name = "opzoo_uint8.tflite"
    save_tflite(name, convert_uint8_fakequant(model, x))
    record(name, {**base_how, **UINT8_HOW}, group="opzoo")


def make_onnx() -> None:
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    src_path = os.path.join(qc.CACHE, "efficientnet_lite0.onnx")
    if not os.path.exists(src_path):
        raise SystemExit(f"{src_path} missing: make it with .venv-tools/bin/python tools/labeling/make_efficientnet_onnx.py")
    m = onnx.load(src_path)
    meta = {p.key: p.value for p in m.metadata_props}
    mean, std = float(meta["normalization_mean"]), float(meta["normalization_std"])
    x_u8, src = calibration_photos(224)
    x = ((x_u8.astype(np.float32) - mean) / std).astype(np.float32)   # NHWC, as the model takes it
    in_name = m.graph.input[0].name
    norm = {"mean": mean, "std": std, "note": "from the source model's metadata_props (kept in the quantized models)"}
    src_sha = qc.sha256(src_path)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.i = 0

        def get_next(self):
            if self.i >= len(x):
                return None
            self.i += 1
            return {in_name: x[self.i - 1:self.i]}

        def rewind(self):
            self.i = 0

    with tempfile.TemporaryDirectory() as tmp:
        pre = os.path.join(tmp, "pre.onnx")
        quant_pre_process(src_path, pre, skip_symbolic_shape=True)   # static shapes: no sympy needed
        variants = [
            ("efficientnet_lite0_qdq_u8.onnx", QuantFormat.QDQ, QuantType.QUInt8),
            ("efficientnet_lite0_qdq_s8.onnx", QuantFormat.QDQ, QuantType.QInt8),
            ("efficientnet_lite0_qop_u8.onnx", QuantFormat.QOperator, QuantType.QUInt8),
        ]
        for name, fmt, act in variants:
            t0 = time.time()
            out = os.path.join(tmp, name)
            quantize_static(pre, out, Reader(), quant_format=fmt, per_channel=True, weight_type=QuantType.QInt8,
                            activation_type=act, calibrate_method=__import__("onnxruntime.quantization", fromlist=["CalibrationMethod"]).CalibrationMethod.MinMax)
            q = onnx.load(out)
            keep_metadata(q, m)
            onnx.save(q, os.path.join(qc.OUT, name))
            TIMINGS[name] = round(time.time() - t0, 1)
            record(name, {"source": f"models/cache/efficientnet_lite0.onnx (sha256 {src_sha})",
                          "preprocess": "onnxruntime.quantization.shape_inference.quant_pre_process(skip_symbolic_shape=True): ORT basic optimisation, ONNX shape inference (the shapes are static)",
                          "converter": "onnxruntime.quantization.quantize_static",
                          "quant_format": fmt.name, "per_channel": True, "weight_type": "QInt8",
                          "activation_type": act.name, "calibrate_method": "MinMax",
                          "calibration": f"{src}, (byte − {mean})/{std} NHWC"},
                   normalization=norm, group="onnx")
    from onnxconverter_common import float16
    name = "efficientnet_lite0_fp16.onnx"
    h = float16.convert_float_to_float16(onnx.load(src_path), keep_io_types=True)
    keep_metadata(h, m)
    onnx.save(h, os.path.join(qc.OUT, name))
    record(name, {"source": f"models/cache/efficientnet_lite0.onnx (sha256 {src_sha})",
                  "converter": "onnxconverter_common.float16.convert_float_to_float16(keep_io_types=True)",
                  "what": "every initializer and activation float16; Cast float32→float16 after the input and float16→float32 before the output"},
           normalization=norm, group="onnx")
    name = "efficientnet_lite0_fp16w.onnx"
    h = fp16_weights_behind_cast(onnx.load(src_path))
    keep_metadata(h, m)
    onnx.save(h, os.path.join(qc.OUT, name))
    record(name, {"source": f"models/cache/efficientnet_lite0.onnx (sha256 {src_sha})",
                  "converter": "tools/quantized/make_models.py fp16_weights_behind_cast (onnx.helper): onnxconverter-common 1.16 "
                               "has no force_fp16_initializers any more, so the weights-only form is written directly",
                  "what": "weights only: every float32 initializer of ≥ 16 values stored as float16, each behind a Cast(to=FLOAT) "
                          "with the original name; every operator computes in float32"},
           normalization=norm, group="onnx")


def fp16_weights_behind_cast(model, min_size: int = 16):
    """float32 initializers of ≥ min_size values → float16 initializer NAME_fp16 + Cast(to=FLOAT) → NAME,
    the Casts first in the graph (a topological order)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    g = model.graph
    casts, keep = [], []
    for init in g.initializer:
        a = numpy_helper.to_array(init)
        if init.data_type == TensorProto.FLOAT and a.size >= min_size:
            keep.append(numpy_helper.from_array(a.astype(np.float16), init.name + "_fp16"))
            casts.append(helper.make_node("Cast", [init.name + "_fp16"], [init.name], to=TensorProto.FLOAT,
                                          name=init.name + "_cast"))
        else:
            keep.append(init)
    del g.initializer[:]
    g.initializer.extend(keep)
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    return model


def keep_metadata(q, src) -> None:
    """The source's metadata_props (labels, normalisation) on a converted model."""
    have = {p.key for p in q.metadata_props}
    for p in src.metadata_props:
        if p.key not in have:
            q.metadata_props.add(key=p.key, value=p.value)


def make_task() -> None:
    """face_landmarker.task as MediaPipe Tasks names its members (face_detector.tflite,
    face_landmarks_detector.tflite), stored uncompressed: MediaPipe's ExtractFilesfromZipFile
    (mediapipe/tasks/cc/metadata/utils/zip_utils.cc) refuses any member that is compressed
    ("Expected uncompressed zip archive.") and points into the zip at each member's bytes."""
    parts = [("face_detection_short_range.tflite", "face_detector.tflite"),
             ("face_landmark.tflite", "face_landmarks_detector.tflite")]
    for src, _ in parts:
        if not os.path.exists(os.path.join(qc.CACHE, src)):
            raise SystemExit(f"models/cache/{src} missing: the project's model set-up fetches it (tools/models/fetch_mediapipe_models.sh)")
    class AlignedZip(zipfile.ZipFile):
        """As MediaPipe's model_maker writes bundles (model_asset_bundle_utils.AlignZipFile,
        alignment 4): zero bytes before each stored member's local header so that its data
        starts at a multiple of 4 — always 1 to 4 of them — so members are not back to back and a
        reader must follow the central directory's offsets."""
        def _writecheck(self, zinfo):
            if zinfo.compress_type == zipfile.ZIP_STORED:
                pad = 4 - (self.fp.tell() + len(zinfo.FileHeader())) % 4
                self.fp.write(b"\0" * pad)
                zinfo.header_offset = self.fp.tell()
            super()._writecheck(zinfo)

    for name, method in (("face_landmarker.task", zipfile.ZIP_STORED), ("face_landmarker_deflated.task", zipfile.ZIP_DEFLATED)):
        buf = io.BytesIO()
        with (AlignedZip if method == zipfile.ZIP_STORED else zipfile.ZipFile)(buf, "w", compression=method) as z:
            for src, member in parts:
                info = zipfile.ZipInfo(member, date_time=(2025, 1, 1, 0, 0, 0))   # fixed time: the same bytes each run
                info.compress_type = method
                info.external_attr = 0o644 << 16
                z.writestr(info, open(os.path.join(qc.CACHE, src), "rb").read())
        qc.write_atomically(os.path.join(qc.OUT, name), buf.getvalue())
        path = os.path.join(qc.OUT, name)
        with zipfile.ZipFile(path) as z:
            members = [{"name": i.filename, "bytes": i.file_size, "compress": "stored" if i.compress_type == 0 else "deflated",
                        "data_offset": i.header_offset + 30 + len(i.filename.encode()) + len(i.extra),
                        "sha256": __import__("hashlib").sha256(z.read(i.filename)).hexdigest()} for i in z.infolist()]
        how = {"what": "MediaPipe Tasks-style bundle: a zip of .tflite members",
               "members_from": {m: f"models/cache/{s}" for s, m in parts},
               "names": "as in MediaPipe's face_landmarker.task (which also holds face_blendshapes.tflite and "
                        "geometry_pipeline_metadata_landmarks.binarypb; we have neither in the mediapipe wheel)",
               "zip": "ZIP_STORED, fixed timestamps, each member's data 4-byte aligned by 1–4 zero bytes before its local "
                      "header, as MediaPipe's model_maker (model_asset_bundle_utils.AlignZipFile) writes bundles"
                      if method == zipfile.ZIP_STORED else
                      "ZIP_DEFLATED: a negative case — MediaPipe refuses compressed members ('Expected uncompressed zip archive.')",
               "members": members}
        MANIFEST_MODELS[name] = {"group": "task", "bytes": os.path.getsize(path), "sha256": qc.sha256(path), "how": how}
        save_manifest(partial=True)
        print(f"  {name}: {os.path.getsize(path):,} bytes  sha256 {qc.sha256(path)}", flush=True)


# SSD --------------------------------------------------------------------------------------------

SSD_SIZE = 128
SSD_CLASSES = 3                 # + background (class 0 of the scores, skipped by the op)
SSD_MAPS = [(8, 0.25), (4, 0.55)]   # feature map size, anchor scale
SSD_RATIOS = [1.0, 2.0, 0.5]
SSD_SCALES = {"y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}


def ssd_anchors() -> np.ndarray:
    """[N,4] anchors as (y_center, x_center, height, width), normalised to 0…1, in the order the
    heads' outputs are reshaped: map by map, row, column, ratio."""
    out = []
    for size, scale in SSD_MAPS:
        for i in range(size):
            for j in range(size):
                for r in SSD_RATIOS:
                    out.append([(i + 0.5) / size, (j + 0.5) / size, scale / np.sqrt(r), scale * np.sqrt(r)])
    return np.asarray(out, np.float32)


def ssd_model(keras):
    L = keras.layers
    A = len(SSD_RATIOS)
    inp = keras.Input((SSD_SIZE, SSD_SIZE, 3), batch_size=1, name="image")
    x = inp
    feats = []
    for i, ch in enumerate([16, 24, 32, 48, 64]):                      # 64, 32, 16, 8, 4
        x = L.Conv2D(ch, 3, strides=2, padding="same", use_bias=False, name=f"b{i}_conv")(x)
        x = L.BatchNormalization(name=f"b{i}_bn")(x)
        x = L.ReLU(6.0, name=f"b{i}_relu6")(x)
        if x.shape[1] in [s for s, _ in SSD_MAPS]:
            feats.append(x)
    boxes, scores = [], []
    for k, f in enumerate(feats):
        n = f.shape[1] * f.shape[2] * A
        b = L.Conv2D(A * 4, 3, padding="same", name=f"box_head{k}")(f)
        boxes.append(L.Reshape((n, 4), name=f"box_reshape{k}")(b))
        s = L.Conv2D(A * (SSD_CLASSES + 1), 3, padding="same", name=f"class_head{k}")(f)
        scores.append(L.Reshape((n, SSD_CLASSES + 1), name=f"class_reshape{k}")(s))
    box = L.Concatenate(axis=1, name="box_encodings")(boxes)
    logits = L.Concatenate(axis=1, name="class_logits")(scores)
    return keras.Model(inp, [box, logits], name="tiny_ssd")


def make_ssd() -> None:
    tf, keras = tf_init()
    rng = np.random.default_rng(SEED + 2)
    x_u8, src = calibration_photos(SSD_SIZE)
    x = signed(x_u8)
    model = ssd_model(keras)
    calibrate_batchnorm(model, x[:N_BN], rng)
    # Box encodings ≈ N(0, 1) over the photos; class logits: spread 2, biased so that about 1 % of
    # (anchor, class) pairs pass the score threshold below.
    box_raw, logit_raw = model.predict(x, verbose=0)
    for k in range(len(SSD_MAPS)):
        bh = model.get_layer(f"box_head{k}")
        bh.kernel.assign(bh.kernel.numpy() / np.float32(box_raw.std() + 1e-6))
        bh.bias.assign(np.zeros_like(bh.bias.numpy()))
        ch = model.get_layer(f"class_head{k}")
        ch.kernel.assign(ch.kernel.numpy() * np.float32(2.0 / (logit_raw.std() + 1e-6)))
    box_raw, logit_raw = model.predict(x, verbose=0)
    threshold = 0.5
    q99 = np.quantile(logit_raw[..., 1:], 0.99)
    for k in range(len(SSD_MAPS)):
        ch = model.get_layer(f"class_head{k}")
        b = ch.bias.numpy() - np.float32(q99)
        ch.bias.assign(b.astype(np.float32))
    anchors = ssd_anchors()
    assert anchors.shape[0] == box_raw.shape[1], (anchors.shape, box_raw.shape)

    def implements(max_det: int, regular: bool) -> str:
        # The signature TF's object detection API writes (export_tflite_graph_lib_tf2.py,
        # SSDModule.postprocess_implements_signature); the converter's MLIR pass
        # (prepare_composite_functions → ConvertSSDPostProcessFunc) turns the function into the
        # custom op TFLite_Detection_PostProcess with these attributes as flexbuffer options.
        return " ".join([
            'name: "TFLite_Detection_PostProcess"',
            f'attr {{ key: "max_detections" value {{ i: {max_det} }} }}',
            'attr { key: "max_classes_per_detection" value { i: 1 } }',
            f'attr {{ key: "use_regular_nms" value {{ b: {str(regular).lower()} }} }}',
            f'attr {{ key: "nms_score_threshold" value {{ f: {threshold:f} }} }}',
            'attr { key: "nms_iou_threshold" value { f: 0.600000 } }',
            *[f'attr {{ key: "{k}" value {{ f: {v:f} }} }}' for k, v in SSD_SCALES.items()],
            f'attr {{ key: "num_classes" value {{ i: {SSD_CLASSES} }} }}'])

    def export(regular: bool, directory: str) -> None:
        """The OD API's SSDModule.inference_fn, with Keras 3's ExportArchive in place of tf.Module
        (a Keras 3 model saved through tf.saved_model.save keeps its variables as resource
        variables in the TFLite model — VAR_HANDLE/READ_VARIABLE — which the calibrator cannot run)."""
        @tf.function(experimental_implements=implements(10, regular))
        def dummy_post_processing(box_encodings, class_predictions, anchors):
            # A body TF never runs in TFLite: the converter replaces the whole function.
            boxes = tf.constant(0.0, dtype=tf.float32, name="boxes")
            scores = tf.constant(0.0, dtype=tf.float32, name="scores")
            classes = tf.constant(0.0, dtype=tf.float32, name="classes")
            num_detections = tf.constant(0.0, dtype=tf.float32, name="num_detections")
            return boxes, scores, classes, num_detections

        def inference_fn(image):
            box, logits = model(image, training=False)
            with tf.name_scope("raw_outputs"):
                box_encodings = tf.identity(box, name="box_encodings")
                class_predictions = tf.identity(tf.sigmoid(logits), name="class_predictions")
            a = tf.identity(tf.constant(anchors), name="anchors")
            # As the OD API: the function's results come out reversed, so reverse them back.
            return dummy_post_processing(box_encodings, class_predictions, a)[::-1]

        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint("serving_default", inference_fn,
                             input_signature=[tf.TensorSpec([1, SSD_SIZE, SSD_SIZE, 3], tf.float32, name="input")])
        with contextlib.redirect_stdout(io.StringIO()):
            archive.write_out(directory)

    base_how = {
        "source": f"tools/quantized/make_models.py ssd_model(): Keras, {SSD_SIZE}×{SSD_SIZE}×3 (−1…1), 5 stride-2 conv blocks, "
                  f"box/class heads on the {SSD_MAPS[0][0]}×{SSD_MAPS[0][0]} and {SSD_MAPS[1][0]}×{SSD_MAPS[1][0]} maps, "
                  f"{len(SSD_RATIOS)} anchors per cell (ratios {SSD_RATIOS}): {anchors.shape[0]} anchors, {SSD_CLASSES} classes + background; "
                  "class scores = sigmoid(logits) (the OD API's score conversion) before the op",
        "weights": f"random (keras seed {SEED}, numpy seed {SEED + 2}); BatchNorm statistics from {N_BN} photos; box encodings ≈ N(0,1) on "
                   f"the photos; class logits spread 2, biased so that ~1 % of (anchor, class) scores exceed {threshold}",
        "anchors": "constant [N,4] (y_center, x_center, height, width) normalised, map by map, row, column, ratio; input 2 of the op",
        "box_coder_scales": SSD_SCALES, "calibration": src,
    }
    composite = ("tf.function(experimental_implements='name: \"TFLite_Detection_PostProcess\" attr {…}') around a dummy body, "
                 "called with (box_encodings [1,N,4], class_predictions [1,N,C+1], anchors [N,4]), results reversed — as "
                 "research/object_detection/export_tflite_graph_lib_tf2.py; exported with keras.export.ExportArchive, then "
                 "TFLiteConverter.from_saved_model with allow_custom_ops=True; the converter's prepare-composite-functions pass "
                 "(ConvertSSDPostProcessFunc) replaces the function by the custom op, its attributes as flexbuffer options")
    variants = [("ssd_fast_nms.tflite", False, None), ("ssd_regular_nms.tflite", True, None),
                ("ssd_fast_nms_int8.tflite", False, "int8")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, regular, quant in variants:
            sm = os.path.join(tmp, name + ".savedmodel")
            export(regular, sm)
            c = tf.lite.TFLiteConverter.from_saved_model(sm)
            c.allow_custom_ops = True
            settings = {"postprocess": composite, "use_regular_nms": regular, "max_detections": 10,
                        "nms_iou_threshold": 0.6, "nms_score_threshold": threshold}
            if quant:
                c.optimizations = [tf.lite.Optimize.DEFAULT]
                c.representative_dataset = representative(x)
                c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8, tf.lite.OpsSet.TFLITE_BUILTINS]
                c.inference_input_type = tf.int8
                settings["quantization"] = ("full integer, int8 input, representative photos; supported_ops TFLITE_BUILTINS_INT8 + "
                                            "TFLITE_BUILTINS: the custom op stays float, a DEQUANTIZE before its box and score inputs "
                                            "(the form today's converters write, e.g. Model Maker's EfficientDet-Lite)")
            save_tflite(name, c.convert())
            record(name, {**base_how, **settings}, group="ssd", normalization=None if quant else SIGNED_NORM)
    # The classic quantized SSD (TF1 OD API, e.g. ssd_mobilenet_v1_quantized): all uint8, and the
    # op takes uint8 box encodings, scores and anchors (LiteRT's kernel dequantizes them itself;
    # uint8 boxes need uint8 anchors). No converter of today writes that: the uint8 network comes
    # from the fake-quant graph, and the op is appended to the flatbuffer.
    name = "ssd_regular_nms_uint8.tflite"
    scored = keras.Model(model.inputs, [model.outputs[0], keras.layers.Activation("sigmoid", name="class_predictions")(model.outputs[1])])
    body = convert_uint8_fakequant(scored, x)
    options = {"max_detections": 10, "max_classes_per_detection": 1, "detections_per_class": 4, "use_regular_nms": 1,
               "nms_score_threshold": threshold, "nms_iou_threshold": 0.6, "num_classes": SSD_CLASSES, **SSD_SCALES}
    save_tflite(name, append_postprocess(body, anchors, options))
    record(name, {**base_how, **UINT8_HOW,
                  "postprocess": "appended to the uint8 model's flatbuffer (TF's schema object API: "
                                 "tensorflow.lite.python.util._convert_model_from_bytearray_to_object): operator code CUSTOM "
                                 "'TFLite_Detection_PostProcess', inputs (box_encodings uint8, class_predictions uint8, anchors uint8 "
                                 "constant, scale max/255, zero point 0), four float32 outputs (boxes [1,10,4], classes [1,10], "
                                 "scores [1,10], num_detections [1]) named as TF1's export names them; options a flexbuffer map "
                                 "(flatbuffers.flexbuffers.Dumps) as TF1's export_tflite_ssd_graph writes them, with detections_per_class",
                  "options": options}, group="ssd")


def append_postprocess(model_bytes: bytes, anchors: np.ndarray, options: dict) -> bytes:
    """A TFLite model whose outputs are (box_encodings [1,N,4], class_predictions [1,N,C+1]), with
    TFLite_Detection_PostProcess appended: anchors a uint8 constant, the op's four float32 outputs
    the model's outputs."""
    from flatbuffers import flexbuffers
    from tensorflow.lite.python import schema_py_generated as sch
    from tensorflow.lite.python import util
    m = util._convert_model_from_bytearray_to_object(bytearray(model_bytes))
    sg = m.subgraphs[0]
    names = {(t.name.decode() if isinstance(t.name, bytes) else t.name): i for i, t in enumerate(sg.tensors)}
    box, scores = names["box_encodings"], names["class_predictions"]

    def add_tensor(name, shape, ttype, data=None, scale=None, zero_point=None):
        buf = sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(data, np.uint8).tolist()
        m.buffers.append(buf)
        t = sch.TensorT()
        t.name, t.shape, t.type, t.buffer = name, list(shape), ttype, len(m.buffers) - 1
        if scale is not None:
            q = sch.QuantizationParametersT()
            q.scale, q.zeroPoint = [float(scale)], [int(zero_point)]
            t.quantization = q
        sg.tensors.append(t)
        return len(sg.tensors) - 1

    scale = float(anchors.max()) / 255.0
    q_anchors = np.clip(np.floor(anchors / scale + 0.5), 0, 255).astype(np.uint8)
    a = add_tensor("anchors", anchors.shape, sch.TensorType.UINT8, q_anchors.tobytes(), scale, 0)
    k = options["max_detections"]
    outs = [add_tensor("TFLite_Detection_PostProcess", [1, k, 4], sch.TensorType.FLOAT32),
            add_tensor("TFLite_Detection_PostProcess:1", [1, k], sch.TensorType.FLOAT32),
            add_tensor("TFLite_Detection_PostProcess:2", [1, k], sch.TensorType.FLOAT32),
            add_tensor("TFLite_Detection_PostProcess:3", [1], sch.TensorType.FLOAT32)]
    code = sch.OperatorCodeT()
    code.builtinCode, code.deprecatedBuiltinCode = sch.BuiltinOperator.CUSTOM, sch.BuiltinOperator.CUSTOM
    code.customCode, code.version = "TFLite_Detection_PostProcess", 1
    m.operatorCodes.append(code)
    op = sch.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = len(m.operatorCodes) - 1, [box, scores, a], outs
    op.customOptions = list(flexbuffers.Dumps(options))
    op.customOptionsFormat = sch.CustomOptionsFormat.FLEXBUFFERS
    sg.operators.append(op)
    sg.outputs = outs
    m.signatureDefs = []
    return bytes(util._convert_model_from_object_to_bytearray(m))


# ----------------------------------------------------------------------------------------------
# Reference outputs
# ----------------------------------------------------------------------------------------------

def make_references(files: list[str]) -> None:
    """reference/MODEL/PHOTO/: input.rgb (the model's size, centre square) and reference.py's outputs,
    for the first REF_PHOTOS val photos (BSDS500 val, else frames of the sample clip)."""
    import shutil
    val, desc = qc.images("val", REF_PHOTOS)
    PHOTOS["references"] = desc
    PHOTOS["reference_inputs"] = [stem for stem, _ in val]
    for file in files:
        path = os.path.join(qc.OUT, file)
        targets = [(file, path, None)]
        if file.endswith(".task"):
            if "deflated" in file:
                continue
            with zipfile.ZipFile(path) as z:
                targets = [(f"{file}#{m[:-7]}", path, m) for m in z.namelist() if m.endswith(".tflite")]
        for label, p, member in targets:
            model_dir = os.path.join(qc.OUT, "reference", qc.safe_name(label))
            # inputs of an earlier run that this one does not have (other photos): gone
            for old in (os.listdir(model_dir) if os.path.isdir(model_dir) else []):
                if old not in {stem for stem, _ in val}:
                    shutil.rmtree(os.path.join(model_dir, old))
            with tempfile.TemporaryDirectory() as tmp:
                mp = ref.extract_part(p, member, tmp) if member else p
                runner = ref.Runner(mp, 1, False)
                h, w, _ = ref.image_hw(runner.inputs()[0])
                for stem, img in val:
                    out_dir = os.path.join(model_dir, stem)
                    rgb = qc.center_square(img, h).tobytes()
                    qc.write_atomically(os.path.join(out_dir, "input.rgb"), rgb)
                    rep = ref.reference(mp, rgb, out_dir)
                    bad = [o["name"] for o in rep["outputs"] if o.get("valid_non_finite", o["non_finite"])]
                    if bad:
                        raise SystemExit(f"{label}: non-finite outputs {bad} on {stem}")
                    summary = ", ".join(f"{o['name']}{o['shape']} " + (("(no rows)" if not o["valid_rows"] else
                                        f"{o['valid_min']:.3g}…{o['valid_max']:.3g} (first {o['valid_rows']})")
                                        if "valid_rows" in o else f"{o['min']:.3g}…{o['max']:.3g}") for o in rep["outputs"])
                    print(f"  reference {label} {stem}: {summary}")


# ----------------------------------------------------------------------------------------------
# Up to date? A stamp of everything the output depends on
# ----------------------------------------------------------------------------------------------

STAMP_FILES = ("make_models.py", "qcommon.py", "reference.py", "requirements.txt")
SOURCE_MODELS = ("efficientnet_lite0.onnx", "face_detection_short_range.tflite", "face_landmark.tflite")


def stamp() -> dict:
    """What the models and references are made from: this generator's code and pins, the photos
    (source and bytes) and the source models in models/cache. Equal stamps, equal output (the run
    is deterministic). Cheap: hashes files, decodes nothing (~0.1 s)."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = {f"tools/quantized/{f}": qc.sha256(os.path.join(here, f)) for f in STAMP_FILES}
    for m in SOURCE_MODELS:
        p = os.path.join(qc.CACHE, m)
        parts[f"models/cache/{m}"] = qc.sha256(p) if os.path.exists(p) else None
    parts["photos"] = qc.photo_fingerprint({"train": N_CALIB, "val": REF_PHOTOS})
    parts["reference_photos"] = REF_PHOTOS
    h = __import__("hashlib").sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return {"sha256": h, "of": parts}


def up_to_date(current: dict) -> str | None:
    """Why the folder must be remade, or None when the manifest's stamp is current and every model
    and reference it lists is there."""
    if not os.path.exists(qc.MANIFEST):
        return "no manifest"
    m = qc.load_manifest()
    if not m.get("stamp"):
        return "the manifest has no stamp (an older make_models.py, or an unfinished or partial run)"
    if m["stamp"].get("sha256") != current["sha256"]:
        old = m["stamp"].get("of", {})
        return "changed: " + ", ".join(k for k in current["of"] if old.get(k) != current["of"][k])
    for f, e in m.get("models", {}).items():
        p = os.path.join(qc.OUT, f)
        if not os.path.exists(p) or os.path.getsize(p) != e["bytes"]:
            return f"{f} missing or not the size the manifest says"
    stems = (m.get("photos") or {}).get("reference_inputs", [])
    ref_dir = os.path.join(qc.OUT, "reference")
    for label in (os.listdir(ref_dir) if os.path.isdir(ref_dir) else [None]):
        if label is None or any(not os.path.exists(os.path.join(ref_dir, label, s, "reference.json")) for s in stems):
            return "references incomplete"
    return None


GROUPS = {"mobilenet": make_mobilenet, "opzoo": make_opzoo, "onnx": make_onnx, "task": make_task, "ssd": make_ssd}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=sorted(GROUPS), help="make only these groups")
    ap.add_argument("--no-references", action="store_true")
    ap.add_argument("--force", action="store_true", help="remake everything even when the manifest's stamp is current")
    a = ap.parse_args()
    t_start = time.time()
    current = stamp()
    full = not a.only and not a.no_references
    if full and not a.force:
        why = up_to_date(current)
        if why is None:
            print(f"{os.path.relpath(qc.OUT, qc.REPO)}: up to date (stamp {current['sha256'][:12]}, "
                  f"photos: {current['of']['photos']['source']}); --force remakes it")
            return
        print(f"making {os.path.relpath(qc.OUT, qc.REPO)} ({why})", flush=True)
    os.makedirs(qc.OUT, exist_ok=True)
    old_stamp = qc.load_manifest().get("stamp")
    # A partial run keeps a stamp that is still current (same inputs, same bytes); anything else
    # leaves none until a full run ends, so that an interrupted run is never taken as done.
    STAMP.update(old_stamp if old_stamp and old_stamp.get("sha256") == current["sha256"] and not full else {})
    PHOTOS.update({k: v for k, v in qc.load_manifest().get("photos", {}).items() if not full})
    PHOTOS["source"] = current["of"]["photos"]["source"]
    save_manifest()
    groups = a.only or list(GROUPS)
    for g in groups:
        t0 = time.time()
        print(f"{g}:", flush=True)
        GROUPS[g]()
        TIMINGS[f"group {g}"] = round(time.time() - t0, 1)
        save_manifest()
    made = [f for f, e in MANIFEST_MODELS.items() if e["group"] in groups]
    if not a.no_references:
        t0 = time.time()
        make_references(made)
        TIMINGS["references"] = round(time.time() - t0, 1)
    if full:
        TIMINGS["full run"] = round(time.time() - t_start, 1)
        STAMP.update(current)
    save_manifest()
    print(f"manifest: {os.path.relpath(qc.MANIFEST, qc.REPO)}")
    for f in made:
        e = MANIFEST_MODELS[f]
        print(f"{e['sha256']}  {e['bytes']:>10,}  {f}")


if __name__ == "__main__":
    main()
