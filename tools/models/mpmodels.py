"""Shared helpers for FrameGraph's Python model tools (goldens, validation, benchmarks).

The MediaPipe models, their input normalisation and where it comes from, frame
decoding with the ffmpeg CLI, the simple resizes used to make golden inputs,
and a thin LiteRT runner (with or without the XNNPACK delegate).
"""
from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import subprocess
from dataclasses import dataclass, field

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_CACHE = os.path.join(REPO, "models", "cache")
SHARED = os.path.abspath(os.path.join(REPO, "..", "shared"))


@dataclass(frozen=True)
class ModelSpec:
    name: str            # file stem, e.g. "selfie_segmentation"
    sha256: str
    width: int
    height: int
    scale: float         # float = u8 * scale + offset
    offset: float
    norm_source: str     # where MediaPipe says so
    fit: str             # how a 640x480 frame becomes the model input: stretch | letterbox | face-crop
    outputs: tuple = field(default_factory=tuple)

    @property
    def filename(self) -> str:
        return self.name + ".tflite"


# Normalisation: verified in the mediapipe 0.10.21 wheel itself (the graphs it
# runs), and in MediaPipe's graph sources (mediapipe/modules/...):
#  - selfie: wheel file mediapipe/modules/selfie_segmentation/selfie_segmentation_cpu.binarypb
#    (= selfie_segmentation_cpu.pbtxt): ImageToTensorCalculator 256x256 / 256x144,
#    keep_aspect_ratio: false, output_tensor_float_range {min: 0 max: 1}.
#  - face detection short range: subgraph "FaceDetection" registered in the wheel's
#    _framework_bindings.so (= mediapipe/modules/face_detection/face_detection.pbtxt,
#    used by face_detection_short_range_cpu.pbtxt with tensor 128x128):
#    keep_aspect_ratio: true, output_tensor_float_range {min: -1 max: 1}.
#  - face landmark: subgraph "FaceLandmarkCpu" in the same .so (= face_landmark_cpu.pbtxt):
#    ImageToTensorCalculator 192x192, output_tensor_float_range {min: 0 max: 1}
#    (input is the face ROI cropped from the frame).
_SELFIE_SRC = ("mediapipe 0.10.21 wheel: mediapipe/modules/selfie_segmentation/selfie_segmentation_cpu.binarypb "
               "(selfie_segmentation_cpu.pbtxt): ImageToTensorCalculator output_tensor_float_range {min: 0.0 max: 1.0}, "
               "keep_aspect_ratio: false")
MODELS: dict[str, ModelSpec] = {
    m.name: m for m in [
        ModelSpec("selfie_segmentation", "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c",
                  256, 256, 1 / 255, 0.0, _SELFIE_SRC, "stretch", ("activation_10",)),
        ModelSpec("selfie_segmentation_landscape", "a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd",
                  256, 144, 1 / 255, 0.0, _SELFIE_SRC, "stretch", ("segment_back",)),
        ModelSpec("face_detection_short_range", "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8",
                  128, 128, 1 / 127.5, -1.0,
                  "mediapipe 0.10.21 wheel: subgraph 'FaceDetection' (face_detection.pbtxt, instantiated by "
                  "face_detection_short_range_cpu.pbtxt with 128x128) embedded in mediapipe/python/_framework_bindings.so: "
                  "ImageToTensorCalculator output_tensor_float_range {min: -1.0 max: 1.0}, keep_aspect_ratio: true",
                  "letterbox", ("regressors", "classificators")),
        ModelSpec("face_landmark", "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
                  192, 192, 1 / 255, 0.0,
                  "mediapipe 0.10.21 wheel: subgraph 'FaceLandmarkCpu' (face_landmark_cpu.pbtxt) embedded in "
                  "mediapipe/python/_framework_bindings.so: ImageToTensorCalculator 192x192 "
                  "output_tensor_float_range {min: 0.0 max: 1.0} on the face ROI",
                  "face-crop", ("conv2d_21", "conv2d_31")),
    ]
}


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def model_path(name_or_path: str, cache: str | None = None) -> str:
    """Accepts a model name ('selfie_segmentation'), a file name, or a path."""
    if os.path.exists(name_or_path):
        return name_or_path
    stem = os.path.basename(name_or_path)
    stem = stem[:-7] if stem.endswith(".tflite") else stem
    for d in [cache or DEFAULT_CACHE, os.path.join(SHARED, "models", "mediapipe")]:
        p = os.path.join(d, stem + ".tflite")
        if os.path.exists(p):
            return p
    raise FileNotFoundError(f"model {name_or_path!r} not found (run tools/models/fetch_mediapipe_models.sh)")


def spec_for(path: str) -> ModelSpec | None:
    stem = os.path.basename(path)
    stem = stem[:-7] if stem.endswith(".tflite") else stem
    return MODELS.get(stem)


def versions() -> dict[str, str]:
    out = {}
    for pkg in ["ai-edge-litert", "numpy", "pillow", "onnxruntime", "onnx", "tflite"]:
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


# ---------------------------------------------------------------- frames
def ffmpeg_version() -> str:
    try:
        return subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    except OSError:
        return "unavailable"


def decode_frame(clip: str, index: int) -> np.ndarray:
    """Frame `index` (0-based, decode order == display order for these clips) as HxWx3 uint8 RGB24."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height", "-of", "csv=p=0", clip], capture_output=True, text=True, check=True)
    w, h = (int(x) for x in probe.stdout.strip().split(",")[:2])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", clip, "-vf", f"select=eq(n\\,{index})", "-vsync", "0",
                          "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "pipe:1"],
                         capture_output=True, check=True).stdout
    if len(raw) != w * h * 3:
        raise RuntimeError(f"{clip}: frame {index} not decoded ({len(raw)} bytes)")
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3).copy()


RESIZE_METHOD = ("Pillow Image.resize(..., Image.BILINEAR): bilinear (triangle) filter whose support widens "
                 "with the reduction factor, i.e. antialiased, pixel-centre aligned")


def resize(img: np.ndarray, w: int, h: int) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR))


def letterbox(img: np.ndarray, w: int, h: int) -> tuple[np.ndarray, dict]:
    """Keep aspect ratio, centre, pad with black (u8 0), as ImageToTensorCalculator keep_aspect_ratio +
    BORDER_ZERO does. Returns the image and the content rectangle in output pixels."""
    ih, iw = img.shape[:2]
    s = min(w / iw, h / ih)
    cw, ch = round(iw * s), round(ih * s)
    x0, y0 = (w - cw) // 2, (h - ch) // 2
    out = np.zeros((h, w, 3), np.uint8)
    out[y0:y0 + ch, x0:x0 + cw] = resize(img, cw, ch)
    return out, {"x": x0, "y": y0, "width": cw, "height": ch}


def crop_square(img: np.ndarray, cx: float, cy: float, side: float) -> tuple[np.ndarray, dict]:
    """Axis-aligned square crop around (cx, cy) in pixels; outside the frame is black."""
    ih, iw = img.shape[:2]
    s = int(round(side))
    x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
    out = np.zeros((s, s, 3), np.uint8)
    sx0, sy0, sx1, sy1 = max(x0, 0), max(y0, 0), min(x0 + s, iw), min(y0 + s, ih)
    out[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = img[sy0:sy1, sx0:sx1]
    return out, {"x": x0, "y": y0, "width": s, "height": s}


def normalise(u8: np.ndarray, spec: ModelSpec) -> np.ndarray:
    x = u8.astype(np.float32) * np.float32(spec.scale) + np.float32(spec.offset)
    return x[None]  # NHWC batch 1


# ---------------------------------------------------------------- BlazeFace (short range) decoding
def blazeface_anchors() -> np.ndarray:
    """[896, 2] anchor centres (x, y) in [0,1] for face_detection_short_range: SsdAnchorsCalculator with
    num_layers 4, strides 8,16,16,16, 128x128 input, anchor_offset 0.5, fixed_anchor_size, 1 aspect ratio
    + interpolated scale -> 2 anchors per cell at stride 8 (16x16) and 6 per cell at stride 16 (8x8)."""
    out = []
    for grid, per_cell in [(16, 2), (8, 6)]:
        for y in range(grid):
            for x in range(grid):
                out += [((x + 0.5) / grid, (y + 0.5) / grid)] * per_cell
    return np.array(out, np.float32)


def blazeface_best(regressors: np.ndarray, classificators: np.ndarray, size: int = 128) -> dict:
    """Highest-scoring detection (no NMS) in normalised tensor coordinates."""
    a = blazeface_anchors()
    r = regressors.reshape(-1, 16)
    logits = np.clip(classificators.reshape(-1).astype(np.float64), -100, 100)
    score = 1 / (1 + np.exp(-logits))
    i = int(np.argmax(score))
    cx, cy = r[i, 0] / size + a[i, 0], r[i, 1] / size + a[i, 1]
    w, h = r[i, 2] / size, r[i, 3] / size
    kps = [[float(r[i, 4 + 2 * k] / size + a[i, 0]), float(r[i, 5 + 2 * k] / size + a[i, 1])] for k in range(6)]
    return {"anchor": i, "score": float(score[i]), "cx": float(cx), "cy": float(cy), "w": float(w), "h": float(h),
            "keypoints": kps}


# ---------------------------------------------------------------- LiteRT
def litert_interpreter(path: str, xnnpack: bool = True, threads: int = 1):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    rt = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_path=path, num_threads=threads, experimental_op_resolver_type=rt)
    it.allocate_tensors()
    return it


def litert_run(path: str, x: np.ndarray, xnnpack: bool = True, threads: int = 1, it=None) -> dict[str, np.ndarray]:
    """Outputs by TFLite tensor name, in the model's output order."""
    it = it or litert_interpreter(path, xnnpack, threads)
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], x.astype(np.float32).reshape(d["shape"]))
    it.invoke()
    return {o["name"]: it.get_tensor(o["index"]).copy() for o in it.get_output_details()}


def onnxruntime_run(onnx_path: str, x: np.ndarray) -> dict[str, np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    res = sess.run(None, {sess.get_inputs()[0].name: x.astype(np.float32)})
    return {o.name: r for o, r in zip(sess.get_outputs(), res)}


def max_abs_diff(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, float]:
    return {k: float(np.max(np.abs(a[k].astype(np.float64) - b[k].reshape(a[k].shape).astype(np.float64))))
            for k in a}
