#!/usr/bin/env python3
"""FrameGraph against the reference runtimes, on every model of models/cache/quantized/.

  .venv-quant/bin/python tools/quantized/parity.py [--photos 100] [--jobs 2] [--framegraph PATH] [MODEL ...]

For every model in manifest.json (a .task bundle: each .tflite part, FrameGraph reading
`MODEL.task#PART`; the deflated bundle, which MediaPipe refuses, is skipped) and the first N val
photos (BSDS500 val when ../shared has it, else frames of samples/media/portrait.mp4; centre square
at the model's input size), the same input bytes go to
  - the reference runtime, in this process: reference.py's Runner (LiteRT 1 thread with its default
    XNNPACK delegate; onnxruntime CPU, default optimisations), fed as reference.py feeds them;
  - `framegraph model run MODEL --input-rgb X --output-dir D --raw`, one process per photo.
A float input takes value = byte × scale + offset with the same scale and offset on both sides,
passed to FrameGraph as --scale/--offset: (byte − mean)/std from the manifest's input_normalization,
else from the model's own metadata (ONNX metadata_props, TFLite NormalizationOptions), else byte/255. Where the
model has metadata, one extra run without --scale/--offset checks that FrameGraph's default is the
same ("metadata default").

Per output it reports the share of values exactly equal (quantized outputs: the stored integers,
NAME.raw), for quantized outputs the share within one quantization step and the largest difference
in steps, for float outputs the largest absolute difference beside the reference runtime's own
two-path spread (verify.json, when verify.py has run); top-1 agreement for classifiers (an output
[1, C], C ≥ 10); for TFLite_Detection_PostProcess the share of photos with the same num_detections
and the smallest IoU of the boxes matched by order (rows past num_detections ignored). ONNX outputs
that onnxruntime gives NCHW are compared as NHWC, FrameGraph's layout.

Prints a table and each disagreement's worst case (model, output, photo, index, both values);
writes models/cache/quantized/parity.json. The framegraph binary (default .build/release/framegraph)
is copied first, so a rebuild during the run does not mix two builds. Exit status 1 when FrameGraph
failed to run somewhere, else 0 (differences are reported, not judged).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qcommon as qc  # noqa: E402
import reference as ref  # noqa: E402

_NP = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
       "float16": np.float16, "float32": np.float32}
DETECTION_OP = "TFLite_Detection_PostProcess"


def snapshot_framegraph(path: str, tmp: str, wait_s: float) -> tuple[str, dict]:
    """A private copy of the CLI (it may be replaced while someone rebuilds: wait for it to be
    there and stable), and what it was."""
    deadline = time.time() + wait_s
    while True:
        try:
            st = os.stat(path)
            time.sleep(1.0)
            if os.stat(path).st_size == st.st_size and os.access(path, os.X_OK):
                break
        except FileNotFoundError:
            pass
        if time.time() > deadline:
            raise SystemExit(f"parity.py: no {path} after {wait_s:.0f} s (build it: swift build -c release)")
        time.sleep(2.0)
    copy = os.path.join(tmp, "framegraph")
    shutil.copy2(path, copy)
    info = {"path": os.path.relpath(path, qc.REPO) if path.startswith(qc.REPO) else path, "sha256": qc.sha256(copy),
            "modified": datetime.datetime.fromtimestamp(os.stat(copy).st_mtime).isoformat(timespec="seconds")}
    try:
        head = subprocess.run(["git", "-C", qc.REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", qc.REPO, "status", "--porcelain", "--", "Sources", "Package.swift"],
                               capture_output=True, text=True).stdout.splitlines()
        info["git"] = {"head": head, "uncommitted_source_files": len(dirty)}
    except OSError:
        pass
    return copy, info


def metadata_normalization(path: str) -> tuple[float, float] | None:
    """(mean, std) from the model's own metadata: ONNX metadata_props, TFLite NormalizationOptions."""
    return ref.onnx_normalization(path) if path.endswith(".onnx") else qc.tflite_metadata_normalization(path)


def targets(manifest: dict, names: list[str], tmp: str) -> list[dict]:
    """(label, file the reference runtime loads, what FrameGraph is given, manifest entry)."""
    out = []
    for name in names:
        entry = manifest.get(name)
        if entry is None:
            raise SystemExit(f"parity.py: {name} is not in {qc.MANIFEST}")
        path = os.path.join(qc.OUT, name)
        if name.endswith(".task"):
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
            if any(i.compress_type != zipfile.ZIP_STORED for i in infos):
                continue   # the negative case: MediaPipe refuses it; nothing to compare
            for i in infos:
                if i.filename.endswith(".tflite"):
                    part = i.filename[:-7]
                    out.append({"label": f"{name}#{part}", "ref_path": ref.extract_part(path, i.filename, tmp),
                                "fg_model": f"{path}#{part}", "entry": {}})
        else:
            out.append({"label": name, "ref_path": path, "fg_model": path, "entry": entry})
    return out


def run_framegraph(fg: str, model: str, rgb_path: str, out_dir: str, scale: float | None, offset: float | None) -> dict:
    cmd = [fg, "model", "run", model, "--input-rgb", rgb_path, "--output-dir", out_dir, "--raw"]
    if scale is not None:
        cmd += ["--scale", repr(scale), "--offset", repr(offset)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return {"rc": r.returncode, "stderr": (r.stderr or r.stdout).strip()[-600:], "s": time.perf_counter() - t0}


def read_fg(out_dir: str, o: dict, shape: tuple) -> np.ndarray:
    """FrameGraph's value of output `o` as the reference's stored type: NAME.raw for a quantized
    output (its integers), NAME.f32 otherwise."""
    name = qc.safe_name(o["name"])
    if o["quantization"] is not None and o["dtype"] != "float32":
        a = np.fromfile(os.path.join(out_dir, f"{name}.raw"), _NP[o["dtype"]])
    else:
        a = np.fromfile(os.path.join(out_dir, f"{name}.f32"), "<f4")
    if a.size != int(np.prod(shape)):
        raise ValueError(f"{o['name']}: FrameGraph wrote {a.size} values, the reference has {int(np.prod(shape))} {list(shape)}")
    return a.reshape(shape)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two (ymin, xmin, ymax, xmax) boxes."""
    ih = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iw = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ih * iw
    union = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1]) + max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else float(np.array_equal(a, b))


def onnx_output_steps(path: str) -> dict[str, float]:
    """For an ONNX model, the float outputs that a DequantizeLinear with a constant scalar scale
    makes (a QDQ/QOperator model's last node): output name → that scale, one quantization step."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path, load_external_data=False)
    inits = {i.name: i for i in m.graph.initializer}
    producer = {o: n for n in m.graph.node for o in n.output}
    steps = {}
    for o in m.graph.output:
        n = producer.get(o.name)
        if n is not None and n.op_type == "DequantizeLinear" and len(n.input) > 1 and n.input[1] in inits:
            sc = numpy_helper.to_array(inits[n.input[1]])
            if sc.size == 1:
                steps[o.name] = float(sc.reshape(-1)[0])
    return steps


class OutputStats:
    """Running comparison of one output over the photos."""

    def __init__(self, o: dict, shape: tuple, step: float | None = None):
        self.o, self.shape, self.step = o, shape, step
        self.quantized = o["quantization"] is not None and o["dtype"] != "float32"
        self.total = self.exact = self.within1 = 0
        self.max_diff = 0.0
        self.worst = None
        self.differing: list[dict] = []

    def add(self, photo: str, r: np.ndarray, f: np.ndarray) -> None:
        if r.size == 0:
            return
        if self.quantized:
            d = np.abs(r.astype(np.int64) - f.astype(np.int64)).astype(np.float64)
        else:
            rr, ff = r.astype(np.float64), f.astype(np.float64)
            d = np.abs(rr - ff)
            d[np.isnan(rr) & np.isnan(ff)] = 0.0
            d[np.isnan(d)] = np.inf
        self.total += d.size
        self.exact += int(np.count_nonzero(d == 0))
        self.within1 += int(np.count_nonzero(d <= (1 if self.quantized else (self.step or 0) * (1 + 1e-6))))
        m = float(d.max())
        if m > 0:
            i = np.unravel_index(int(np.argmax(d)), d.shape)
            case = {"photo": photo, "index": [int(k) for k in i], "reference": r[i].item(), "framegraph": f[i].item(),
                    "values_differing": int(np.count_nonzero(d)), "of": int(d.size)}
            self.differing.append(case)
            if m > self.max_diff:
                self.max_diff, self.worst = m, case

    def result(self) -> dict:
        res = {"dtype": self.o["dtype"], "shape": list(self.shape), "quantized": self.quantized, "values": self.total,
               "exact": self.exact / self.total if self.total else None,
               "max_diff": self.max_diff, "unit": "steps" if self.quantized else "abs",
               "photos_differing": len(self.differing)}
        if self.quantized or self.step:
            res["within_1_step"] = self.within1 / self.total if self.total else None
        if self.step:
            res["step"] = self.step
            res["max_diff_steps"] = round(self.max_diff / self.step, 3)
        if self.worst:
            res["worst"] = self.worst
            res["differing"] = sorted(self.differing, key=lambda c: -c["values_differing"])[:10]
        return res


def compare_model(t: dict, photos: list, fg: str, jobs: int, tmp: str, spread: dict) -> dict:
    label, path = t["label"], t["ref_path"]
    runner = ref.Runner(path, 1, True)
    d_in = runner.inputs()[0]
    h, w, _ = ref.image_hw(d_in)
    outs = runner.outputs()
    res: dict = {"model": label, "input": {"name": d_in["name"], "dtype": d_in["dtype"], "shape": d_in["shape"]},
                 "runtime": {k: v for k, v in runner.runtime.items() if k != "xnnpack"}}
    # The input's scale and offset, the same on both sides.
    scale = offset = None
    meta = None
    if d_in["dtype"] not in ("uint8", "int8"):
        norm = t["entry"].get("input_normalization")
        meta = metadata_normalization(path)
        if norm:
            mean, std, src = norm["mean"], norm["std"], "manifest input_normalization"
        elif meta:
            (mean, std), src = meta, "the model's metadata"
        else:
            mean, std, src = 0.0, 255.0, "none (byte/255)"
        scale, offset = 1.0 / std, -mean / std
        res["input"]["normalization"] = {"mean": mean, "std": std, "from": src, "scale": scale, "offset": offset}
    else:
        res["input"]["normalization"] = "bytes as the uint8 tensor" if d_in["dtype"] == "uint8" else "byte − 128 as the int8 tensor"
    mdir = os.path.join(tmp, qc.safe_name(label))
    os.makedirs(mdir, exist_ok=True)
    refs, rgb_paths = [], []
    for k, (stem, img) in enumerate(photos):
        rgb = qc.center_square(img, h).tobytes() if h == w else np.asarray(img.convert("RGB").resize((w, h))).tobytes()
        p = os.path.join(mdir, f"{k:04d}.rgb")
        with open(p, "wb") as f:
            f.write(rgb)
        rgb_paths.append(p)
        x, _ = ref.feed_from_rgb(rgb, d_in, path, scale, offset)
        refs.append(runner.run([x]))
    shapes = [a.shape for a in refs[0]]
    # ONNX 4-D outputs come NCHW from onnxruntime; FrameGraph writes NHWC.
    nchw = [runner.kind == "onnx" and len(s) == 4 for s in shapes]
    fg_shapes = [(s[0], s[2], s[3], s[1]) if n else s for s, n in zip(shapes, nchw)]
    # FrameGraph: photo 0 first (a model it cannot run fails once, not N times), then the rest in parallel.
    t0 = time.time()
    runs: dict[int, dict] = {}
    runs[0] = run_framegraph(fg, t["fg_model"], rgb_paths[0], os.path.join(mdir, "out0000"), scale, offset)
    if runs[0]["rc"] == 0:
        with cf.ThreadPoolExecutor(jobs) as pool:
            futs = {pool.submit(run_framegraph, fg, t["fg_model"], rgb_paths[k], os.path.join(mdir, f"out{k:04d}"), scale, offset): k
                    for k in range(1, len(photos))}
            for fu in cf.as_completed(futs):
                runs[futs[fu]] = fu.result()
    res["framegraph_s_per_run"] = round(float(np.median([r["s"] for r in runs.values()])), 3)
    failures = [{"photo": photos[k][0], "rc": r["rc"], "error": r["stderr"]} for k, r in sorted(runs.items()) if r["rc"] != 0]
    if failures:
        res["failures"] = failures[:10]
        res["failed_photos"] = len(failures)
    # Detection models: the op's outputs in its order (boxes, classes, scores, num).
    det_names = (t["entry"].get("custom_options", {}).get(DETECTION_OP) or {}).get("outputs")
    det = [next(i for i, o in enumerate(outs) if o["name"] == n) for n in det_names] if det_names else None
    steps = onnx_output_steps(path) if runner.kind == "onnx" else {}
    stats = [OutputStats(o, s, steps.get(o["name"])) for o, s in zip(outs, fg_shapes)]
    classifier = next((i for i, s in enumerate(shapes) if len(s) == 2 and s[0] == 1 and s[1] >= 10), None) if det is None else None
    top1_same = top1_n = 0
    det_same = det_n = 0
    min_iou, class_same, class_n = None, 0, 0
    compared = 0
    for k, (stem, _) in enumerate(photos):
        if runs.get(k, {}).get("rc") != 0:
            continue
        od = os.path.join(mdir, f"out{k:04d}")
        try:
            r_arrays = [np.ascontiguousarray(a.transpose(0, 2, 3, 1)) if n else a for a, n in zip(refs[k], nchw)]
            f_arrays = [read_fg(od, o, s) for o, s in zip(outs, fg_shapes)]
        except (OSError, ValueError) as e:
            res.setdefault("failures", []).append({"photo": stem, "error": f"reading FrameGraph's outputs: {e}"})
            res["failed_photos"] = res.get("failed_photos", 0) + 1
            continue
        compared += 1
        if det is not None:
            ib, ic, isc, inum = det
            nr, nf = int(r_arrays[inum].reshape(-1)[0]), int(f_arrays[inum].reshape(-1)[0])
            det_n += 1
            det_same += nr == nf
            n = min(nr, nf)
            for i, (ra, fa) in enumerate(zip(r_arrays, f_arrays)):
                if i == inum:
                    stats[i].add(stem, ra, fa)
                else:
                    stats[i].add(stem, ra[:, :n], fa[:, :n])
            for j in range(n):
                v = iou(r_arrays[ib][0, j].astype(np.float64), f_arrays[ib][0, j].astype(np.float64))
                min_iou = v if min_iou is None else min(min_iou, v)
                class_n += 1
                class_same += int(r_arrays[ic][0, j] == f_arrays[ic][0, j])
            if nr != nf:
                res.setdefault("num_detections_differ", []).append({"photo": stem, "reference": nr, "framegraph": nf})
        else:
            for st, ra, fa in zip(stats, r_arrays, f_arrays):
                st.add(stem, ra, fa)
        if classifier is not None:
            top1_n += 1
            rc, fc = int(np.argmax(r_arrays[classifier])), int(np.argmax(f_arrays[classifier]))
            top1_same += rc == fc
            if rc != fc:
                ra, fa = r_arrays[classifier].reshape(-1), f_arrays[classifier].reshape(-1)
                res.setdefault("top1_differ", []).append(
                    {"photo": stem, "reference": {"class": rc, "value": ra[rc].item(), "its_class_in_framegraph": fa[rc].item()},
                     "framegraph": {"class": fc, "value": fa[fc].item(), "its_class_in_reference": ra[fc].item()}})
        shutil.rmtree(od, ignore_errors=True)
    res["photos_compared"] = compared
    res["outputs"] = {}
    for o, st in zip(outs, stats):
        r = st.result()
        sp = (spread.get(label) or {}).get("outputs", {}).get(o["name"])
        if sp:
            r["reference_two_paths"] = {"pair": spread[label].get("pair"), "max_diff": sp["max_diff"], "unit": sp["unit"],
                                        "share_differing": sp["share_differing"]}
        if nchw[outs.index(o)]:
            r["layout"] = "reference NCHW, compared as NHWC"
        res["outputs"][o["name"]] = r
    if classifier is not None and top1_n:
        res["top1_agree"] = top1_same / top1_n
        res["top1_output"] = outs[classifier]["name"]
    if det is not None and det_n:
        res["detections"] = {"same_count": det_same / det_n, "min_iou": min_iou, "boxes_matched": class_n,
                             "same_class": class_same / class_n if class_n else None}
    # FrameGraph's own default input (no --scale/--offset) where the model carries its normalisation.
    if scale is not None and meta and runs[0]["rc"] == 0:
        od = os.path.join(mdir, "default0000")
        r = run_framegraph(fg, t["fg_model"], rgb_paths[0], od, None, None)
        if r["rc"] != 0:
            res["metadata_default"] = {"error": r["stderr"]}
        else:
            run_framegraph(fg, t["fg_model"], rgb_paths[0], os.path.join(mdir, "explicit0000"), scale, offset)
            diffs = []
            for o, s in zip(outs, fg_shapes):
                a, b = read_fg(od, o, s).astype(np.float64), read_fg(os.path.join(mdir, "explicit0000"), o, s).astype(np.float64)
                diffs.append(float(np.abs(a - b).max()) if a.size else 0.0)
            res["metadata_default"] = {"photo": photos[0][0], "max_diff_vs_explicit": max(diffs),
                                       "same": max(diffs) == 0.0}
    res["seconds"] = round(time.time() - t0, 1)
    shutil.rmtree(mdir, ignore_errors=True)
    return res


def pct(x: float | None) -> str:
    if x is None:
        return "—"
    if x == 1.0:
        return "100 %"
    return f"{100 * x:.2f} %"


def fmt_diff(r: dict) -> str:
    if r["max_diff"] == 0:
        return "0"
    if r.get("step"):
        return f"{r['max_diff']:.3g} ({r['max_diff_steps']:.0f} steps)"
    return f"{r['max_diff']:.0f} steps" if r["unit"] == "steps" else f"{r['max_diff']:.3g}"


def table(results: list[dict]) -> str:
    head = ["model", "output", "type", "exact", "≤1 step", "max diff", "ref 2 paths", "top-1", "detections"]
    rows = []
    for m in results:
        first = True
        if not m["photos_compared"]:
            rows.append([m["model"], f"FAILED: {(m.get('failures') or [{}])[0].get('error', '?').splitlines()[-1][:80]}", "", "", "", "", "", "", ""])
            continue
        for name, r in m["outputs"].items():
            sp = r.get("reference_two_paths")
            spread = "—" if not sp else (f"{sp['max_diff']:.0f} steps" if sp["unit"] == "steps" else f"{sp['max_diff']:.2g}")
            det = ""
            if first and "detections" in m:
                dd = m["detections"]
                det = f"n same {pct(dd['same_count'])}, min IoU {dd['min_iou']:.4f}" if dd["min_iou"] is not None else f"n same {pct(dd['same_count'])}"
            rows.append([m["model"] if first else "", name, r["dtype"] + (" (DQ)" if r.get("step") else "") + (" NCHW" if r.get("layout") else ""),
                         pct(r["exact"]), pct(r.get("within_1_step")) if "within_1_step" in r else "—", fmt_diff(r), spread,
                         pct(m.get("top1_agree")) if first and "top1_agree" in m else "", det])
            first = False
        if m.get("failed_photos"):
            rows.append(["", f"FrameGraph failed on {m['failed_photos']} photos", "", "", "", "", "", "", ""])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda r: "  ".join(str(x).ljust(wd) for x, wd in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(head), line(["-" * wd for wd in widths])] + [line(r) for r in rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="models of the manifest (default: all)")
    ap.add_argument("--photos", type=int, default=100, help="how many val photos (default 100)")
    ap.add_argument("--jobs", type=int, default=2, help="FrameGraph processes at once (default 2)")
    ap.add_argument("--framegraph", default=os.path.join(qc.REPO, ".build", "release", "framegraph"))
    ap.add_argument("--wait", type=float, default=900, help="seconds to wait for the framegraph binary (default 900)")
    a = ap.parse_args()
    t_start = time.time()
    manifest = qc.load_manifest()
    if not manifest.get("models"):
        raise SystemExit(f"parity.py: no {qc.MANIFEST}: make the models first (tools/quantized/ensure.sh)")
    spread = {}
    vpath = os.path.join(qc.OUT, "verify.json")
    if os.path.exists(vpath):
        with open(vpath) as f:
            v = json.load(f)
        spread = {r["model"]: r for r in v.get("results", []) if "outputs" in r}
        spread_photos = len(v.get("photos", []))
    photos, desc = qc.images("val", a.photos)
    print(f"photos: {desc}", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="fg-parity-") as tmp:
        fg, fg_info = snapshot_framegraph(a.framegraph, tmp, a.wait)
        print(f"framegraph: {fg_info['path']} (sha256 {fg_info['sha256'][:12]}…, built {fg_info['modified']})", flush=True)
        for t in targets(manifest["models"], a.models or list(manifest["models"]), tmp):
            r = compare_model(t, photos, fg, a.jobs, tmp, spread)
            r["photos"] = [s for s, _ in photos]
            results.append(r)
            outs = "; ".join(f"{n} exact {pct(o['exact'])}" + (f", ≤1 {pct(o.get('within_1_step'))}" if "within_1_step" in o else "")
                             + f", max {fmt_diff(o)}" for n, o in r["outputs"].items())
            extra = (f"; top-1 {pct(r['top1_agree'])}" if "top1_agree" in r else "") + \
                    (f"; detections same count {pct(r['detections']['same_count'])}, min IoU {r['detections']['min_iou']}" if "detections" in r else "") + \
                    (f"; FAILED on {r['failed_photos']} photos: {r['failures'][0]['error'].splitlines()[-1][:200]}" if r.get("failed_photos") else "")
            print(f"{r['model']}: {outs}{extra} ({r['seconds']} s)", flush=True)
    for r in results:
        r.pop("photos", None)
    elapsed = round(time.time() - t_start, 1)
    doc = {"tool": "tools/quantized/parity.py", "when": datetime.datetime.now().isoformat(timespec="seconds"),
           "photos": {"source": qc.photo_source(), "description": desc, "names": [s for s, _ in photos]},
           "framegraph": fg_info, "jobs": a.jobs, "seconds": elapsed,
           "reference_two_paths": f"verify.json ({spread_photos} photos)" if spread else None,
           "manifest_stamp": (manifest.get("stamp") or {}).get("sha256"), "results": results}
    out = os.path.join(qc.OUT, "parity.json")
    qc.write_atomically(out, (json.dumps(doc, indent=1) + "\n").encode())
    print()
    print(table(results))
    print()
    for r in results:
        for name, o in r["outputs"].items():
            if o.get("worst"):
                w = o["worst"]
                print(f"{r['model']} {name}: {o['photos_differing']} of {r['photos_compared']} photos differ; worst {w['photo']} "
                      f"at {w['index']}: reference {w['reference']!r}, FrameGraph {w['framegraph']!r} "
                      f"({w['values_differing']} of {w['of']} values differ there)")
        for c in r.get("top1_differ", [])[:10]:
            print(f"{r['model']}: top-1 on {c['photo']}: reference class {c['reference']['class']} ({c['reference']['value']:.6g}; "
                  f"FrameGraph {c['reference']['its_class_in_framegraph']:.6g}), FrameGraph class {c['framegraph']['class']} "
                  f"({c['framegraph']['value']:.6g}; reference {c['framegraph']['its_class_in_reference']:.6g})")
        for c in r.get("num_detections_differ", [])[:5]:
            print(f"{r['model']}: num_detections on {c['photo']}: reference {c['reference']}, FrameGraph {c['framegraph']}")
        md = r.get("metadata_default")
        if md and not md.get("same", False):
            print(f"{r['model']}: FrameGraph's default input (metadata) differs from the explicit --scale/--offset: {md}")
        for fl in r.get("failures", [])[:3]:
            print(f"{r['model']}: FrameGraph failed on {fl['photo']}: {fl['error']}")
    print(f"\n{len(results)} models, {len(photos)} photos, {elapsed} s; {os.path.relpath(out, qc.REPO)}")
    sys.exit(1 if any(r.get("failed_photos") for r in results) else 0)


if __name__ == "__main__":
    main()
