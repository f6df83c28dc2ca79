#!/usr/bin/env python3
"""Hands and pose parity: FrameGraph's hand-landmarks and pose-landmarks against MediaPipe's own
solutions (mediapipe 0.10.21, video mode: `mp.solutions.hands.Hands(static_image_mode=False,
max_num_hands=2, model_complexity=1, min_detection_confidence=0.5, min_tracking_confidence=0.5)`
and `mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1, smooth_landmarks=True,
enable_segmentation=False, 0.5, 0.5)`), both tracking from frame to frame, on every frame of the
given clips (default: ../shared/media/webcam/*.mkv), FrameGraph with its defaults (the same models:
palm_detection_full + hand_landmark_full, pose_detection + pose_landmark_full).

Per frame: the number of hands (poses) each finds; on frames where both find some, each MediaPipe
hand is paired with the FrameGraph hand nearest to it, and the mean distance of the 21 points (33
for a pose), in pixels, is taken as a share of MediaPipe's wrist-to-middle-knuckle length (points 0
and 9) for a hand, of its torso (shoulders' midpoint to hips' midpoint) for a pose; paired hands'
handedness labels are compared. Prints per clip and overall; exits 1 when a goal is missed: the
same count on >= 95 % of frames, mean distance <= 3 % (the mean over paired hands / poses), the
same handedness for every paired hand.

  .venv-mediapipe/bin/python tools/hands_pose/parity.py [--only hands|pose] [CLIP ...] [--json out.json]

MediaPipe gets RGB frames converted by the ffmpeg tool (tools/faces/detection_parity.py's
decode_rgb); FrameGraph decodes the file itself (`framegraph run` with a results sink).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import mediapipe as mp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "faces"))
from detection_parity import ROOT, decode_rgb  # noqa: E402

PIPELINES = {
    "hands": """source = file path={clip}
hands  = hand-landmarks max-hands=2 model=full
log    = results path={out}
source -> hands -> log
""",
    "pose": """source = file path={clip}
pose   = pose-landmarks
log    = results path={out}
source -> pose -> log
""",
}


def mediapipe_results(kind, frames):
    """Per frame: a list of (points [(x, y)] normalised, handedness label or None)."""
    found = []
    if kind == "hands":
        with mp.solutions.hands.Hands(static_image_mode=False, max_num_hands=2, model_complexity=1,
                                      min_detection_confidence=0.5, min_tracking_confidence=0.5) as hands:
            for frame in frames:
                r = hands.process(frame)
                marks = r.multi_hand_landmarks or []
                labels = [h.classification[0].label for h in (r.multi_handedness or [])]
                found.append([([(p.x, p.y) for p in m.landmark], labels[i] if i < len(labels) else None) for i, m in enumerate(marks)])
    else:
        with mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1, smooth_landmarks=True, enable_segmentation=False,
                                    min_detection_confidence=0.5, min_tracking_confidence=0.5) as pose:
            for frame in frames:
                r = pose.process(frame)
                found.append([([(p.x, p.y) for p in r.pose_landmarks.landmark], None)] if r.pose_landmarks else [])
    return found


def framegraph_results(kind, clip, cli):
    with tempfile.TemporaryDirectory() as tmp:
        pipeline, out = os.path.join(tmp, "p.fg"), os.path.join(tmp, "out.jsonl")
        open(pipeline, "w").write(PIPELINES[kind].format(clip=os.path.abspath(clip), out=out))
        subprocess.run([cli, "run", pipeline, "--quiet"], check=True, cwd=ROOT)
        lines = sorted((json.loads(l) for l in open(out) if l.strip()), key=lambda l: l["index"])
    return [[([(p[0], p[1]) for p in s["points"]], (s.get("classification") or {}).get("label")) for s in l["landmarks"]]
            for l in lines]


def scale_of(kind, a):
    """MediaPipe's size of the object, in pixels: wrist to middle knuckle, or shoulders' to hips' midpoint."""
    if kind == "hands":
        return float(np.linalg.norm(a[0] - a[9]))
    return float(np.linalg.norm((a[11] + a[12]) / 2 - (a[23] + a[24]) / 2))


def compare(kind, ref, ours, w, h):
    same_count, distances, labels_equal, labels_total = 0, [], 0, 0
    for r, o in zip(ref, ours):
        if len(r) == len(o):
            same_count += 1
        left = list(range(len(o)))
        for points, label in r:
            if not left:
                break
            a = np.array(points) * [w, h]
            d = {j: float(np.linalg.norm(a - np.array(o[j][0]) * [w, h], axis=1).mean()) for j in left}
            j = min(d, key=d.get)
            left.remove(j)
            size = scale_of(kind, a)
            if size > 0:
                distances.append(d[j] / size)
            if kind == "hands":
                labels_total += 1
                labels_equal += int(label == o[j][1])
    return same_count, distances, labels_equal, labels_total


def main():
    default_clips = sorted(glob.glob(os.path.join(ROOT, "..", "shared", "media", "webcam", "*.mkv")))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clips", nargs="*", default=default_clips)
    parser.add_argument("--cli", default=os.path.join(ROOT, ".build/release/framegraph"))
    parser.add_argument("--only", choices=["hands", "pose"])
    parser.add_argument("--json", help="write the per-clip and overall figures here")
    args = parser.parse_args()
    if not args.clips:
        sys.exit("no clips given and none in ../shared/media/webcam")
    kinds = [args.only] if args.only else ["hands", "pose"]
    report, ok = {}, True
    for kind in kinds:
        frames_total, same_total, all_distances, eq_total, lab_total = 0, 0, [], 0, 0
        per_clip = {}
        for clip in args.clips:
            frames, w, h = decode_rgb(clip)
            ref = mediapipe_results(kind, frames)
            ours = framegraph_results(kind, clip, args.cli)
            if len(ours) != len(ref):
                print(f"{os.path.basename(clip)}: FrameGraph wrote {len(ours)} frames, MediaPipe saw {len(ref)}")
            same, distances, eq, lab = compare(kind, ref, ours, w, h)
            n = len(ref)
            found_ref = sum(len(r) for r in ref)
            found_ours = sum(len(o) for o in ours)
            mean = statistics.mean(distances) if distances else float("nan")
            print(f"{kind:>5} {os.path.basename(clip):>12}: {n} frames; MediaPipe finds {found_ref}, FrameGraph {found_ours}; "
                  f"same count on {same}/{n} ({100 * same / max(n, 1):.1f} %); mean distance {100 * mean:.2f} % "
                  f"(max {100 * max(distances, default=0):.2f} %)" + (f"; handedness equal {eq}/{lab}" if kind == "hands" else ""))
            per_clip[os.path.basename(clip)] = {"frames": n, "same_count": same, "mediapipe": found_ref, "framegraph": found_ours,
                                                "mean_distance": mean, "max_distance": max(distances, default=0),
                                                "handedness_equal": eq, "paired": lab}
            frames_total += n
            same_total += same
            all_distances += distances
            eq_total += eq
            lab_total += lab
        share = same_total / max(frames_total, 1)
        mean = statistics.mean(all_distances) if all_distances else float("nan")
        p95 = float(np.percentile(all_distances, 95)) if all_distances else float("nan")
        median = statistics.median(all_distances) if all_distances else float("nan")
        within = sum(d <= 0.03 for d in all_distances) / max(len(all_distances), 1)
        kind_ok = share >= 0.95 and mean <= 0.03 and (kind != "hands" or eq_total == lab_total)
        ok = ok and kind_ok
        print(f"{kind:>5} all: {frames_total} frames; same count on {100 * share:.2f} % (goal >= 95 %); mean distance "
              f"{100 * mean:.2f} % (goal <= 3 %), median {100 * median:.2f} %, 95th percentile {100 * p95:.2f} %, "
              f"{100 * within:.1f} % of paired {kind} within 3 %"
              + (f"; handedness equal on {eq_total}/{lab_total} paired hands" if kind == "hands" else "")
              + f": {'met' if kind_ok else 'NOT met'}")
        report[kind] = {"clips": per_clip, "frames": frames_total, "same_count_share": share, "mean_distance": mean,
                        "p95_distance": p95, "median_distance": median, "within_3_percent": within, "handedness_equal": eq_total, "paired": lab_total, "met": kind_ok}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
