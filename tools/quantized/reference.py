#!/usr/bin/env python3
"""Run a model in its reference runtime and write every output the way `framegraph model run` does.

  .venv-quant/bin/python tools/quantized/reference.py MODEL (--input-rgb FILE | --input-f32 FILE | --photo JPG)
      --output-dir DIR [--part NAME] [--scale S --offset O] [--no-xnnpack] [--threads N]
  .venv-quant/bin/python tools/quantized/reference.py MODEL --bench N [--threads 1] [--cpu 0]

MODEL is a .tflite (LiteRT, ai_edge_litert.interpreter), an .onnx (onnxruntime, CPU provider) or a
.task bundle with --part NAME (the zip member NAME or NAME.tflite, e.g. face_detector). A bare name
is looked up in models/cache/quantized/ then models/cache/.

Input, one of:
  --input-rgb FILE  raw uint8 HWC RGB of the model's input size (the caller resizes). For a uint8
                    input the bytes are the tensor; for an int8 input each byte minus 128 (the
                    tensor's own scale and zero point then give the value); for a float input
                    value = byte × scale + offset, with scale/offset from --scale/--offset, else
                    from the manifest (models/cache/quantized/manifest.json: input_normalization),
                    else from the model's own metadata (ONNX metadata_props normalization_mean/std,
                    TFLite metadata NormalizationOptions; value = (byte − mean)/std), else byte/255.
  --input-f32 FILE  the input tensor itself as raw little-endian float32 (quantized inputs are
                    quantized with the tensor's scale/zero point, round half away from zero, clamped).
  --photo JPG       a photo, centre square resized to the input size (bilinear), then as --input-rgb;
                    DIR/input.rgb is written too.

Output, into --output-dir: for every model output, NAME.f32 (float32, dequantized when the tensor is
quantized: (q − zero_point) × scale, per axis where it has several scales) and, when the stored type
is not float32, NAME.raw (the stored values: int8/uint8/int32/int64/float16 bytes as they are), NAME made
safe for a file name as framegraph does (every character but letters, digits, '._-' → '_');
reference.json lists the runtime, inputs and outputs (shape, dtype, quantization, file names,
min/max/mean, non-finite count). ONNX 4-D outputs are written as the runtime gives them (NCHW);
reference.json says so ("layout"). TFLite_Detection_PostProcess's rows past num_detections (which
LiteRT's fast NMS leaves unwritten) are written as zeros; reference.json gives num_detections.

--bench N: N timed invocations (after 3 warm-up ones) on --threads threads (default 1), optionally
pinned to --cpu K; prints the median and the minimum in ms (set input, invoke, read outputs: one
step as a caller takes it).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qcommon as qc  # noqa: E402

# LiteRT tensor types as numpy names.
_NP = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "uint8": np.uint8,
       "int16": np.int16, "int32": np.int32, "int64": np.int64, "bool": np.bool_}


def resolve(model: str) -> str:
    if os.path.exists(model):
        return model
    for d in (qc.OUT, qc.CACHE):
        for ext in ("", ".tflite", ".onnx", ".task"):
            p = os.path.join(d, model + ext)
            if os.path.exists(p):
                return p
    raise SystemExit(f"reference.py: no model '{model}' (looked in the current folder, {qc.OUT}, {qc.CACHE})")


def extract_part(task: str, part: str, tmpdir: str) -> str:
    """The member `part` (or `part`.tflite) of a .task zip, written to tmpdir."""
    with zipfile.ZipFile(task) as z:
        names = z.namelist()
        for name in (part, part + ".tflite"):
            if name in names:
                path = os.path.join(tmpdir, os.path.basename(name))
                with open(path, "wb") as f:
                    f.write(z.read(name))
                return path
    raise SystemExit(f"reference.py: {task} has no part '{part}' (it has: {', '.join(names)})")


class Runner:
    """One model in its reference runtime: inputs()/outputs() describe tensors; run(feeds) → arrays."""

    def __init__(self, path: str, threads: int = 1, xnnpack: bool = True):
        self.path = path
        self.kind = "onnx" if path.endswith(".onnx") else "tflite"
        if self.kind == "onnx":
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            self.runtime = {"runtime": "onnxruntime", "version": _version("onnxruntime"), "provider": "CPUExecutionProvider",
                            "intra_op_num_threads": threads, "graph_optimization_level": "ORT_ENABLE_ALL (default)"}
        else:
            from ai_edge_litert.interpreter import Interpreter, OpResolverType
            rt = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
            self.it = Interpreter(model_path=path, num_threads=threads, experimental_op_resolver_type=rt)
            self.it.allocate_tensors()
            self.runtime = {"runtime": "LiteRT (ai-edge-litert)", "version": _version("ai-edge-litert"),
                            "op_resolver": rt.name, "num_threads": threads, "xnnpack": qc.litert_delegation(self.it)}

    def inputs(self) -> list[dict]:
        if self.kind == "onnx":
            return [{"name": i.name, "shape": [d if isinstance(d, int) else 1 for d in i.shape],
                     "dtype": _onnx_dtype(i.type), "quantization": None} for i in self.sess.get_inputs()]
        return [{"name": d["name"], "shape": [int(s) for s in d["shape"]], "dtype": np.dtype(d["dtype"]).name,
                 "quantization": qc.litert_quant(d), "index": d["index"]} for d in self.it.get_input_details()]

    def outputs(self) -> list[dict]:
        if self.kind == "onnx":
            return [{"name": o.name, "dtype": _onnx_dtype(o.type), "quantization": None} for o in self.sess.get_outputs()]
        return [{"name": d["name"], "dtype": np.dtype(d["dtype"]).name, "quantization": qc.litert_quant(d),
                 "index": d["index"]} for d in self.it.get_output_details()]

    def set(self, feeds: list[np.ndarray]) -> None:
        self._feeds = feeds
        if self.kind == "tflite":
            for d, x in zip(self.inputs(), feeds):
                self.it.set_tensor(d["index"], x)

    def invoke(self) -> list[np.ndarray]:
        if self.kind == "onnx":
            return self.sess.run(None, {i.name: x for i, x in zip(self.sess.get_inputs(), self._feeds)})
        self.it.invoke()
        return [self.it.get_tensor(d["index"]) for d in self.it.get_output_details()]

    def run(self, feeds: list[np.ndarray]) -> list[np.ndarray]:
        self.set(feeds)
        return [np.array(a) for a in self.invoke()]


def _version(package: str) -> str:
    import importlib.metadata
    return importlib.metadata.version(package)


def _onnx_dtype(t: str) -> str:
    return {"tensor(float)": "float32", "tensor(float16)": "float16", "tensor(uint8)": "uint8",
            "tensor(int8)": "int8", "tensor(int64)": "int64", "tensor(int32)": "int32"}.get(t, t)


def onnx_normalization(path: str) -> tuple[float, float] | None:
    """(mean, std) from an ONNX model's metadata_props normalization_mean/std, if it has them."""
    import onnxruntime as ort
    meta = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).get_modelmeta().custom_metadata_map
    if "normalization_mean" in meta and "normalization_std" in meta:
        return float(meta["normalization_mean"].split(",")[0]), float(meta["normalization_std"].split(",")[0])
    return None


def manifest_normalization(path: str) -> tuple[float, float] | None:
    entry = qc.load_manifest()["models"].get(os.path.basename(path))
    norm = (entry or {}).get("input_normalization")
    return (norm["mean"], norm["std"]) if norm else None


def image_hw(d: dict) -> tuple[int, int, bool]:
    """(height, width, nchw) of an image input [1,H,W,3] or [1,3,H,W]."""
    s = d["shape"]
    if len(s) == 4 and s[3] == 3:
        return s[1], s[2], False
    if len(s) == 4 and s[1] == 3:
        return s[2], s[3], True
    raise SystemExit(f"reference.py: input '{d['name']}' {s} is not an image [1,H,W,3] or [1,3,H,W]")


def feed_from_rgb(rgb: bytes, d: dict, path: str, scale: float | None, offset: float | None) -> tuple[np.ndarray, dict]:
    h, w, nchw = image_hw(d)
    if len(rgb) != h * w * 3:
        raise SystemExit(f"reference.py: --input-rgb has {len(rgb)} bytes; input '{d['name']}' {d['shape']} needs {h * w * 3} (uint8 HWC)")
    b = np.frombuffer(rgb, np.uint8).reshape(1, h, w, 3)
    if d["dtype"] == "uint8":
        x, how = b, "bytes as the uint8 tensor"
    elif d["dtype"] == "int8":
        x, how = (b.astype(np.int16) - 128).astype(np.int8), "byte − 128 as the int8 tensor"
    else:
        if scale is None:
            norm = manifest_normalization(path) or (onnx_normalization(path) if path.endswith(".onnx")
                                                    else qc.tflite_metadata_normalization(path))
            if norm:
                scale, offset = 1.0 / norm[1], -norm[0] / norm[1]
            else:
                scale, offset = 1.0 / 255.0, 0.0
        offset = 0.0 if offset is None else offset
        x = (b.astype(np.float32) * np.float32(scale) + np.float32(offset)).astype(_NP[d["dtype"]])
        how = f"byte × {scale!r} + {offset!r}"
    if nchw:
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    feed = {"from": "rgb", "how": how}
    if d["dtype"] not in ("uint8", "int8"):
        feed.update(scale=float(scale), offset=float(offset))   # value = byte × scale + offset
    return x, feed


def feed_from_f32(raw: bytes, d: dict) -> tuple[np.ndarray, dict]:
    n = int(np.prod(d["shape"]))
    if len(raw) != 4 * n:
        raise SystemExit(f"reference.py: --input-f32 has {len(raw)} bytes; input '{d['name']}' {d['shape']} needs {4 * n}")
    v = np.frombuffer(raw, np.float32).reshape(d["shape"])
    q = d["quantization"]
    if q is None:
        return v.astype(_NP[d["dtype"]]), {"from": "f32", "how": "as is"}
    info = np.iinfo(_NP[d["dtype"]])
    r = v.astype(np.float64) / q["scale"][0]
    r = np.sign(r) * np.floor(np.abs(r) + 0.5) + q["zero_point"][0]
    return np.clip(r, info.min, info.max).astype(_NP[d["dtype"]]), {"from": "f32", "how": "quantized (round half away from zero)"}


def stats(a: np.ndarray) -> dict:
    f = a.astype(np.float64)
    finite = np.isfinite(f)
    return {"min": float(f[finite].min()) if finite.any() else None, "max": float(f[finite].max()) if finite.any() else None,
            "mean": float(f[finite].mean()) if finite.any() else None, "non_finite": int((~finite).sum())}


def write_outputs(runner: Runner, arrays: list[np.ndarray], out_dir: str, extra: dict) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    detections = _detections(arrays)
    if detections is not None:
        # Rows past num_detections hold whatever LiteRT's buffers held (its fast NMS does not
        # write them): zeros here, so that the same model and input give the same bytes.
        arrays = [a.copy() for a in arrays]
        for a in arrays:
            if a.ndim >= 2 and a.shape[1] >= detections:
                a[:, detections:] = 0
    outs = []
    for d, a in zip(runner.outputs(), arrays):
        name = qc.safe_name(d["name"])
        f32 = qc.dequantize(a, d["quantization"]) if d["quantization"] else a.astype(np.float32)
        entry = {"name": d["name"], "shape": list(a.shape), "dtype": a.dtype.name, "quantization": d["quantization"],
                 "f32": f"{name}.f32", **stats(f32)}
        if runner.kind == "onnx" and a.ndim == 4:
            entry["layout"] = "NCHW (as onnxruntime gives it)"
        qc.write_atomically(os.path.join(out_dir, f"{name}.f32"), np.ascontiguousarray(f32, "<f4").tobytes())
        if a.dtype != np.float32:
            qc.write_atomically(os.path.join(out_dir, f"{name}.raw"), np.ascontiguousarray(a).tobytes())
            entry["raw"] = f"{name}.raw"
        outs.append(entry)
    if detections is not None:
        # TFLite_Detection_PostProcess: only the first num_detections rows are written (LiteRT's
        # fast NMS leaves the rest of its output buffers as they were: zeroed above).
        for entry, a in zip(outs, arrays):
            if a.ndim >= 2 and a.shape[1] >= detections:
                entry["valid_rows"] = detections
                entry.update({f"valid_{k}": v for k, v in stats(a[:, :detections].astype(np.float32)).items()})
        extra = {**extra, "num_detections": detections,
                 "note": "rows past num_detections are not written by the op (written here as zeros): compare only the first num_detections"}
    report = {"model": os.path.relpath(runner.path, qc.REPO) if runner.path.startswith(qc.REPO) else runner.path,
              "model_sha256": qc.sha256(runner.path), **runner.runtime, **extra, "outputs": outs}
    qc.write_atomically(os.path.join(out_dir, "reference.json"), (json.dumps(report, indent=1) + "\n").encode())
    return report


def _detections(arrays: list[np.ndarray]) -> int | None:
    """num_detections when the outputs are TFLite_Detection_PostProcess's (boxes [1,K,4], classes
    [1,K], scores [1,K], num [1], in any order), else None."""
    if len(arrays) != 4:
        return None
    nums = [a for a in arrays if a.shape == (1,) and a.dtype == np.float32]
    boxes = [a for a in arrays if a.ndim == 3 and a.shape[0] == 1 and a.shape[2] == 4]
    if len(nums) != 1 or len(boxes) != 1:
        return None
    k = boxes[0].shape[1]
    if sum(1 for a in arrays if a.shape == (1, k)) != 2:
        return None
    n = float(nums[0][0])
    return int(n) if np.isfinite(n) and 0 <= n <= k else None


def reference(path: str, rgb: bytes | None, out_dir: str, *, f32: bytes | None = None, threads: int = 1,
              xnnpack: bool = True, scale: float | None = None, offset: float | None = None) -> dict:
    """Run `path` on one input and write its outputs to out_dir (what the command line does)."""
    runner = Runner(path, threads, xnnpack)
    ins = runner.inputs()
    if len(ins) != 1:
        raise SystemExit(f"reference.py: {path} has {len(ins)} inputs; one is supported")
    x, how = feed_from_rgb(rgb, ins[0], path, scale, offset) if rgb is not None else feed_from_f32(f32, ins[0])
    arrays = runner.run([x])
    d = ins[0]
    extra = {"inputs": [{"name": d["name"], "shape": d["shape"], "dtype": d["dtype"], "quantization": d["quantization"], **how}]}
    return write_outputs(runner, arrays, out_dir, extra)


def bench(path: str, runs: int, threads: int, xnnpack: bool) -> dict:
    runner = Runner(path, threads, xnnpack)
    rng = np.random.default_rng(42)
    feeds = []
    for d in runner.inputs():
        dt = _NP[d["dtype"]]
        if np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)
            feeds.append(rng.integers(info.min, info.max + 1, size=d["shape"]).astype(dt))
        else:
            feeds.append(rng.random(d["shape"], dtype=np.float32).astype(dt))
    times = []
    for i in range(runs + 3):
        t0 = time.perf_counter()
        runner.set(feeds)
        outs = runner.invoke()
        _ = [np.array(o) for o in outs]
        if i >= 3:
            times.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "runs": runs, **runner.runtime}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--part", help="member of a .task bundle (e.g. face_detector)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--input-rgb")
    src.add_argument("--input-f32")
    src.add_argument("--photo")
    ap.add_argument("--output-dir")
    ap.add_argument("--scale", type=float)
    ap.add_argument("--offset", type=float)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-xnnpack", action="store_true", help="LiteRT's builtin kernels only (no default delegate)")
    ap.add_argument("--bench", type=int, metavar="N")
    ap.add_argument("--cpu", type=int, help="pin this process to one CPU (e.g. 0) for --bench")
    a = ap.parse_args()
    path = resolve(a.model)
    with tempfile.TemporaryDirectory() as tmp:
        if path.endswith(".task"):
            if not a.part:
                with zipfile.ZipFile(path) as z:
                    raise SystemExit(f"reference.py: {path} is a bundle; name a part with --part ({', '.join(z.namelist())})")
            path = extract_part(path, a.part, tmp)
        if a.cpu is not None:
            os.sched_setaffinity(0, {a.cpu})
        if a.bench:
            r = bench(path, a.bench, a.threads, not a.no_xnnpack)
            print(f"{os.path.basename(path)}: median {r['median_ms']:.3f} ms, min {r['min_ms']:.3f} ms over {a.bench} runs "
                  f"({r['runtime']} {r['version']}, {a.threads} thread(s){', CPU %d' % a.cpu if a.cpu is not None else ''})")
            print(json.dumps(r))
            return
        if not a.output_dir:
            ap.error("--output-dir is needed (or --bench N)")
        rgb = f32 = None
        if a.input_rgb:
            rgb = open(a.input_rgb, "rb").read()
        elif a.input_f32:
            f32 = open(a.input_f32, "rb").read()
        elif a.photo:
            from PIL import Image
            h, w, _ = image_hw(Runner(path, 1, False).inputs()[0])
            if h != w:
                raise SystemExit("reference.py: --photo needs a square input; resize yourself and use --input-rgb")
            rgb = qc.center_square(Image.open(a.photo), h).tobytes()
            qc.write_atomically(os.path.join(a.output_dir, "input.rgb"), rgb)
        else:
            ap.error("one of --input-rgb, --input-f32, --photo (or --bench N)")
        report = reference(path, rgb, a.output_dir, f32=f32, threads=a.threads, xnnpack=not a.no_xnnpack,
                           scale=a.scale, offset=a.offset)
        for o in report["outputs"]:
            print(f"{o['name']} {o['shape']} {o['dtype']} → {os.path.join(a.output_dir, o['f32'])}"
                  + (f" (+ {o['raw']})" if "raw" in o else "") + f"  min {o['min']:.6g} max {o['max']:.6g}"
                  + (f"  NON-FINITE {o['non_finite']}" if o["non_finite"] else "")
                  + (f"  (valid: first {o['valid_rows']} rows, {o['valid_min']:.6g}…{o['valid_max']:.6g})" if "valid_rows" in o else ""))


if __name__ == "__main__":
    main()
