"""What make_models.py and reference.py share: paths, the photos, hashing, tensor descriptions.

Imports only numpy and pillow at module level (TensorFlow is imported where it is needed), so that
reference.py starts fast.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess

import numpy as np

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CACHE = os.path.join(REPO, "models", "cache")
# FRAMEGRAPH_QUANT_OUT: another folder for the models (e.g. to time a cold run beside the real one).
OUT = os.path.realpath(os.environ.get("FRAMEGRAPH_QUANT_OUT") or os.path.join(CACHE, "quantized"))
MANIFEST = os.path.join(OUT, "manifest.json")
BSDS = os.path.realpath(os.path.join(REPO, "..", "shared", "data", "bsds500"))
PORTRAIT = os.path.join(REPO, "samples", "media", "portrait.mp4")
PHOTOS_FROM = os.environ.get("FRAMEGRAPH_QUANT_PHOTOS", "auto")


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def center_square(img, size: int) -> np.ndarray:
    """The largest centred square of a PIL image, resized to size×size (bilinear), as uint8 HWC RGB."""
    from PIL import Image
    img = img.convert("RGB")
    w, h = img.size
    s = min(w, h)
    left, top = (w - s) // 2, (h - s) // 2
    img = img.crop((left, top, left + s, top + s)).resize((size, size), Image.BILINEAR)
    return np.asarray(img, dtype=np.uint8)


def photo_files(split: str = "train") -> list[str]:
    return sorted(glob.glob(os.path.join(BSDS, split, "*.jpg")))


def photo_source() -> str:
    """Where the photos come from: "bsds500" when ../shared/data/bsds500 has train and val photos,
    else "samples" (frames of samples/media/portrait.mp4). FRAMEGRAPH_QUANT_PHOTOS=bsds500|samples
    forces one (samples: what a fresh clone without ../shared gets)."""
    if PHOTOS_FROM not in ("auto", "bsds500", "samples"):
        raise SystemExit(f"FRAMEGRAPH_QUANT_PHOTOS={PHOTOS_FROM}: auto, bsds500 or samples")
    have_bsds = bool(photo_files("train")) and bool(photo_files("val"))
    if PHOTOS_FROM == "bsds500" and not have_bsds:
        raise SystemExit(f"FRAMEGRAPH_QUANT_PHOTOS=bsds500 but {BSDS}/train, val have no photos")
    if PHOTOS_FROM == "bsds500" or (PHOTOS_FROM == "auto" and have_bsds):
        return "bsds500"
    if not os.path.exists(PORTRAIT):
        raise SystemExit("no photos: need ../shared/data/bsds500 (train, val) or samples/media/portrait.mp4 "
                         "(tools/make-samples.sh makes it)")
    return "samples"


# Frames of the sample clip stand in for BSDS500: "train" frames 0, 3, 6, … and "val" frames 1, 4, 7, …
# (never the same frame in both), each split taken in the order k·37 mod (frames/3) so that its
# first few frames are spread over the whole clip (the first 8 val frames: 1, 112, 223, 34, 145, …).
CLIP_STRIDE = 37
_FRAMES: dict[int, np.ndarray] = {}


def _clip_info() -> tuple[int, int, int]:
    """(width, height, frame count) of the sample clip, from its container (no decoding)."""
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "stream=width,height,nb_frames", "-of", "json", PORTRAIT],
                       check=True, capture_output=True, text=True)
    s = json.loads(r.stdout)["streams"][0]
    return int(s["width"]), int(s["height"]), int(s["nb_frames"])


def clip_frame_numbers(split: str, count: int) -> list[int]:
    _, _, total = _clip_info()
    slots = total // 3
    stride = CLIP_STRIDE
    while np.gcd(stride, slots) != 1:
        stride += 1
    first = {"train": 0, "val": 1}[split]
    return [3 * ((i * stride) % slots) + first for i in range(min(count, slots))]


def yuv420_to_rgb(buf: bytes, w: int, h: int) -> np.ndarray:
    """One yuv420p frame as uint8 [h, w, 3] RGB: BT.601 limited range (what the clip was encoded
    with), chroma repeated 2×2, in float64 then rounded. Done here rather than by ffmpeg's swscale
    (whose SIMD paths and defaults vary between versions): H.264 decoding is bit-exact, so the same
    clip gives the same bytes on any machine."""
    a = np.frombuffer(buf, np.uint8)
    cw, ch = (w + 1) // 2, (h + 1) // 2
    y = a[:w * h].reshape(h, w).astype(np.float64)
    u = a[w * h:w * h + cw * ch].reshape(ch, cw).repeat(2, 0).repeat(2, 1)[:h, :w].astype(np.float64)
    v = a[w * h + cw * ch:w * h + 2 * cw * ch].reshape(ch, cw).repeat(2, 0).repeat(2, 1)[:h, :w].astype(np.float64)
    yy = (y - 16.0) * (255.0 / 219.0)
    cb = (u - 128.0) * (255.0 / 224.0)
    cr = (v - 128.0) * (255.0 / 224.0)
    rgb = np.stack([yy + 1.402 * cr, yy - 0.344136 * cb - 0.714136 * cr, yy + 1.772 * cb], axis=-1)
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def clip_frames(numbers: list[int]) -> list[np.ndarray]:
    """Frames `numbers` (0-based, decoding order) of samples/media/portrait.mp4 as RGB [H, W, 3]."""
    missing = set(numbers) - _FRAMES.keys()
    if missing:
        w, h, _ = _clip_info()
        size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
        p = subprocess.Popen(["ffmpeg", "-nostdin", "-v", "error", "-i", PORTRAIT, "-map", "0:v:0", "-vsync", "passthrough",
                              "-frames:v", str(max(missing) + 1), "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"],
                             stdout=subprocess.PIPE)
        n = 0
        while missing:
            buf = p.stdout.read(size)
            if len(buf) < size:
                break
            if n in missing:
                _FRAMES[n] = yuv420_to_rgb(buf, w, h)
                missing.discard(n)
            n += 1
        p.stdout.close()
        p.wait()
        if missing:
            raise SystemExit(f"{PORTRAIT}: no frames {sorted(missing)[:5]} (it has {n})")
    return [_FRAMES[n] for n in numbers]


def images(split: str, count: int) -> tuple[list[tuple[str, "object"]], str]:
    """`count` photos of `split` (train: calibration, val: references and checks) as (name, PIL
    image) and a description: BSDS500's first `count` by file name, or frames of the sample clip
    (name portrait_fNNNN, the frame number), as photo_source() says."""
    from PIL import Image
    if photo_source() == "bsds500":
        files = photo_files(split)[:count]
        out = []
        for f in files:
            img = Image.open(f)
            img.load()
            out.append((os.path.splitext(os.path.basename(f))[0], img))
        return out, f"BSDS500 {split}: {len(files)} photos ({os.path.basename(files[0])} … {os.path.basename(files[-1])}, sorted)"
    numbers = clip_frame_numbers(split, count)
    frames = clip_frames(numbers)
    shown = ", ".join(str(n) for n in numbers[:4]) + (", …" if len(numbers) > 4 else "")
    return [(f"portrait_f{n:04d}", Image.fromarray(f)) for n, f in zip(numbers, frames)], \
        (f"samples/media/portrait.mp4 (sha256 {sha256(PORTRAIT)[:16]}…) {split}: {len(numbers)} frames ({shown}; "
         f"{'0, 3, 6' if split == 'train' else '1, 4, 7'}, … taken k·{CLIP_STRIDE} mod slots), yuv420p → RGB BT.601 here")


def photos(size: int, count: int, split: str = "train") -> tuple[np.ndarray, str]:
    """`count` photos as uint8 [count, size, size, 3] (centre square, bilinear) and where they came from."""
    imgs, desc = images(split, count)
    return np.stack([center_square(img, size) for _, img in imgs]), f"{desc}, centre square, bilinear to {size}"


def photo_fingerprint(counts: dict[str, int]) -> dict:
    """What the photos are, cheaply (no decoding): for BSDS500 a SHA-256 over the names and bytes
    of the first counts[split] photos of each split; for the clip its SHA-256."""
    src = photo_source()
    if src == "bsds500":
        h = hashlib.sha256()
        for split, count in sorted(counts.items()):
            for f in photo_files(split)[:count]:
                h.update(f"{split}/{os.path.basename(f)} {sha256(f)}\n".encode())
        return {"source": src, "photos": counts, "sha256": h.hexdigest()}
    return {"source": src, "clip": os.path.relpath(PORTRAIT, REPO), "sha256": sha256(PORTRAIT)}


def safe_name(name: str) -> str:
    """An output's file name as `framegraph model run` makes it (ModelCommand.outputFile): every
    character that is not a letter, digit, '.', '_' or '-' becomes '_'."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def litert_quant(detail: dict) -> dict | None:
    """The quantization of a LiteRT tensor detail, or None for an unquantized tensor."""
    qp = detail.get("quantization_parameters") or {}
    scales = np.asarray(qp.get("scales", []), np.float64)
    if scales.size == 0:
        return None
    zps = np.asarray(qp.get("zero_points", []), np.int64)
    return {"scale": [float(s) for s in scales], "zero_point": [int(z) for z in zps],
            "axis": int(qp.get("quantized_dimension", 0)) if scales.size > 1 else None}


def dequantize(q: np.ndarray, quant: dict | None, axis_len: int | None = None) -> np.ndarray:
    """(q − zero_point) × scale in float32 (per tensor, or per axis when quant has several scales)."""
    if quant is None:
        return np.asarray(q, np.float32)
    scale = np.asarray(quant["scale"], np.float64)
    zp = np.asarray(quant["zero_point"], np.float64)
    x = q.astype(np.float64)
    if scale.size > 1:
        shape = [1] * q.ndim
        shape[quant["axis"]] = scale.size
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return ((x - zp) * scale).astype(np.float32)


def load_manifest() -> dict:
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            return json.load(f)
    return {"models": {}}


def write_atomically(path: str, data: bytes) -> None:
    """Write beside the target, then rename: a reader never sees half a file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def litert_delegation(it) -> dict:
    """What LiteRT's default XNNPACK delegate took in an allocated Interpreter: the partitions, and
    the model's nodes left to LiteRT's own kernels (by operator name). A partition's nodes are
    found by walking back from its outputs to its inputs through the nodes that produce them."""
    ops = it._get_ops_details()
    names = [o["op_name"] for o in ops]
    model_nodes = [i for i, n in enumerate(names) if n != "DELEGATE"]
    producer = {}
    for i in model_nodes:
        for t in ops[i]["outputs"]:
            producer[int(t)] = i
    covered = set()
    for d in (i for i, n in enumerate(names) if n == "DELEGATE"):
        stop = {int(t) for t in ops[d]["inputs"]}
        stack = [int(t) for t in ops[d]["outputs"]]
        while stack:
            t = stack.pop()
            if t in stop or t not in producer or producer[t] in covered:
                continue
            covered.add(producer[t])
            stack.extend(int(u) for u in ops[producer[t]]["inputs"] if u >= 0)
    left = {}
    for i in model_nodes:
        if i not in covered:
            left[names[i]] = left.get(names[i], 0) + 1
    return {"partitions": names.count("DELEGATE"), "model_nodes": len(model_nodes),
            "delegated_nodes": len(covered), "not_delegated": dict(sorted(left.items()))}


def tflite_metadata_normalization(path: str) -> tuple[float, float] | None:
    """(mean, std) of a TFLite model's first input from its TFLITE_METADATA (the TFLite Support
    metadata schema, metadata_schema.fbs: ModelMetadata → subgraph_metadata[0] →
    input_tensor_metadata[0] → process_units → NormalizationOptions {mean, std}), first channel; None
    when the model has none. Read with flatbuffers' generic tables: the schema's Python module is
    not in the pinned packages."""
    import flatbuffers
    import tflite
    from flatbuffers import number_types as nt
    from flatbuffers.table import Table
    buf = open(path, "rb").read()
    m = tflite.Model.GetRootAsModel(buf, 0)
    data = None
    for i in range(m.MetadataLength()):
        if m.Metadata(i).Name() == b"TFLITE_METADATA":
            b = m.Buffers(m.Metadata(i).Buffer())
            data = bytes(b.DataAsNumpy()) if b.DataLength() else None
    if not data:
        return None
    t = Table(bytearray(data), flatbuffers.encode.Get(flatbuffers.packer.uoffset, data, 0))

    def field(tab: Table, index: int) -> int:
        return tab.Offset(4 + 2 * index)

    def tables(tab: Table, index: int) -> list[Table]:
        o = field(tab, index)
        if not o:
            return []
        start = tab.Vector(o)
        return [Table(tab.Bytes, tab.Indirect(start + 4 * k)) for k in range(tab.VectorLen(o))]

    def floats(tab: Table, index: int) -> list[float]:
        o = field(tab, index)
        return [tab.Get(nt.Float32Flags, tab.Vector(o) + 4 * k) for k in range(tab.VectorLen(o))] if o else []

    subgraphs = tables(t, 3)                                    # ModelMetadata.subgraph_metadata
    inputs = tables(subgraphs[0], 2) if subgraphs else []       # SubGraphMetadata.input_tensor_metadata
    for unit in (tables(inputs[0], 4) if inputs else []):       # TensorMetadata.process_units
        o = field(unit, 0)                                      # ProcessUnit.options_type
        if o and unit.Get(nt.Uint8Flags, o + unit.Pos) == 1:    # NormalizationOptions
            opts = Table(bytearray(), 0)
            unit.Union(opts, field(unit, 1))
            mean, std = floats(opts, 0), floats(opts, 1)
            if mean and std:
                return float(mean[0]), float(std[0])
    return None
