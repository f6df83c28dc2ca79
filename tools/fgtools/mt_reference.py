#!/usr/bin/env python3
"""Independent numpy reference executor for MetalTensor plist models.

Written only from the format description ../shared/specs/metaltensor-format.md ("the spec";
section numbers below refer to it), not from FrameGraph's Swift importer, so that the two can be
compared.

  python tools/metaltensor/mt_reference.py MODEL.plist --input-f32 IN.f32 --output-dir D \
      [--all-layers] [--precision fp32|fp16] [--weights-bin X.bin --map X.json]
  python tools/metaltensor/mt_reference.py --self-check

IN.f32 is raw little-endian float32 in HWC order with the `input` node's shape. For every node of
type `output` the script writes D/<node>.f32 (raw float32, HWC); with --all-layers it writes every
node's output. D/shapes.json maps each executed node to [h, w, c].

--precision fp16 emulates MetalTensor's default float16 storage (§4): compute in float32, round every
node output (and the intermediate tensors inside inverted_residual), every weight and bias and every
secondary image to float16.

As a module: `load_model(plist_path, json_path=None, bin_path=None)` and
`run(model, input_hwc, precision="fp32", all_layers=False) -> {node: HWC float32 array}`.

Needs numpy, plus Pillow only for models with an `arithmetic` `secondary_image` (Landmarks).
"""
import argparse
import json
import math
import os
import plistlib
import re
import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided


class MTError(Exception):
    """A malformed model or input; the message names the file, node and key."""


LAYER_TYPES = ("input", "output", "convolution", "dense", "softmax", "pooling_average", "pooling_max",
               "reshape", "concatenate", "inverted_residual", "arithmetic", "neuron", "trans_conv")
NEURONS = ("none", "relu", "relun", "linear", "sigmod", "power")
WEIGHTED = ("convolution", "trans_conv", "dense", "inverted_residual")


# ----------------------------------------------------------------------------------------------
# §2.1 lexical rules

def strip_spaces(v):
    """Delete every U+0020 from every string value, recursively (keys unchanged)."""
    if isinstance(v, str):
        return v.replace(" ", "")
    if isinstance(v, list):
        return [strip_spaces(x) for x in v]
    if isinstance(v, dict):
        return {k: strip_spaces(x) for k, x in v.items()}
    return v


# NSString intValue/floatValue: skip leading whitespace, take the longest numeric prefix, 0 if none.
_LEADING_WS = " \t\n\r\f\v"
_INT_PREFIX = re.compile(r"[+-]?[0-9]+")
_FLOAT_PREFIX = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def ns_int(v):
    """NSString.intValue: "3,3" -> 3, "x" -> 0, "2.9" -> 2; saturates at the int32 range."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    m = _INT_PREFIX.match(str(v).lstrip(_LEADING_WS))
    if not m:
        return 0
    return max(-2 ** 31, min(2 ** 31 - 1, int(m.group())))


def ns_float(v):
    """NSString.floatValue: longest decimal prefix (sign, digits, '.', exponent), 0 if none."""
    if isinstance(v, (bool, int, float)):
        return float(v)
    m = _FLOAT_PREFIX.match(str(v).lstrip(_LEADING_WS))
    return float(m.group()) if m else 0.0


def ns_bool(v):
    """plist <true/>/<false/>, numbers, or NSString.boolValue: after leading whitespace, an optional
    sign and leading zeros, the first character is one of Y y T t 1-9. Missing (None) is false."""
    if v is None:
        return False
    if isinstance(v, (bool, int, float)):
        return bool(v)
    s = str(v).lstrip(_LEADING_WS)
    if s[:1] in "+-":
        s = s[1:]
    s = s.lstrip("0")
    return s[:1] in tuple("YyTt123456789") and s[:1] != ""


def ns_list(v, sep):
    """Split on sep and drop empty components (§2.1.2)."""
    return [p for p in str(v).split(sep) if p != ""]


# ----------------------------------------------------------------------------------------------
# Model description

class Node:
    def __init__(self, name, d):
        self.name = name
        self.d = d
        self.type = None
        self.inputs = []        # declared input shapes, one per slot
        self.targets = []
        self.indices = None
        self.p = {}             # parsed parameters
        self.w = {}             # float32 weights
        self.nslots = 1
        self.slots = {}         # slot -> source node name, or "<secondary>"
        self.shape = None       # computed output shape (h, w, c)


class Model:
    def __init__(self):
        self.path = None
        self.json_path = None
        self.bin_path = None
        self.nodes = {}
        self.input = None
        self.outputs = []
        self.order = []         # execution (topological) order of the reachable nodes
        self._cache = {}        # precision -> rounded weights


class _Ctx:
    """Builds error messages that name the file, node and key."""

    def __init__(self, path, node=None):
        self.path, self.node = path, node

    def err(self, msg, key=None):
        where = self.path
        if self.node is not None:
            where += f": node '{self.node}'"
        if key is not None:
            where += f": key '{key}'"
        return MTError(f"{where}: {msg}")


def _get_str(ctx, d, key, default=None, required=False):
    v = d.get(key)
    if v is None:
        if required:
            raise ctx.err("missing required key", key)
        return default
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float)):
        return repr(v)
    if not isinstance(v, str):
        raise ctx.err(f"expected a string, found {type(v).__name__}", key)
    return v


def _shape(ctx, s, key):
    parts = ns_list(s, ",")
    if len(parts) != 3:
        raise ctx.err(f"shape '{s}' must have 3 components (row, column, depth)", key)
    shp = tuple(ns_int(p) for p in parts)
    if min(shp) <= 0:
        raise ctx.err(f"shape '{s}' has a non-positive component", key)
    return shp


def _kernel(ctx, s, sep, key="kernel"):
    parts = ns_list(s, sep)
    if not parts or len(parts) > 2:
        raise ctx.err(f"'{s}' must be \"k\" or \"kH{sep}kW\"", key)
    ks = [ns_int(p) for p in parts]
    kh, kw = (ks[0], ks[0]) if len(ks) == 1 else (ks[0], ks[1])
    if kh <= 0 or kw <= 0:
        raise ctx.err(f"'{s}' gives a non-positive kernel size", key)
    return kh, kw


def _offset(ctx, s, n, key="offset"):
    parts = ns_list(s, ",")
    if len(parts) < 2 or len(parts) > n:
        raise ctx.err(f"'{s}' must have {'2' if n == 2 else '2 or 3'} components (ox,oy{',oz' if n == 3 else ''})",
                      key)
    vals = [ns_int(p) for p in parts]
    if n == 3 and len(vals) == 3 and vals[2] != 0:
        raise ctx.err(f"a non-zero slice offset oz={vals[2]} is not supported", key)
    return vals[0], vals[1]


def _neuron(ctx, s, key, max_params=3):
    parts = ns_list(s, ",")
    if not parts:
        raise ctx.err("empty activation", key)
    name = parts[0]
    if name not in NEURONS:
        raise ctx.err(f"unknown activation '{name}' (expected one of {', '.join(NEURONS)})", key)
    if len(parts) - 1 > 3:
        raise ctx.err(f"'{s}': at most 3 parameters", key)
    vals = [ns_float(p) for p in parts[1:]] + [0.0, 0.0, 0.0]
    a, b, c = vals[:3]
    if max_params == 2:
        c = 0.0  # fused activations receive only (a, b) (§5.2)
    return (name, a, b, c)


def _stride(ctx, d, default):
    s = ns_int(_get_str(ctx, d, "stride", str(default)))
    if s <= 0:
        raise ctx.err(f"stride must be positive, got {s}", "stride")
    return s


def make_divisible(v):
    """§6.4: max(8, roundf(v/8)*8), plus 8 if that is below 0.9 v (roundf: halves away from 0)."""
    r = int(math.floor(v / 8.0 + 0.5)) * 8
    m = max(8, r)
    if m < 0.9 * v:
        m += 8
    return m


def conv_out_len(n, k, s, padding):
    if padding == "same":
        return (n + s - 1) // s
    if padding == "valid":
        return -(-(n - k + 1) // s)
    return (n + k - 1 + s - 1) // s  # full


def conv_default_offset(k, s, padding):
    if padding == "same":
        return s >> 1
    if padding == "valid":
        return (k >> 1) if k > s else (s >> 1)
    return (s >> 1) - (k >> 1)


def tconv_out_len(n, k, s, padding):
    if padding == "same":
        return n * s
    if padding == "valid":
        return n * s + max(k - s, 0)
    return n * s - (s + k - 2)


def tconv_default_offset(k, s, padding):
    if padding == "same":
        return -(s >> 1)
    if padding == "valid":
        return -(k >> 1) if k > s else -(s >> 1)
    return (k >> 1) - (s >> 1)


def pool_default_offset(k, s):
    return s - (k + 1) // 2


# ----------------------------------------------------------------------------------------------
# Loading

def _parse_node(path, name, d):
    ctx = _Ctx(path, name)
    n = Node(name, d)
    t = d.get("type")
    if t is None:
        t = "convolution"
    elif not isinstance(t, str) or t not in LAYER_TYPES:
        raise ctx.err(f"unknown layer type {t!r} (expected one of {', '.join(LAYER_TYPES)}; "
                      "a missing key means convolution)", "type")
    n.type = t
    inputs = _get_str(ctx, d, "inputs", required=True)
    n.inputs = [_shape(ctx, s, "inputs") for s in ns_list(inputs, ";")]
    if not n.inputs:
        raise ctx.err("no input shape declared", "inputs")
    if t != "output":
        tg = _get_str(ctx, d, "targets", "")
        n.targets = ns_list(tg, ",")
        ix = _get_str(ctx, d, "indices")
        if ix is not None:
            n.indices = [ns_int(p) for p in ns_list(ix, ",")]
            if len(n.indices) != len(n.targets):
                raise ctx.err(f"{len(n.indices)} indices for {len(n.targets)} targets", "indices")
            if any(i < 0 for i in n.indices):
                raise ctx.err("negative slot index", "indices")
    p = n.p
    if t in ("convolution", "trans_conv"):
        p["kernel"] = _kernel(ctx, _get_str(ctx, d, "kernel", required=True), ",")
        p["filters"] = ns_int(_get_str(ctx, d, "filters", required=True))
        if p["filters"] <= 0:
            raise ctx.err(f"filters must be positive, got {p['filters']}", "filters")
        p["stride"] = _stride(ctx, d, 1)
        p["activation"] = _neuron(ctx, _get_str(ctx, d, "activation", "none"), "activation", 2)
        p["padding"] = _get_str(ctx, d, "padding", "same")
        if p["padding"] not in ("same", "valid", "full"):
            raise ctx.err(f"unknown padding '{p['padding']}' (same, valid or full)", "padding")
        off = _get_str(ctx, d, "offset")
        p["offset"] = None if off is None else _offset(ctx, off, 2)
        p["depthwise"] = ns_bool(d.get("depthwise"))
        p["weight"] = _get_str(ctx, d, "weight", required=True)
        p["weight_range"] = _get_str(ctx, d, "weight_range")
    elif t == "inverted_residual":
        p["expansion"] = ns_int(_get_str(ctx, d, "expansion", required=True))
        if p["expansion"] <= 0:
            raise ctx.err(f"expansion must be positive, got {p['expansion']}", "expansion")
        p["stride"] = _stride(ctx, d, 1)
        p["filters"] = ns_int(_get_str(ctx, d, "filters", str(n.inputs[0][2])))
        if p["filters"] <= 0:
            raise ctx.err(f"filters must be positive, got {p['filters']}", "filters")
        p["kernel"] = _kernel(ctx, _get_str(ctx, d, "kernel", "3"), ";")
        off = _get_str(ctx, d, "offset")
        s = p["stride"]
        p["offset"] = (s >> 1, s >> 1) if off is None else _offset(ctx, off, 2)
        neurons = ns_list(_get_str(ctx, d, "neurons", "relun,0,6;relun,0,6;none"), ";")
        if len(neurons) != 3:
            raise ctx.err(f"needs exactly 3 ';'-separated activations, found {len(neurons)}", "neurons")
        p["neurons"] = [_neuron(ctx, x, "neurons", 2) for x in neurons]
        ws = ns_list(_get_str(ctx, d, "weights", required=True), ",")
        if not ws:
            raise ctx.err("no weight names", "weights")
        p["weights"] = ws if len(ws) >= 3 else [ws[0]] * 3
        p["weights"] = p["weights"][:3]
        p["weight_ranges"] = _get_str(ctx, d, "weight_ranges")
    elif t == "dense":
        p["filters"] = ns_int(_get_str(ctx, d, "filters", required=True))
        if p["filters"] <= 0:
            raise ctx.err(f"filters must be positive, got {p['filters']}", "filters")
        p["activation"] = _neuron(ctx, _get_str(ctx, d, "activation", "none"), "activation", 2)
        p["weights"] = _get_str(ctx, d, "weights", required=True)
        p["weight_range"] = _get_str(ctx, d, "weight_range")
    elif t in ("pooling_max", "pooling_average"):
        p["kernel"] = _kernel(ctx, _get_str(ctx, d, "kernel", required=True), ",")
        p["stride"] = _stride(ctx, d, 2)
        off = _get_str(ctx, d, "offset")
        p["offset"] = None if off is None else _offset(ctx, off, 3)
    elif t == "neuron":
        p["activation"] = _neuron(ctx, _get_str(ctx, d, "activation", required=True), "activation", 3)
    elif t == "reshape":
        p["output"] = _shape(ctx, _get_str(ctx, d, "output", required=True), "output")
    elif t == "arithmetic":
        op = _get_str(ctx, d, "arithmetic", required=True)
        if op not in ("addition", "subtract", "multiply", "divide"):
            raise ctx.err(f"unknown operation '{op}' (addition, subtract, multiply or divide)", "arithmetic")
        p["op"] = op
        p["secondary_image"] = _get_str(ctx, d, "secondary_image")
        p["secondary_data"] = _get_str(ctx, d, "secondary_data")
        if p["secondary_image"] is not None and p["secondary_data"] is not None:
            raise ctx.err("both secondary_image and secondary_data are given", "secondary_data")
        if p["secondary_data"] is not None:
            p["secondary_data_shape"] = _shape(ctx, _get_str(ctx, d, "secondary_data_shape", required=True),
                                               "secondary_data_shape")
        p["bias"] = ns_float(_get_str(ctx, d, "bias", "0"))
        p["primary_scale"] = ns_float(_get_str(ctx, d, "primary_scale", "1"))
        p["secondary_scale"] = ns_float(_get_str(ctx, d, "secondary_scale", "1"))
        for key in ("primary_strides", "secondary_strides"):
            parts = ns_list(_get_str(ctx, d, key, "1,1,1"), ",")
            if len(parts) != 3:
                raise ctx.err(f"'{d.get(key)}' must be 3 values (x, y, channel strides)", key)
            st = tuple(ns_int(x) for x in parts)
            if min(st) < 0:
                raise ctx.err("negative stride", key)
            p[key] = st
        p["channel_offset"] = ns_int(_get_str(ctx, d, "channel_offset", "0"))
        if p["channel_offset"] != 0:
            raise ctx.err("a non-zero destination channel offset is not supported by this reference",
                          "channel_offset")
        p["has_secondary"] = p["secondary_image"] is not None or p["secondary_data"] is not None
    # slot counts
    if t == "concatenate":
        n.nslots = len(n.inputs)
    elif t == "arithmetic":
        n.nslots = 2
    elif t == "input":
        n.nslots = 0
    return n


def parse_weight_map(json_path):
    try:
        text = open(json_path, encoding="utf-8").read()
    except OSError as e:
        raise MTError(f"{json_path}: cannot read the weight map: {e.strerror}")
    text = re.sub(r",\s*}", "}", text)  # the shipped maps end with a trailing comma (§2.2)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise MTError(f"{json_path}: not valid JSON (after removing trailing commas): {e}")
    if not isinstance(raw, dict):
        raise MTError(f"{json_path}: the top level must be an object mapping weight names to \"offset,length\"")
    m = {}
    for k, v in raw.items():
        r = _range(v)
        if r is None:
            raise MTError(f"{json_path}: key '{k}': value {v!r} is not \"byteOffset,byteLength\"")
        m[k] = r
    return m


def _range(v):
    if not isinstance(v, str):
        return None
    parts = [p for p in v.split(",") if p.strip(_LEADING_WS) != ""]
    if len(parts) != 2:
        return None
    off, ln = ns_int(parts[0]), ns_int(parts[1])
    if off < 0 or ln < 0:
        return None
    return off, ln


class _Blob:
    """A weight source (the model's .bin, or a separate weight file) sliced as float32 (§2.3)."""

    def __init__(self, path):
        self.path = path
        self.data = None

    def get(self):
        if self.data is None:
            try:
                with open(self.path, "rb") as f:
                    self.data = f.read()
            except OSError as e:
                raise MTError(f"{self.path}: cannot read the weights: {e.strerror}")
        return self.data


def _slice_weights(ctx, key, label, blob, rng, n_w, n_b):
    """Weights (n_w floats) then an optional bias (n_b floats) from byte range rng of blob."""
    try:
        data = blob.get()
    except MTError as e:
        raise ctx.err(f"weight '{label}': {e} (use --weights-bin for a blob elsewhere)", key)
    off, ln = rng
    if off + ln > len(data):
        raise ctx.err(f"weight '{label}': byte range {off},{ln} ends at {off + ln}, outside {blob.path} "
                      f"({len(data)} bytes)", key)
    if ln == 4 * n_w:
        w = np.frombuffer(data, "<f4", n_w, off).astype(np.float32)
        return w, np.zeros(n_b, np.float32)
    if ln == 4 * (n_w + n_b):
        a = np.frombuffer(data, "<f4", n_w + n_b, off).astype(np.float32)
        return a[:n_w].copy(), a[n_w:].copy()
    raise ctx.err(f"weight '{label}': byte length {ln} is neither 4*{n_w} = {4 * n_w} (weights only) nor "
                  f"4*({n_w}+{n_b}) = {4 * (n_w + n_b)} (weights and bias)", key)


def weight_specs(n):
    """[(key, weight name, n_w, n_b, shape, fan_in)] for a weighted node, from its declared shapes."""
    p = n.p
    cin = n.inputs[0][2]
    if n.type in ("convolution", "trans_conv"):
        kh, kw = p["kernel"]
        if p["depthwise"]:
            return [("weight", p["weight"], kh * kw * cin, cin, (cin, kh, kw), kh * kw)]
        f = p["filters"]
        return [("weight", p["weight"], kh * kw * cin * f, f, (f, kh, kw, cin), kh * kw * cin)]
    if n.type == "dense":
        h, w, c = n.inputs[0]
        f = p["filters"]
        return [("weights", p["weights"], h * w * c * f, f, (f, h, w, c), h * w * c)]
    if n.type == "inverted_residual":
        m = make_divisible(cin * p["expansion"])
        kh, kw = p["kernel"]
        f = p["filters"]
        e, dw, pr = p["weights"]
        return [("weights", e, m * cin, m, (m, 1, 1, cin), cin),
                ("weights", dw, m * kh * kw, m, (m, kh, kw), kh * kw),
                ("weights", pr, f * m, f, (f, 1, 1, m), m)]
    return []


def _load_weights(path, n, base_dir, wmap_get, blob):
    ctx = _Ctx(path, n.name)
    specs = weight_specs(n)
    p = n.p
    # §2.5: weights in a separate file next to the plist (the "bundle root")
    sep_file, sep_ranges = None, None
    if n.type in ("convolution", "trans_conv"):
        cand = os.path.join(base_dir, p["weight"])
        if p["weight"] and os.path.isfile(cand):
            sep_file = cand
            sep_ranges = [p["weight_range"]]
    elif n.type == "dense":
        cand = os.path.join(base_dir, p["weights"] + ".bin")
        if os.path.isfile(cand):
            sep_file = cand
            sep_ranges = [p["weight_range"]]
    elif n.type == "inverted_residual":
        # [ambiguous in the spec] the resource is taken to be "<first weight name>.bin"
        cand = os.path.join(base_dir, p["weights"][0] + ".bin")
        if os.path.isfile(cand):
            sep_file = cand
            wr = p["weight_ranges"]
            sep_ranges = ns_list(wr, ";") if wr is not None else [None, None, None]
            if len(sep_ranges) != 3:
                raise ctx.err(f"'{wr}' must give 3 ';'-separated ranges", "weight_ranges")
    out = []
    if sep_file is not None:
        sb = _Blob(sep_file)
        for (key, label, n_w, n_b, shape, _), r in zip(specs, sep_ranges):
            if r is None:
                rng = (0, len(sb.get()))
            else:
                rng = _range(r)
                if rng is None:
                    raise ctx.err(f"'{r}' is not \"offset,length\"", "weight_range")
            w, b = _slice_weights(ctx, key, label, sb, rng, n_w, n_b)
            out.append((w.reshape(shape), b))
        return out
    wmap = wmap_get()
    for key, label, n_w, n_b, shape, _ in specs:
        if label not in wmap:
            raise ctx.err(f"weight '{label}' is not in the weight map {wmap_get.path}", key)
        w, b = _slice_weights(ctx, key, label, blob, wmap[label], n_w, n_b)
        out.append((w.reshape(shape), b))
    return out


def load_image_rgb01(path, ctx=None, key=None):
    """secondary_image: 8-bit RGB (premultiplied when it has alpha) / 255, shape (h, w, 3)."""
    try:
        from PIL import Image
    except ImportError:
        raise MTError("Pillow is needed to read secondary_image PNGs (pip install pillow)")
    try:
        im = Image.open(path)
        im.load()
    except OSError as e:
        msg = f"cannot read image {path}: {e}"
        raise (ctx.err(msg, key) if ctx else MTError(msg))
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        a = np.asarray(im.convert("RGBA"), dtype=np.float64)
        rgb = np.floor(a[..., :3] * a[..., 3:4] / 255.0 + 0.5)  # premultiply, 8-bit
    else:
        rgb = np.asarray(im.convert("RGB"), dtype=np.float64)
    return (rgb / 255.0).astype(np.float32)


def load_model(plist_path, json_path=None, bin_path=None):
    """Parse MODEL.plist (+ MODEL.json + MODEL.bin beside it unless given), wire and check it, and load
    the weights and secondary operands."""
    model = parse_model(plist_path, json_path, bin_path)
    _load_all_weights(model)
    return model


def parse_model(plist_path, json_path=None, bin_path=None):
    """The graph only: parse, wire, order and shape-check, without reading any weights."""
    path = str(plist_path)
    try:
        with open(path, "rb") as f:
            root = plistlib.load(f)  # XML or binary
    except OSError as e:
        raise MTError(f"{path}: cannot read: {e.strerror}")
    except Exception as e:  # plistlib raises several types for malformed files
        raise MTError(f"{path}: not a property list: {e}")
    if not isinstance(root, dict):
        raise MTError(f"{path}: the root of the property list must be a dictionary")
    root = strip_spaces(root)
    stem = os.path.splitext(path)[0]
    model = Model()
    model.path = path
    model.json_path = str(json_path) if json_path else stem + ".json"
    model.bin_path = str(bin_path) if bin_path else stem + ".bin"
    for name, d in root.items():
        if isinstance(d, dict):
            model.nodes[name] = _parse_node(path, name, d)
    nodes = model.nodes
    if not nodes:
        raise MTError(f"{path}: no node dictionaries")
    ins = [n.name for n in nodes.values() if n.type == "input"]
    if len(ins) != 1:
        raise MTError(f"{path}: expected exactly one node of type 'input', found {len(ins)}"
                      + (f" ({', '.join(ins)}); MetalTensor would pick one in unspecified order" if ins else ""))
    model.input = ins[0]
    model.outputs = [n.name for n in nodes.values() if n.type == "output"]
    _check_cycles(model)
    _wire(model)
    _order_and_shapes(model)
    return model


def _load_all_weights(model):
    path, nodes = model.path, model.nodes
    base_dir = os.path.dirname(os.path.abspath(path))
    blob = _Blob(model.bin_path)

    class _MapGetter:
        path = model.json_path
        m = None

        def __call__(self):
            if self.m is None:
                self.m = parse_weight_map(self.path)
            return self.m

    getter = _MapGetter()
    for n in nodes.values():
        if n.type in WEIGHTED:
            n.w["list"] = _load_weights(path, n, base_dir, getter, blob)
        elif n.type == "arithmetic" and n.p["has_secondary"]:
            ctx = _Ctx(path, n.name)
            if n.p["secondary_image"] is not None:
                ip = n.p["secondary_image"]
                ip = ip if os.path.isabs(ip) else os.path.join(base_dir, ip)
                n.w["secondary"] = load_image_rgb01(ip, ctx, "secondary_image")
            else:
                dp = n.p["secondary_data"]
                dp = dp if os.path.isabs(dp) else os.path.join(base_dir, dp)
                shp = n.p["secondary_data_shape"]
                try:
                    raw = open(dp, "rb").read()
                except OSError as e:
                    raise ctx.err(f"cannot read {dp}: {e.strerror}", "secondary_data")
                cnt = shp[0] * shp[1] * shp[2]
                if len(raw) != 2 * cnt:
                    raise ctx.err(f"{dp} has {len(raw)} bytes, expected {2 * cnt} (float16 {shp})",
                                  "secondary_data")
                n.w["secondary"] = np.frombuffer(raw, "<f2").astype(np.float32).reshape(shp)
            _check_operand(ctx, n, n.w["secondary"].shape, n.p["secondary_strides"],
                           "secondary_image" if n.p["secondary_image"] is not None else "secondary_data")


def _wire(model):
    path, nodes = model.path, model.nodes
    unindexed = {k: [] for k in nodes}
    for src in nodes.values():
        ctx = _Ctx(path, src.name)
        for k, tg in enumerate(src.targets):
            if tg not in nodes:
                raise ctx.err(f"unknown target '{tg}'", "targets")
            t = nodes[tg]
            if t.type == "input":
                raise ctx.err(f"target '{tg}' is the input node, which takes no inputs", "targets")
            if t.type == "inverted_residual":
                slot = 0  # always slot 0, whatever index was given (§3.2)
            elif src.indices is not None:
                slot = src.indices[k]
            else:
                unindexed[tg].append(src.name)
                continue
            if slot >= t.nslots:
                raise ctx.err(f"slot {slot} for target '{tg}', which has {t.nslots} input slot(s)", "indices")
            if slot in t.slots:
                raise ctx.err(f"slot {slot} of '{tg}' already receives '{t.slots[slot]}'", "indices")
            t.slots[slot] = src.name
    for t in nodes.values():
        if t.type == "arithmetic" and t.p["has_secondary"]:
            if 1 in t.slots:
                raise _Ctx(path, t.name).err(f"slot 1 is reserved by the secondary operand but also receives "
                                             f"'{t.slots[1]}'", "secondary_image")
            t.slots[1] = "<secondary>"
        srcs = unindexed[t.name]
        if len(srcs) > 1 and t.nslots > 1:
            raise _Ctx(path, t.name).err(
                f"{len(srcs)} incoming edges without indices ({', '.join(srcs)}): their slot order is undefined "
                "in MetalTensor (NSDictionary order); give 'indices' on the sources")
        for s in srcs:
            free = [i for i in range(t.nslots) if i not in t.slots]
            if not free:
                raise _Ctx(path, s).err(f"target '{t.name}' has no free input slot left", "targets")
            t.slots[free[0]] = s


def _check_cycles(model):
    nodes = model.nodes
    succ = {k: ([] if n.type == "output" else [t for t in dict.fromkeys(n.targets) if t in nodes])
            for k, n in nodes.items()}
    state = {}
    for start in nodes:
        if start in state:
            continue
        stack = [(start, iter(succ[start]))]
        state[start] = 1
        trail = [start]
        while stack:
            v, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[v] = 2
                stack.pop()
                trail.pop()
                continue
            st = state.get(nxt)
            if st == 1:
                cyc = trail[trail.index(nxt):] + [nxt]
                raise MTError(f"{model.path}: node '{nxt}': key 'targets': the graph has a cycle: "
                              + " -> ".join(cyc))
            if st is None:
                state[nxt] = 1
                trail.append(nxt)
                stack.append((nxt, iter(succ[nxt])))


def _order_and_shapes(model):
    path, nodes = model.path, model.nodes
    # reachable from the input (outputs' targets are never followed)
    reach, todo = set(), [model.input]
    while todo:
        v = todo.pop()
        if v in reach:
            continue
        reach.add(v)
        if nodes[v].type != "output":
            todo.extend(nodes[v].targets)
    for v in reach:
        n = nodes[v]
        for s in range(n.nslots):
            if s not in n.slots:
                raise _Ctx(path, v).err(f"input slot {s} receives no tensor (no edge targets it)", "inputs")
        for s, src in n.slots.items():
            if src != "<secondary>" and src not in reach:
                raise _Ctx(path, v).err(f"slot {s} comes from '{src}', which is not reachable from the input "
                                        f"'{model.input}', so this node would never run", "inputs")
    for o in model.outputs:
        if o not in reach:
            raise _Ctx(path, o).err(f"output is not reachable from the input '{model.input}'")
    # Kahn's algorithm in plist order
    indeg = {v: sum(1 for s in nodes[v].slots.values() if s != "<secondary>") for v in reach}
    ready = [v for v in nodes if v in reach and indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop(0)
        order.append(v)
        if nodes[v].type == "output":
            continue
        for t in dict.fromkeys(nodes[v].targets):
            indeg[t] -= sum(1 for s in nodes[t].slots.values() if s == v)
            if indeg[t] == 0:
                ready.append(t)
    if len(order) != len(reach):
        stuck = [v for v in nodes if v in reach and v not in order]
        raise MTError(f"{path}: node '{stuck[0]}': key 'targets': cannot be scheduled (cycle)")
    model.order = order
    for v in order:
        _infer_shape(model, nodes[v])


def _check_operand(ctx, n, shape, strides, key):
    h, w, c = n.inputs[0]
    sx, sy, sc = strides
    need = ((h - 1) * sy + 1, (w - 1) * sx + 1, (c - 1) * sc + 1)
    if any(need[i] > shape[i] for i in range(3)):
        raise ctx.err(f"operand of shape {shape} is too small for the declared shape {n.inputs[0]} with strides "
                      f"(x,y,c)={strides}", key)


def _infer_shape(model, n):
    ctx = _Ctx(model.path, n.name)
    nodes = model.nodes
    ins = [None if s == "<secondary>" else nodes[s].shape for _, s in sorted(n.slots.items())]
    t, p = n.type, n.p
    if t == "input":
        n.shape = n.inputs[0]
        return
    x = ins[0]
    if t == "concatenate":
        for j, (a, dcl) in enumerate(zip(ins, n.inputs)):
            if tuple(a) != tuple(dcl):
                raise ctx.err(f"slot {j} declared {dcl} but receives {a} from '{n.slots[j]}'", "inputs")
    elif tuple(x) != tuple(n.inputs[0]):
        raise ctx.err(f"slot 0 declared {n.inputs[0]} but receives {x} from '{n.slots[0]}'", "inputs")
    H, W, C = x
    if t in ("output", "neuron", "softmax"):
        n.shape = x
    elif t == "convolution":
        (kh, kw), s, pad = p["kernel"], p["stride"], p["padding"]
        oh, ow = conv_out_len(H, kh, s, pad), conv_out_len(W, kw, s, pad)
        if oh <= 0 or ow <= 0:
            raise ctx.err(f"'{pad}' padding of a {kh}x{kw} kernel on {H}x{W} gives an empty output", "padding")
        n.shape = (oh, ow, C if p["depthwise"] else p["filters"])
    elif t == "trans_conv":
        (kh, kw), s, pad = p["kernel"], p["stride"], p["padding"]
        oh, ow = tconv_out_len(H, kh, s, pad), tconv_out_len(W, kw, s, pad)
        if oh <= 0 or ow <= 0:
            raise ctx.err(f"'{pad}' padding of a {kh}x{kw} kernel on {H}x{W} gives an empty output", "padding")
        n.shape = (oh, ow, C if p["depthwise"] else p["filters"])
    elif t == "inverted_residual":
        s = p["stride"]
        n.shape = ((H + s - 1) // s, (W + s - 1) // s, p["filters"])
    elif t == "dense":
        n.shape = (1, 1, p["filters"])
    elif t in ("pooling_max", "pooling_average"):
        s = p["stride"]
        if H // s <= 0 or W // s <= 0:
            raise ctx.err(f"stride {s} on {H}x{W} gives an empty output", "stride")
        n.shape = (H // s, W // s, C)
    elif t == "reshape":
        o = p["output"]
        if o[0] * o[1] * o[2] != H * W * C:
            raise ctx.err(f"{o} has {o[0] * o[1] * o[2]} elements but the input {x} has {H * W * C}", "output")
        n.shape = o
    elif t == "concatenate":
        n.shape = (max(s[0] for s in n.inputs), max(s[1] for s in n.inputs),
                   sum(4 * ((s[2] + 3) // 4) for s in n.inputs))
    elif t == "arithmetic":
        _check_operand(ctx, n, x, p["primary_strides"], "primary_strides")
        if not p["has_secondary"]:
            _check_operand(ctx, n, ins[1], p["secondary_strides"], "secondary_strides")
        n.shape = n.inputs[0]
    else:  # pragma: no cover
        raise ctx.err(f"unhandled type {t}")


# ----------------------------------------------------------------------------------------------
# Kernels (vectorised)

def correlate(x, w, stride, start_y, start_x, out_h, out_w, depthwise=False):
    """out[t][u][o] = sum_{ky,kx,i} X[stride*t + start_y + ky][stride*u + start_x + kx][i] * w[o][ky][kx][i],
    X = 0 outside x. w is (Cout, kH, kW, Cin), or (C, kH, kW) when depthwise."""
    H, W, C = x.shape
    kh, kw = w.shape[1], w.shape[2]
    y_hi = start_y + stride * (out_h - 1) + kh - 1
    x_hi = start_x + stride * (out_w - 1) + kw - 1
    pt, pb = max(0, -start_y), max(0, y_hi - (H - 1))
    pl, pr = max(0, -start_x), max(0, x_hi - (W - 1))
    xp = np.pad(x, ((pt, pb), (pl, pr), (0, 0))) if (pt or pb or pl or pr) else x
    xp = np.ascontiguousarray(xp[start_y + pt:, start_x + pl:])
    s0, s1, s2 = xp.strides
    if depthwise:
        acc = np.zeros((out_h, out_w, C), np.float32)
        for ky in range(kh):
            for kx in range(kw):
                acc += xp[ky:ky + stride * (out_h - 1) + 1:stride, kx:kx + stride * (out_w - 1) + 1:stride] * w[:, ky, kx]
        return acc
    if kh == 1 and kw == 1:
        v = xp[:stride * (out_h - 1) + 1:stride, :stride * (out_w - 1) + 1:stride]
        return (v.reshape(-1, C) @ w.reshape(w.shape[0], C).T).reshape(out_h, out_w, -1)
    view = as_strided(xp, shape=(out_h, out_w, kh, kw, C), strides=(s0 * stride, s1 * stride, s0, s1, s2),
                      writeable=False)
    cols = view.reshape(out_h * out_w, kh * kw * C)
    return (cols @ w.reshape(w.shape[0], -1).T).reshape(out_h, out_w, -1)


def zero_insert(x, s):
    H, W, C = x.shape
    if s == 1:
        return x
    e = np.zeros(((H - 1) * s + 1, (W - 1) * s + 1, C), x.dtype)
    e[::s, ::s] = x
    return e


def pool(x, kh, kw, stride, off_x, off_y, mode, out_h, out_w):
    """MPS window rule with clamp edges: max clamps coordinates, average shrinks the window."""
    H, W, C = x.shape
    rows = stride * np.arange(out_h)[:, None] + off_y - (kh >> 1) + np.arange(kh)[None, :]
    cols = stride * np.arange(out_w)[:, None] + off_x - (kw >> 1) + np.arange(kw)[None, :]
    g = x[np.clip(rows, 0, H - 1)][:, :, np.clip(cols, 0, W - 1)]  # (oh, kh, ow, kw, C)
    if mode == "max":
        return g.max(axis=(1, 3))
    vr = ((rows >= 0) & (rows < H)).astype(np.float32)
    vc = ((cols >= 0) & (cols < W)).astype(np.float32)
    s = np.einsum("ab,cd,abcde->ace", vr, vc, g, optimize=True)
    cnt = (vr.sum(1)[:, None] * vc.sum(1)[None, :])[:, :, None]
    return np.where(cnt > 0, s / np.maximum(cnt, 1), 0).astype(np.float32)


def activation(x, neuron):
    name, a, b, c = neuron
    a, b, c = np.float32(a), np.float32(b), np.float32(c)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if name == "none":
            return x
        if name == "relu":
            return np.where(x >= 0, x, a * x).astype(np.float32)
        if name == "relun":
            return np.minimum(np.where(x >= 0, x, a * x), b).astype(np.float32)
        if name == "linear":
            return (a * x + b).astype(np.float32)
        if name == "sigmod":
            return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)
        if name == "power":
            return np.power(a * x + b, c).astype(np.float32)
    raise MTError(f"unknown activation {name}")


def conv_params(n, H, W):
    """(start_y, start_x) of the window for a convolution / transposed convolution node."""
    (kh, kw), s, pad = n.p["kernel"], n.p["stride"], n.p["padding"]
    if n.type == "convolution":
        if n.p["offset"] is None:
            ox, oy = conv_default_offset(kw, s, pad), conv_default_offset(kh, s, pad)
        else:
            ox, oy = n.p["offset"]
        return oy - (kh >> 1), ox - (kw >> 1)
    if n.p["offset"] is None:
        ox, oy = tconv_default_offset(kw, s, pad), tconv_default_offset(kh, s, pad)
    else:
        ox, oy = n.p["offset"]
    return oy - ((kh - 1) >> 1), ox - ((kw - 1) >> 1)


def pool_offsets(n):
    (kh, kw), s = n.p["kernel"], n.p["stride"]
    if n.p["offset"] is None:
        return pool_default_offset(kw, s), pool_default_offset(kh, s)
    return n.p["offset"]


def _f16(a):
    return a.astype(np.float16).astype(np.float32)


def _weights(model, precision):
    if precision not in model._cache:
        c = {}
        for name, n in model.nodes.items():
            if "list" in n.w:
                c[name] = [(_f16(w), _f16(b)) if precision == "fp16" else (w, b) for w, b in n.w["list"]]
            if "secondary" in n.w:
                c[name + "\0sec"] = _f16(n.w["secondary"]) if precision == "fp16" else n.w["secondary"]
        model._cache[precision] = c
    return model._cache[precision]


def _operand(a, strides, shape):
    sx, sy, sc = strides
    h, w, c = shape
    if (sx, sy, sc) == (1, 1, 1) and a.shape == tuple(shape):
        return a
    return a[np.arange(h)[:, None, None] * sy, np.arange(w)[None, :, None] * sx, np.arange(c)[None, None, :] * sc]


def run(model, input_hwc, precision="fp32", all_layers=False):
    """Execute the graph; returns {node: HWC float32} for the output nodes (every node if all_layers)."""
    if precision not in ("fp32", "fp16"):
        raise MTError(f"unknown precision '{precision}' (fp32 or fp16)")
    nodes = model.nodes
    x_in = np.asarray(input_hwc, dtype=np.float32)
    want = nodes[model.input].shape
    if x_in.size != want[0] * want[1] * want[2]:
        raise MTError(f"{model.path}: node '{model.input}': key 'inputs': the input has {x_in.size} values, "
                      f"the declared shape {want} needs {want[0] * want[1] * want[2]}")
    x_in = x_in.reshape(want)
    R = _f16 if precision == "fp16" else (lambda a: a)
    wc = _weights(model, precision)
    vals = {}
    for v in model.order:
        n = nodes[v]
        ins = [vals.get(s) for _, s in sorted(n.slots.items())]
        y = _exec(model, n, ins, x_in, wc, R)
        vals[v] = R(np.ascontiguousarray(y, dtype=np.float32))
    if all_layers:
        return {v: vals[v] for v in model.order}
    return {o: vals[o] for o in model.outputs}


def _exec(model, n, ins, x_in, wc, R):
    t, p = n.type, n.p
    if t == "input":
        return x_in
    x = ins[0]
    H, W, C = x.shape
    if t == "output":
        return x
    if t == "neuron":
        return activation(x, p["activation"])
    if t == "softmax":
        e = np.exp(x - x.max(axis=2, keepdims=True))
        return e / e.sum(axis=2, keepdims=True)
    if t in ("convolution", "trans_conv"):
        (w, b), = wc[n.name]
        sy, sx = conv_params(n, H, W)
        oh, ow = n.shape[0], n.shape[1]
        if t == "convolution":
            y = correlate(x, w, p["stride"], sy, sx, oh, ow, p["depthwise"])
        else:
            y = correlate(zero_insert(x, p["stride"]), w, 1, sy, sx, oh, ow, p["depthwise"])
        return activation(y + b, p["activation"])
    if t == "inverted_residual":
        (we, be), (wd, bd), (wp, bp) = wc[n.name]
        n0, n1, n2 = p["neurons"]
        e = R(activation(correlate(x, we, 1, 0, 0, H, W) + be, n0))
        s = p["stride"]
        (kh, kw), (ox, oy) = p["kernel"], p["offset"]
        oh, ow = (H + s - 1) // s, (W + s - 1) // s
        d = R(activation(correlate(e, wd, s, oy - (kh >> 1), ox - (kw >> 1), oh, ow, True) + bd, n1))
        y = R(activation(correlate(d, wp, 1, 0, 0, oh, ow) + bp, n2))
        if y.shape == x.shape:
            y = x + y
        return y
    if t == "dense":
        (w, b), = wc[n.name]
        y = w.reshape(w.shape[0], -1) @ x.reshape(-1) + b
        return activation(y.reshape(1, 1, -1), p["activation"])
    if t in ("pooling_max", "pooling_average"):
        (kh, kw), s = p["kernel"], p["stride"]
        ox, oy = pool_offsets(n)
        return pool(x, kh, kw, s, ox, oy, "max" if t == "pooling_max" else "avg", n.shape[0], n.shape[1])
    if t == "reshape":
        return x.reshape(n.shape)
    if t == "concatenate":
        out = np.zeros(n.shape, np.float32)
        c0 = 0
        for a in ins:
            out[:a.shape[0], :a.shape[1], c0:c0 + a.shape[2]] = a
            c0 += 4 * ((a.shape[2] + 3) // 4)
        return out
    if t == "arithmetic":
        shape = n.inputs[0]
        a = _operand(x, p["primary_strides"], shape)
        bsrc = wc[n.name + "\0sec"] if p["has_secondary"] else ins[1]
        b = _operand(bsrc, p["secondary_strides"], shape)
        a = np.float32(p["primary_scale"]) * a
        b = np.float32(p["secondary_scale"]) * b
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = {"addition": np.add, "subtract": np.subtract, "multiply": np.multiply,
                 "divide": np.divide}[p["op"]](a, b)
        return y + np.float32(p["bias"])
    raise MTError(f"{model.path}: node '{n.name}': unhandled type {t}")


# ----------------------------------------------------------------------------------------------
# --self-check: the fast kernels against direct loops over the §6 formulas

def _brute_conv(x, w, b, s, oy, ox, out_h, out_w, depthwise=False):
    H, W, C = x.shape
    kh, kw = w.shape[1], w.shape[2]
    cout = C if depthwise else w.shape[0]
    out = np.zeros((out_h, out_w, cout), np.float64)
    for y in range(out_h):
        for xx in range(out_w):
            for o in range(cout):
                acc = float(b[o])
                for ky in range(kh):
                    iy = s * y + oy - (kh >> 1) + ky
                    if iy < 0 or iy >= H:
                        continue
                    for kx in range(kw):
                        ix = s * xx + ox - (kw >> 1) + kx
                        if ix < 0 or ix >= W:
                            continue
                        if depthwise:
                            acc += float(x[iy, ix, o]) * float(w[o, ky, kx])
                        else:
                            for i in range(C):
                                acc += float(x[iy, ix, i]) * float(w[o, ky, kx, i])
                out[y, xx, o] = acc
    return out


def _brute_tconv(x, w, b, s, oy, ox, out_h, out_w):
    H, W, C = x.shape
    kh, kw = w.shape[1], w.shape[2]
    EH, EW = (H - 1) * s + 1, (W - 1) * s + 1
    out = np.zeros((out_h, out_w, w.shape[0]), np.float64)
    for p_ in range(out_h):
        for q in range(out_w):
            for o in range(w.shape[0]):
                acc = float(b[o])
                for ky in range(kh):
                    ey = p_ + oy - ((kh - 1) >> 1) + ky
                    if ey < 0 or ey >= EH or ey % s:
                        continue
                    for kx in range(kw):
                        ex = q + ox - ((kw - 1) >> 1) + kx
                        if ex < 0 or ex >= EW or ex % s:
                            continue
                        for i in range(C):
                            acc += float(x[ey // s, ex // s, i]) * float(w[o, ky, kx, i])
                out[p_, q, o] = acc
    return out


def _brute_pool(x, kh, kw, s, ox, oy, mode, out_h, out_w):
    H, W, C = x.shape
    out = np.zeros((out_h, out_w, C), np.float64)
    for y in range(out_h):
        for xx in range(out_w):
            for c in range(C):
                vals = []
                for ky in range(kh):
                    iy = s * y + oy - (kh >> 1) + ky
                    for kx in range(kw):
                        ix = s * xx + ox - (kw >> 1) + kx
                        if mode == "max":
                            vals.append(float(x[min(max(iy, 0), H - 1), min(max(ix, 0), W - 1), c]))
                        elif 0 <= iy < H and 0 <= ix < W:
                            vals.append(float(x[iy, ix, c]))
                out[y, xx, c] = max(vals) if mode == "max" else (sum(vals) / len(vals) if vals else 0.0)
    return out


def _fake_node(t, kernel, stride, padding, offset, depthwise=False):
    n = Node("case", {})
    n.type = t
    n.p = {"kernel": kernel, "stride": stride, "padding": padding, "offset": offset, "depthwise": depthwise}
    return n


def self_check(verbose=True):
    """Fast conv / depthwise / trans_conv / pooling against direct loops; returns the worst |diff|."""
    rng = np.random.default_rng(1234)
    worst = 0.0
    lines = []

    def report(label, a, b):
        nonlocal worst
        d = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
        worst = max(worst, d)
        lines.append(f"  {label:62s} max|diff| {d:.2e}")
        if d > 1e-4:
            raise MTError(f"self-check failed: {label}: max |diff| {d}")

    conv_cases = [  # (H, W, Cin, Cout, kH, kW, s, padding, offset)
        (7, 9, 3, 4, 3, 3, 2, "same", None),    # odd sizes, stride 2 (MPS != TF)
        (8, 8, 3, 5, 3, 3, 2, "same", None),
        (7, 6, 2, 3, 1, 1, 2, "same", None),    # 1x1 stride 2
        (6, 7, 3, 2, 2, 2, 1, "same", None),    # even kernel
        (9, 8, 2, 3, 4, 2, 2, "same", None),    # even, non-square
        (9, 7, 3, 2, 3, 5, 1, "valid", None),
        (9, 8, 2, 3, 3, 3, 2, "valid", None),
        (5, 6, 2, 2, 3, 3, 1, "full", None),
        (5, 7, 2, 3, 5, 3, 2, "full", None),
        (6, 6, 3, 4, 5, 5, 2, "same", None),
        (7, 7, 2, 2, 3, 3, 2, "same", (0, 2)),  # explicit offsets
        (6, 5, 2, 3, 3, 3, 1, "same", (-1, 3)),
    ]
    for (H, W, ci, co, kh, kw, s, pad, off) in conv_cases:
        for dw in (False, True):
            x = rng.standard_normal((H, W, ci)).astype(np.float32)
            cout = ci if dw else co
            w = rng.standard_normal((ci, kh, kw) if dw else (co, kh, kw, ci)).astype(np.float32)
            b = rng.standard_normal(cout).astype(np.float32)
            n = _fake_node("convolution", (kh, kw), s, pad, off, dw)
            oh, ow = conv_out_len(H, kh, s, pad), conv_out_len(W, kw, s, pad)
            sy, sx = conv_params(n, H, W)
            fast = correlate(x, w, s, sy, sx, oh, ow, dw) + b
            ox, oy = off if off else (conv_default_offset(kw, s, pad), conv_default_offset(kh, s, pad))
            slow = _brute_conv(x, w, b, s, oy, ox, oh, ow, dw)
            report(f"conv{' dw' if dw else ''} {H}x{W}x{ci} k{kh}x{kw} s{s} {pad} off={off} -> {oh}x{ow}", fast, slow)
    tconv_cases = [  # (H, W, Cin, Cout, kH, kW, s, padding, offset)
        (4, 5, 3, 2, 3, 3, 2, "same", None),
        (3, 3, 2, 3, 2, 2, 2, "same", None),    # even kernel: (k-1)>>1 centre
        (4, 3, 2, 2, 4, 4, 2, "same", None),
        (3, 4, 2, 3, 3, 3, 2, "valid", None),
        (3, 3, 2, 2, 5, 3, 2, "valid", None),
        (4, 4, 2, 2, 3, 3, 2, "full", None),
        (3, 5, 2, 2, 3, 3, 1, "same", None),
        (3, 3, 2, 3, 3, 3, 3, "same", None),
        (4, 4, 2, 2, 3, 3, 2, "same", (0, -2)),
    ]
    for (H, W, ci, co, kh, kw, s, pad, off) in tconv_cases:
        x = rng.standard_normal((H, W, ci)).astype(np.float32)
        w = rng.standard_normal((co, kh, kw, ci)).astype(np.float32)
        b = rng.standard_normal(co).astype(np.float32)
        n = _fake_node("trans_conv", (kh, kw), s, pad, off)
        oh, ow = tconv_out_len(H, kh, s, pad), tconv_out_len(W, kw, s, pad)
        sy, sx = conv_params(n, H, W)
        fast = correlate(zero_insert(x, s), w, 1, sy, sx, oh, ow) + b
        ox, oy = off if off else (tconv_default_offset(kw, s, pad), tconv_default_offset(kh, s, pad))
        slow = _brute_tconv(x, w, b, s, oy, ox, oh, ow)
        report(f"trans_conv {H}x{W}x{ci} k{kh}x{kw} s{s} {pad} off={off} -> {oh}x{ow}", fast, slow)
    pool_cases = [  # (H, W, C, kH, kW, s, offset)
        (6, 6, 3, 6, 6, 6, None), (7, 7, 2, 7, 7, 7, None), (7, 9, 2, 3, 3, 2, None), (8, 8, 2, 2, 2, 2, None),
        (5, 7, 2, 3, 2, 2, None), (6, 5, 2, 3, 3, 1, None), (7, 7, 2, 4, 4, 3, (-1, 2)), (6, 6, 1, 5, 5, 2, None),
    ]
    for (H, W, C, kh, kw, s, off) in pool_cases:
        x = rng.standard_normal((H, W, C)).astype(np.float32)
        ox, oy = off if off else (pool_default_offset(kw, s), pool_default_offset(kh, s))
        for mode in ("max", "avg"):
            fast = pool(x, kh, kw, s, ox, oy, mode, H // s, W // s)
            slow = _brute_pool(x, kh, kw, s, ox, oy, mode, H // s, W // s)
            report(f"pool {mode} {H}x{W}x{C} k{kh}x{kw} s{s} off={off} -> {H // s}x{W // s}", fast, slow)
    # §6.1: MPS 'same' equals TF 'same' for even sizes with k in {3, 5}, s in {1, 2}, and differs by one
    # pixel for odd sizes with stride 2, a 1x1 kernel with stride 2, or an even kernel with stride 1.
    def tf_same_conv(x, w, s):
        H, W, C = x.shape
        kh, kw = w.shape[1], w.shape[2]
        oh, ow = -(-H // s), -(-W // s)
        pt = max((oh - 1) * s + kh - H, 0) // 2
        pl = max((ow - 1) * s + kw - W, 0) // 2
        return correlate(x, w, s, -pt, -pl, oh, ow)

    for (H, k, s, equal) in ((8, 3, 2, True), (8, 5, 2, True), (7, 3, 1, True), (6, 1, 1, True),
                             (7, 3, 2, False), (9, 5, 2, False), (8, 1, 2, False), (8, 2, 1, False)):
        x = rng.standard_normal((H, H, 2)).astype(np.float32)
        w = rng.standard_normal((3, k, k, 2)).astype(np.float32)
        n = _fake_node("convolution", (k, k), s, "same", None)
        sy, sx = conv_params(n, H, H)
        mps = correlate(x, w, s, sy, sx, -(-H // s), -(-H // s))
        same = bool(np.allclose(mps, tf_same_conv(x, w, s), atol=1e-5))
        lines.append(f"  MPS same vs TF same, n={H} k={k} s={s}: {'equal' if same else 'differ'} "
                     f"(expected {'equal' if equal else 'differ'})")
        if same != equal:
            raise MTError(f"self-check failed: MPS vs TF 'same' for n={H} k={k} s={s}")
    # §6.3 / §11: trans_conv 'same' with the kernel rotated by 180 degrees equals TF conv2d_transpose(same)
    for k in (2, 3, 4):
        H, s, ci, co = 4, 2, 2, 3
        x = rng.standard_normal((H, H, ci)).astype(np.float32)
        wtf = rng.standard_normal((k, k, co, ci))  # TF conv2d_transpose filter (kH, kW, out, in)
        pt = max(k - s, 0) // 2                     # the forward 'same' conv's top padding
        ref = np.zeros((H * s, H * s, co))
        for i in range(H):
            for j in range(H):
                for ky in range(k):
                    for kx in range(k):
                        p_, q = s * i + ky - pt, s * j + kx - pt
                        if 0 <= p_ < H * s and 0 <= q < H * s:
                            ref[p_, q] += wtf[ky, kx] @ x[i, j]
        w = np.ascontiguousarray(wtf[::-1, ::-1].transpose(2, 0, 1, 3)).astype(np.float32)  # rotate, to OHWI
        n = _fake_node("trans_conv", (k, k), s, "same", None)
        sy, sx = conv_params(n, H, H)
        report(f"trans_conv same k{k} s2 (rotated kernel) vs TF conv2d_transpose same",
               correlate(zero_insert(x, s), w, 1, sy, sx, H * s, H * s), ref)
    # make_divisible examples
    for v, m in ((48, 48), (12, 16), (4, 8), (36, 40), (100, 104), (20, 24)):
        if make_divisible(v) != m:
            raise MTError(f"self-check failed: make_divisible({v}) = {make_divisible(v)}, expected {m}")
    # lexical rules
    assert ns_int("3,3") == 3 and ns_int("x") == 0 and ns_int("-2abc") == -2 and ns_float("2.5e1x") == 25.0
    assert ns_float(".5") == 0.5 and ns_float("-1.") == -1.0 and ns_float("e5") == 0.0
    assert ns_bool("YES") and ns_bool("true") and ns_bool("1") and not ns_bool("NO") and not ns_bool("0")
    assert ns_list("loc1,conf1,", ",") == ["loc1", "conf1"] and ns_list("1,4,400;1,4,100;", ";") == ["1,4,400", "1,4,100"]
    lines.extend(_self_check_loader(rng))
    if verbose:
        print("\n".join(lines))
        print(f"self-check passed: {len(lines)} cases, worst max|diff| {worst:.2e}")
    return worst


def _self_check_loader(rng):
    """Loader checks on tiny generated models: XML vs binary plist, spaces/trailing separators, a JSON map
    with a trailing comma, and the error messages for malformed models."""
    import tempfile
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        def node(**kw):
            return {k: v for k, v in kw.items()}

        good = {
            "input": node(type="input", inputs="4, 4, 2", targets="c, "),
            "c": node(inputs=" 4,4,2", kernel="3", filters="2", activation="relu, 0.5", weight="c ",
                      targets="out,", indices="0"),
            "out": node(type="output", inputs="4,4,2", targets="nowhere"),
            "comment": "not a dictionary, ignored",
        }
        w = rng.standard_normal(3 * 3 * 2 * 2 + 2).astype("<f4")

        def write(model, name="m", fmt=plistlib.FMT_XML, wmap='{"c" : "0, 152",}', blob=None):
            base = os.path.join(tmp, name)
            with open(base + ".plist", "wb") as f:
                plistlib.dump(model, f, fmt=fmt)
            with open(base + ".json", "w") as f:
                f.write(wmap)
            with open(base + ".bin", "wb") as f:
                f.write((w if blob is None else blob).tobytes())
            return base + ".plist"

        x = rng.standard_normal((4, 4, 2)).astype(np.float32)
        a = run(load_model(write(good)), x)["out"]
        b = run(load_model(write(good, "mb", plistlib.FMT_BINARY)), x)["out"]
        ww = w[:36].reshape(2, 3, 3, 2)
        ref = _brute_conv(x, ww, w[36:], 1, 0, 0, 4, 4)
        ref = np.where(ref >= 0, ref, 0.5 * ref)
        if not (np.array_equal(a, b) and np.abs(a - ref).max() < 1e-5):
            raise MTError("self-check failed: tiny model, XML vs binary plist vs brute force")
        lines.append("  loader: XML and binary plists, spaces, trailing separators, trailing-comma JSON: OK")
        # §2.5: a 1x1 convolution whose weights are a separate file (like SWAP_BR.bin), no map entry
        swap = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]], "<f4")
        with open(os.path.join(tmp, "SWAP_BR.bin"), "wb") as f:
            f.write(swap.tobytes())
        sw = {"input": node(type="input", inputs="3,2,3", targets="preprocess"),
              "preprocess": node(inputs="3,2,3", kernel="1", filters="3", weight="SWAP_BR.bin",
                                 activation="linear,2,-1", targets="out"),
              "out": node(type="output", inputs="3,2,3")}
        x3 = rng.random((3, 2, 3)).astype(np.float32)
        y3 = run(load_model(write(sw, "swap", wmap="{}")), x3)["out"]
        if np.abs(y3 - (2 * x3[:, :, ::-1] - 1)).max() > 1e-6:
            raise MTError("self-check failed: separate weight file SWAP_BR.bin")
        lines.append("  loader: separate weight file (SWAP_BR.bin, 1x1, no bias) swaps channels 0 and 2: OK")

        def expect(label, model, wmap='{"c" : "0, 152",}', blob=None, *needles):
            try:
                load_model(write(model, "bad", wmap=wmap, blob=blob))
            except MTError as e:
                msg = str(e)
                if all(nd in msg for nd in needles):
                    lines.append(f"  error ({label}): {msg.replace(tmp + os.sep, '')}")
                    return
                raise MTError(f"self-check failed: {label}: message lacks {needles}: {msg}")
            raise MTError(f"self-check failed: {label}: no error")

        def mod(name, **kw):
            m = {k: dict(v) if isinstance(v, dict) else v for k, v in good.items()}
            for k, v in kw.items():
                if v is None:
                    m[name].pop(k, None)
                else:
                    m[name][k] = v
            return m

        J = '{"c" : "0, 152",}'
        expect("missing key", mod("c", kernel=None), J, None, "bad.plist", "node 'c'", "key 'kernel'", "missing")
        expect("unknown type", mod("c", type="convolution2d"), J, None, "node 'c'", "key 'type'", "convolution2d")
        expect("empty type", mod("c", type=""), J, None, "node 'c'", "key 'type'")
        expect("unknown activation", mod("c", activation="gelu"), J, None, "node 'c'", "key 'activation'", "gelu")
        expect("unknown target", mod("c", targets="outt", indices="0"), J, None, "node 'c'", "key 'targets'", "outt")
        expect("indices length", mod("c", indices="0,1"), J, None, "node 'c'", "key 'indices'")
        expect("weight range outside the blob", good, '{"c": "8,152"}', None, "node 'c'", "key 'weight'",
               "outside", "bad.bin")
        expect("wrong weight count", good, '{"c": "0,148"}', None, "node 'c'", "key 'weight'", "148")
        expect("weight not in map", good, '{"d": "0,152"}', None, "node 'c'", "key 'weight'", "bad.json")
        expect("declared shape mismatch", mod("out", inputs="4,4,3"), J, None, "node 'out'", "key 'inputs'")
        cyc = mod("c", targets="c2,out", indices="0,0")
        cyc["c2"] = node(type="neuron", inputs="4,4,2", activation="none", targets="c")
        expect("cycle", cyc, J, None, "cycle", "c -> c2 -> c")
        two = mod("input")
        two["in2"] = node(type="input", inputs="4,4,2", targets="c")
        expect("two inputs", two, J, None, "bad.plist", "exactly one node of type 'input'")
        expect("trailing garbage JSON", good, '{"c": "0,152"', None, "bad.json", "not valid JSON")
    return lines


# ----------------------------------------------------------------------------------------------

def _safe_name(name):
    return name.replace("/", "_").replace("\\", "_") or "_"


def write_outputs(model, outs, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for k, v in outs.items():
        tmp = os.path.join(out_dir, _safe_name(k) + ".f32.tmp")
        np.asarray(v, dtype="<f4").tofile(tmp)
        os.replace(tmp, os.path.join(out_dir, _safe_name(k) + ".f32"))
    body = ",\n".join(f" {json.dumps(v)}: {json.dumps(list(model.nodes[v].shape))}" for v in model.order)
    with open(os.path.join(out_dir, "shapes.json.tmp"), "w") as f:
        f.write("{\n" + body + "\n}\n")
    os.replace(os.path.join(out_dir, "shapes.json.tmp"), os.path.join(out_dir, "shapes.json"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", help="MODEL.plist")
    ap.add_argument("--input-f32", help="raw little-endian float32 HWC input")
    ap.add_argument("--output-dir", help="where <node>.f32 and shapes.json go")
    ap.add_argument("--all-layers", action="store_true", help="write every node's output")
    ap.add_argument("--precision", choices=("fp32", "fp16"), default="fp32")
    ap.add_argument("--weights-bin", help="weights blob (default: MODEL.bin)")
    ap.add_argument("--map", help="weight map (default: MODEL.json)")
    ap.add_argument("--self-check", action="store_true",
                    help="compare the fast kernels with direct loops over the formulas on small random cases")
    a = ap.parse_args(argv)
    try:
        if a.self_check:
            self_check()
            if not a.model:
                return 0
        if not a.model or not a.input_f32 or not a.output_dir:
            ap.error("MODEL.plist, --input-f32 and --output-dir are required (or --self-check)")
        model = load_model(a.model, a.map, a.weights_bin)
        try:
            x = np.fromfile(a.input_f32, dtype="<f4")
        except OSError as e:
            raise MTError(f"{a.input_f32}: cannot read: {e.strerror}")
        h, w, c = model.nodes[model.input].shape
        if x.size * 4 != os.path.getsize(a.input_f32) or x.size != h * w * c:
            raise MTError(f"{a.input_f32}: {os.path.getsize(a.input_f32)} bytes, expected {h * w * c * 4} "
                          f"(float32 {h}x{w}x{c}, the shape of input node '{model.input}')")
        outs = run(model, x.reshape(h, w, c), a.precision, a.all_layers)
        write_outputs(model, outs, a.output_dir)
        for k, v in outs.items():
            if model.nodes[k].type == "output":
                print(f"{k}: shape {list(v.shape)} min {float(v.min()):.6g} max {float(v.max()):.6g}")
    except MTError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
