#!/usr/bin/env python3
"""Face detection parity: FrameGraph's detect-faces against MediaPipe's own face detection solution
(mediapipe 0.10.21, `mp.solutions.face_detection`, model_selection=0: the same short-range BlazeFace
model, min_detection_confidence 0.5; --full-range: model_selection=1 and range=full, whose graph
keeps its own threshold of 0.6) on every frame of the given clips, FrameGraph with its defaults.

For each frame: the number of faces must agree; each MediaPipe face is matched to FrameGraph's face
of largest IoU, and the box IoU and the six keypoints' distances (as a share of the frame width)
are recorded. Prints per clip and overall: frames, frames whose counts differ, the smallest and
median IoU, the largest keypoint distance; exits 1 when a goal is missed (counts equal on every
frame, IoU >= 0.95, keypoints within 1 % of the width).

  .venv-mediapipe/bin/python tools/faces/detection_parity.py ../shared/media/webcam/*.mkv

Frames are decoded once by the ffmpeg CLI into RGB (BT.601, as FFmpeg converts SD video) for
MediaPipe; FrameGraph decodes the same file itself (`framegraph run` with --results), so a
difference in colour conversion is part of what is compared; with --same-pixels FrameGraph reads
ffmpeg's RGB frames instead (a PNG sequence), so only the detectors are compared.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import mediapipe as mp
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PIPELINE = """source = file path={clip}
faces  = detect-faces range={range}
log    = results path={out}
source -> faces -> log
"""


def probe_size(clip):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "csv=p=0", clip], capture_output=True, text=True, check=True).stdout.strip()
    w, h = out.split(",")[:2]
    return int(w), int(h)


def decode_rgb(clip):
    """Every frame of `clip` as RGB, converted by the ffmpeg tool (what MediaPipe is given), and the size."""
    w, h = probe_size(clip)
    raw = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", clip, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3), w, h


def mediapipe_faces(clip, full_range=False):
    frames, w, h = decode_rgb(clip)
    found = []
    with mp.solutions.face_detection.FaceDetection(model_selection=1 if full_range else 0, min_detection_confidence=0.5) as detector:
        for frame in frames:
            result = detector.process(frame)
            faces = []
            for d in result.detections or []:
                box = d.location_data.relative_bounding_box
                faces.append({"box": [box.xmin, box.ymin, box.width, box.height], "score": d.score[0],
                              "keypoints": [[k.x, k.y] for k in d.location_data.relative_keypoints]})
            found.append(faces)
    return found, w, h


def framegraph_faces(clip, cli, same_pixels=False, full_range=False):
    with tempfile.TemporaryDirectory() as tmp:
        pipeline, out = os.path.join(tmp, "p.fg"), os.path.join(tmp, "faces.jsonl")
        source = os.path.abspath(clip)
        if same_pixels:
            # The very RGB frames MediaPipe gets (ffmpeg's conversion), as a PNG sequence.
            subprocess.run(["ffmpeg", "-loglevel", "error", "-i", clip, "-pix_fmt", "rgb24", os.path.join(tmp, "f%05d.png")], check=True)
            source = os.path.join(tmp, "f%05d.png")
        open(pipeline, "w").write(PIPELINE.format(clip=source, out=out, range="full" if full_range else "short"))
        subprocess.run([cli, "run", pipeline, "--quiet"], check=True, cwd=ROOT)
        lines = [json.loads(l) for l in open(out) if l.strip()]
    return [l["detections"] for l in sorted(lines, key=lambda l: l["index"])]


def iou(a, b):
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, x1 - x0) * max(0, y1 - y0)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0


def compare(ref, ours, w, h):
    count_diff, ious, kp = 0, [], []
    for r, o in zip(ref, ours):
        if len(r) != len(o):
            count_diff += 1
        for face in r:
            if not o:
                continue
            best = max(o, key=lambda f: iou(face["box"], f["box"]))
            ious.append(iou(face["box"], best["box"]))
            for (rx, ry), (ox, oy) in zip(face["keypoints"], best["keypoints"]):
                # Distance in pixels, as a share of the frame width.
                kp.append(((rx - ox) ** 2 * w * w + (ry - oy) ** 2 * h * h) ** 0.5 / w)
    return count_diff, ious, kp


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clips", nargs="+")
    parser.add_argument("--cli", default=os.path.join(ROOT, ".build/release/framegraph"))
    parser.add_argument("--full-range", action="store_true", help="the full-range model (model_selection=1; detect-faces range=full)")
    parser.add_argument("--same-pixels", action="store_true",
                        help="give FrameGraph the RGB frames MediaPipe gets (a PNG sequence from ffmpeg) instead of the clip")
    args = parser.parse_args()
    total_frames, total_diff, all_iou, all_kp = 0, 0, [], []
    for clip in args.clips:
        ref, w, h = mediapipe_faces(clip, args.full_range)
        ours = framegraph_faces(clip, args.cli, args.same_pixels, args.full_range)
        if len(ours) != len(ref):
            print(f"{os.path.basename(clip)}: FrameGraph gave {len(ours)} frames, MediaPipe {len(ref)}")
        diff, ious, kp = compare(ref, ours, w, h)
        faces = sum(len(r) for r in ref)
        print(f"{os.path.basename(clip):>12}: {len(ref)} frames, {faces} MediaPipe faces, counts differ on {diff} frames; "
              f"IoU min {min(ious, default=float('nan')):.4f} median {statistics.median(ious) if ious else float('nan'):.4f}; "
              f"keypoints max {100 * max(kp, default=0):.3f} % of width")
        total_frames += len(ref)
        total_diff += diff
        all_iou += ious
        all_kp += kp
    ok = total_diff == 0 and (min(all_iou, default=1) >= 0.95) and (max(all_kp, default=0) <= 0.01)
    print(f"all: {total_frames} frames, counts differ on {total_diff}; IoU min {min(all_iou, default=float('nan')):.4f} "
          f"(goal >= 0.95); keypoints max {100 * max(all_kp, default=0):.3f} % of width (goal <= 1 %): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
