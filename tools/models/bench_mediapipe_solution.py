#!/usr/bin/env python3
"""End-to-end throughput of MediaPipe's own Python solutions: selfie segmentation (default), face mesh,
hands (--solution hands: max_num_hands=2, model_complexity=1) or pose (--solution pose: model_complexity=1,
smooth_landmarks=True).

mediapipe==0.10.21, mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0)
(the 256x256 model FrameGraph runs, on MediaPipe's graph: ImageToTensor, TFLite +
XNNPACK, TensorsToSegmentation back to frame size); with --solution face_mesh,
mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=False)
(BlazeFace + the 468-point landmark model, tracking). Per frame, in one process:
decode with cv2.VideoCapture (OpenCV's FFmpeg backend, shipped in the
opencv-contrib-python wheel mediapipe depends on), BGR->RGB, process(). Clips are
looped until at least --frames frames were processed.

Reports frames, wall time, fps, process CPU seconds (user+sys, all threads, so
cpu/wall > 1 means MediaPipe used more than one core), and per-frame decode and
process times. Same printing/--json conventions as bench_peers.py; asserts nothing.

mediapipe 0.10.21 pins numpy<2 and protobuf<5, so it lives in its own venv:
  python3 -m venv .venv-mediapipe && .venv-mediapipe/bin/pip install -r tools/models/requirements-mediapipe.txt
  taskset -c 0 .venv-mediapipe/bin/python tools/models/bench_mediapipe_solution.py [CLIP ...] [--frames 300]
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import resource
import sys
import time

import numpy as np

DEFAULT_CLIP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "media",
                                            "webcam", "again.mkv"))


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("clips", nargs="*", default=[DEFAULT_CLIP])
    ap.add_argument("--frames", type=int, default=300, help="at least this many frames (clips are looped)")
    ap.add_argument("--model-selection", type=int, default=0, choices=[0, 1])
    ap.add_argument("--warmup", type=int, default=5, help="frames processed before timing starts")
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--solution", default="selfie_segmentation", choices=["selfie_segmentation", "face_mesh", "hands", "pose"])
    a = ap.parse_args(argv)

    import cv2
    import mediapipe as mp

    if a.solution == "hands":
        seg = mp.solutions.hands.Hands(static_image_mode=False, max_num_hands=2, model_complexity=1,
                                       min_detection_confidence=0.5, min_tracking_confidence=0.5)
    elif a.solution == "pose":
        seg = mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1, smooth_landmarks=True,
                                     enable_segmentation=False, min_detection_confidence=0.5, min_tracking_confidence=0.5)
    elif a.solution == "face_mesh":
        seg = mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=False,
                                              min_detection_confidence=0.5, min_tracking_confidence=0.5)
    else:
        seg = mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=a.model_selection)

    def frames():
        while True:
            for clip in a.clips:
                cap = cv2.VideoCapture(clip)
                if not cap.isOpened():
                    raise SystemExit(f"cannot open {clip}")
                while True:
                    ok, bgr = cap.read()
                    if not ok:
                        break
                    yield bgr
                cap.release()

    gen = frames()
    for _ in range(a.warmup):
        bgr = next(gen)
        seg.process(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))

    n = 0
    dec_ms, proc_ms = [], []
    size = None
    mask_mean = 0.0
    c0, t0 = cpu_seconds(), time.perf_counter()
    while n < a.frames:
        t1 = time.perf_counter()
        bgr = next(gen)
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        t2 = time.perf_counter()
        res = seg.process(rgb)
        t3 = time.perf_counter()
        size = size or (rgb.shape[1], rgb.shape[0])
        if a.solution == "face_mesh":
            mask_mean += float(len(res.multi_face_landmarks or []))  # faces found
        elif a.solution == "hands":
            mask_mean += float(len(res.multi_hand_landmarks or []))  # hands found
        elif a.solution == "pose":
            mask_mean += float(res.pose_landmarks is not None)  # poses found
        else:
            mask_mean += float(res.segmentation_mask.mean())
        dec_ms.append((t2 - t1) * 1e3)
        proc_ms.append((t3 - t2) * 1e3)
        n += 1
    wall = time.perf_counter() - t0
    cpu = cpu_seconds() - c0
    seg.close()

    out = {
        "runtime": f"mediapipe solutions.{a.solution}", "version": md.version("mediapipe"),
        "opencv": cv2.__version__, "model_selection": a.model_selection, "clips": a.clips,
        "frame_size": list(size), "frames": n, "warmup_frames": a.warmup, "wall_s": wall, "fps": n / wall,
        "cpu_s": cpu, "cpu_per_wall": cpu / wall, "cpu_affinity": sorted(os.sched_getaffinity(0)),
        "loadavg_at_start": list(os.getloadavg()),
        "decode_ms": {"median": float(np.median(dec_ms)), "p95": float(np.percentile(dec_ms, 95))},
        "process_ms": {"median": float(np.median(proc_ms)), "p95": float(np.percentile(proc_ms, 95))},
        "mean_mask_value": mask_mean / n,
    }
    print(f"mediapipe {out['version']} {a.solution}, opencv {out['opencv']}, "
          f"cpus {out['cpu_affinity']}, clips: {', '.join(os.path.basename(c) for c in a.clips)} "
          f"({size[0]}x{size[1]})")
    print(f"{'frames':>7s} {'wall s':>8s} {'fps':>8s} {'cpu s':>8s} {'cpu/wall':>8s} "
          f"{'decode ms p50/p95':>18s} {'process ms p50/p95':>19s}")
    print(f"{n:7d} {wall:8.2f} {out['fps']:8.1f} {cpu:8.2f} {out['cpu_per_wall']:8.2f} "
          f"{out['decode_ms']['median']:8.2f}/{out['decode_ms']['p95']:<8.2f} "
          f"{out['process_ms']['median']:9.2f}/{out['process_ms']['p95']:<8.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
