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
import tempfile

import numpy as np

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CACHE = os.path.join(REPO, "models", "cache")
OUT = os.path.join(CACHE, "quantized")
MANIFEST = os.path.join(OUT, "manifest.json")
BSDS = os.path.realpath(os.path.join(REPO, "..", "shared", "data", "bsds500"))
PORTRAIT = os.path.join(REPO, "samples", "media", "portrait.mp4")
ASTRONAUT = os.path.join(REPO, "samples", "media", "cache", "astronaut.png")


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


def photos(size: int, count: int, split: str = "train") -> tuple[np.ndarray, str]:
    """`count` real photos as uint8 [count, size, size, 3] and where they came from.

    BSDS500 (../shared/data/bsds500/SPLIT/*.jpg, sorted by name, centre square) when present; else
    frames of samples/media/portrait.mp4 (ffmpeg, 2 per second); else the scikit-image astronaut
    (samples/media/cache/astronaut.png, made by tools/make-samples.sh) with shifted crops."""
    from PIL import Image
    files = photo_files(split)
    if files:
        files = files[:count]
        return np.stack([center_square(Image.open(f), size) for f in files]), \
            f"BSDS500 {split}: {len(files)} photos ({os.path.basename(files[0])} … {os.path.basename(files[-1])}, sorted), centre square, bilinear to {size}"
    if os.path.exists(PORTRAIT):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["ffmpeg", "-v", "error", "-i", PORTRAIT, "-vf", "fps=2", "-frames:v", str(count),
                            os.path.join(tmp, "f%04d.png")], check=True)
            frames = sorted(glob.glob(os.path.join(tmp, "*.png")))
            if frames:
                return np.stack([center_square(Image.open(f), size) for f in frames]), \
                    f"samples/media/portrait.mp4: {len(frames)} frames at 2 fps, centre square, bilinear to {size}"
    if os.path.exists(ASTRONAUT):
        img = Image.open(ASTRONAUT).convert("RGB")
        w, h = img.size
        out = []
        for i in range(count):
            s = int(min(w, h) * (0.6 + 0.4 * ((i * 37) % 11) / 10))
            x0, y0 = (i * 53) % (w - s + 1), (i * 29) % (h - s + 1)
            crop = img.crop((x0, y0, x0 + s, y0 + s))
            if i % 2:
                crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
            out.append(center_square(crop, size))
        return np.stack(out), f"samples/media/cache/astronaut.png: {count} shifted crops, bilinear to {size}"
    raise SystemExit("no photos: need ../shared/data/bsds500, samples/media/portrait.mp4 or "
                     "samples/media/cache/astronaut.png (tools/make-samples.sh)")


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
