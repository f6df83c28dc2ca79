#!/usr/bin/env python3
"""Check the models of models/cache/quantized/ in their reference runtimes, on real photos.

  .venv-quant/bin/python tools/quantized/verify.py [--photos 20] [--bench 30] [MODEL ...]

For every model in manifest.json (a .task: each .tflite part; the deflated bundle is only checked
to be refused by a stored-only reader): runs it on the first N val photos (BSDS500 val, else frames of
the sample clip, as make_models.py; centre square at the model's size; bytes as reference.py feeds them) and reports
  - that every output is finite (for TFLite_Detection_PostProcess: its first num_detections rows);
  - LiteRT with its default XNNPACK delegate against LiteRT's builtin kernels alone
    (BUILTIN_WITHOUT_DEFAULT_DELEGATES): the largest difference, in quantization steps for a
    quantized output, and the share of values that differ at all — how far apart LiteRT's own two
    paths are, the scale of "within 1 step" for a third implementation;
  - onnxruntime with its graph optimisations (ORT_ENABLE_ALL, the default: QDQ pairs fused into
    quantized kernels) against none (ORT_DISABLE_ALL: float ops on dequantized values), same measures;
  - for classifiers, top-1 agreement between the two paths, and with the float model where one exists
    (opzoo_float.tflite; efficientnet_lite0.onnx);
  - with --bench N, the median of N single-thread invocations (reference.py --bench), pinned to CPU 0.
Writes models/cache/quantized/verify.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qcommon as qc  # noqa: E402
import reference as ref  # noqa: E402

FLOAT_OF = {"opzoo": "opzoo_float.tflite", "efficientnet_lite0": os.path.join(qc.CACHE, "efficientnet_lite0.onnx")}


def onnx_runner(path: str, optimize: bool) -> ref.Runner:
    import onnxruntime as ort
    r = ref.Runner(path, 1)
    if not optimize:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        r.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return r


def feeds(runner: ref.Runner, path: str, photos: list) -> list[np.ndarray]:
    d = runner.inputs()[0]
    h, _, _ = ref.image_hw(d)
    return [ref.feed_from_rgb(qc.center_square(img, h).tobytes(), d, path, None, None)[0] for _, img in photos]


def compare(a_runs, b_runs, outputs) -> dict:
    res = {}
    for k, o in enumerate(outputs):
        q = o["quantization"]
        diffs, changed, total = [], 0, 0
        for a, b in zip(a_runs, b_runs):
            x, y = a[k], b[k]
            n = ref._detections(a)
            if n is not None and x.ndim >= 2 and x.shape[1] >= n:
                x, y = x[:, :n], y[:, :n]
            if x.size == 0:
                continue
            d = np.abs(x.astype(np.float64) - y.astype(np.float64))
            diffs.append(float(d.max()))
            changed += int(np.count_nonzero(d))
            total += d.size
        res[o["name"]] = {"max_diff": max(diffs) if diffs else 0.0, "unit": "steps" if q else "abs",
                          "share_differing": changed / total if total else 0.0}
    return res


def top1(runs, k=0) -> list[int]:
    return [int(np.argmax(r[k])) for r in runs]


def finite(runs) -> bool:
    for r in runs:
        n = ref._detections(r)
        for a in r:
            a = a[:, :n] if n is not None and a.ndim >= 2 and a.shape[1] >= n else a
            if not np.all(np.isfinite(a.astype(np.float64))):
                return False
    return True


def is_classifier(outputs) -> bool:
    return any(len(o.get("shape", [])) == 2 and o["shape"][1] >= 10 for o in outputs)


def check(path: str, label: str, photos: list[str], manifest_entry: dict | None) -> dict:
    out: dict = {"model": label}
    if path.endswith(".onnx"):
        a, b = onnx_runner(path, True), onnx_runner(path, False)
        out["pair"] = "onnxruntime ORT_ENABLE_ALL vs ORT_DISABLE_ALL"
    else:
        a, b = ref.Runner(path, 1, True), ref.Runner(path, 1, False)
        out["pair"] = "LiteRT XNNPACK delegate vs builtin kernels"
        out["xnnpack"] = a.runtime["xnnpack"]
    xs = feeds(a, path, photos)
    ra = [a.run([x]) for x in xs]
    rb = [b.run([x]) for x in xs]
    outs = a.outputs()
    for o, arr in zip(outs, ra[0]):
        o["shape"] = list(arr.shape)
    out["finite"] = finite(ra) and finite(rb)
    out["outputs"] = compare(ra, rb, outs)
    if is_classifier(outs) and ref._detections(ra[0]) is None:
        k = next(i for i, o in enumerate(outs) if len(o["shape"]) == 2 and o["shape"][1] >= 10)
        ta, tb = top1(ra, k), top1(rb, k)
        out["top1_paths_agree"] = sum(x == y for x, y in zip(ta, tb)) / len(ta)
        out["top1_distinct"] = len(set(ta))
        fl = next((v for key, v in FLOAT_OF.items() if label.startswith(key) and not label.endswith(os.path.basename(v))), None)
        if fl:
            fpath = fl if os.path.isabs(fl) else os.path.join(qc.OUT, fl)
            fr = onnx_runner(fpath, True) if fpath.endswith(".onnx") else ref.Runner(fpath, 1, True)
            # the float model takes the same photo normalised its own way
            fruns = [fr.run([x]) for x in feeds(fr, fpath, photos)]
            kf = next(i for i, arr in enumerate(fruns[0]) if arr.ndim == 2 and arr.shape[1] >= 10)
            tf_ = top1(fruns, kf)
            out["top1_vs_float"] = sum(x == y for x, y in zip(ta, tf_)) / len(ta)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--photos", type=int, default=20)
    ap.add_argument("--bench", type=int, default=0)
    a = ap.parse_args()
    manifest = qc.load_manifest()["models"]
    photos, desc = qc.images("val", a.photos)
    print(f"photos: {desc}", flush=True)
    results = []
    names = a.models or list(manifest)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(qc.OUT, name)
            if name.endswith(".task"):
                with zipfile.ZipFile(path) as z:
                    infos = z.infolist()
                if any(i.compress_type != zipfile.ZIP_STORED for i in infos):
                    results.append({"model": name, "refused_by_stored_only_reader": True,
                                    "members": [(i.filename, i.compress_type) for i in infos]})
                    print(f"{name}: compressed members — MediaPipe refuses it ('Expected uncompressed zip archive.')")
                    continue
                targets = [(f"{name}#{i.filename[:-7]}", ref.extract_part(path, i.filename, tmp)) for i in infos]
            else:
                targets = [(name, path)]
            for label, p in targets:
                r = check(p, label, photos, manifest.get(name))
                if a.bench:
                    import subprocess
                    cmd = [sys.executable, os.path.join(os.path.dirname(__file__), "reference.py"), p, "--bench", str(a.bench), "--cpu", "0"]
                    line = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
                    r["bench"] = json.loads(line)
                results.append(r)
                diffs = ", ".join(f"{k} max {v['max_diff']:.3g} {v['unit']} ({100 * v['share_differing']:.2f} % differ)" for k, v in r["outputs"].items())
                extra = ""
                if "top1_paths_agree" in r:
                    extra += f"; top-1 paths agree {100 * r['top1_paths_agree']:.0f} % ({r['top1_distinct']} distinct)"
                if "top1_vs_float" in r:
                    extra += f", vs float {100 * r['top1_vs_float']:.0f} %"
                if "bench" in r:
                    extra += f"; median {r['bench']['median_ms']:.2f} ms"
                xn = r.get("xnnpack")
                xs = f" [XNNPACK {xn['delegated_nodes']}/{xn['model_nodes']} nodes, not: {xn['not_delegated'] or '—'}]" if xn else ""
                print(f"{label}: finite {r['finite']}{xs}; {r['pair']}: {diffs}{extra}", flush=True)
    qc.write_atomically(os.path.join(qc.OUT, "verify.json"),
                        (json.dumps({"photos": [stem for stem, _ in photos], "photo_source": desc, "results": results}, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
