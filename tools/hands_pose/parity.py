#!/usr/bin/env python3
"""Hands and pose parity: FrameGraph's hand-landmarks and pose-landmarks against MediaPipe's own
solutions (mediapipe 0.10.21, video mode: `mp.solutions.hands.Hands(static_image_mode=False,
max_num_hands=2, model_complexity=1, min_detection_confidence=0.5, min_tracking_confidence=0.5)`
and `mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1, smooth_landmarks=True,
enable_segmentation=False, 0.5, 0.5)`), both tracking from frame to frame, on every frame of the
given clips (default: ../shared/media/webcam/*.mkv), FrameGraph with its defaults (the same models:
palm_detection_full + hand_landmark_full, pose_detection + pose_landmark_full).

Per frame: the number of hands (poses) each finds; on frames where both find some, MediaPipe's and
FrameGraph's hands are paired so that the paired hands' distances add up to the least (with one
hand each, those two; with two and two, the nearer of the two ways to pair them), the distance of a
pair being the mean distance of the 21 points (33 for a pose), in pixels, as a share of MediaPipe's
wrist-to-middle-knuckle length (points 0 and 9) for a hand, of its torso (shoulders' midpoint to
hips' midpoint) for a pose; paired hands' handedness labels are compared. Prints per clip and overall; exits 1 when a goal is missed: the
same count on >= 95 % of frames, mean distance <= 3 % (the mean over paired hands / poses), the
same handedness for every paired hand.

  .venv-mediapipe/bin/python tools/hands_pose/parity.py [--only hands|pose] [CLIP ...] [--json out.json]
      [--set hands.redetect-every=4 ...] [--mediapipe-cache DIR]

--set passes node options to `framegraph run` (the nodes are named `hands` and `pose`), to measure
what an option costs in parity. --mediapipe-cache keeps MediaPipe's results per clip in DIR (JSON,
keyed by the clip's name, size and modification time and the mediapipe version) so that a sweep of
options runs MediaPipe once.

MediaPipe gets RGB frames converted by the ffmpeg tool (tools/faces/detection_parity.py's
decode_rgb); FrameGraph decodes the file itself (`framegraph run` with a results sink).
"""
import argparse
import glob
import itertools
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


def cached_mediapipe_results(kind, clip, frames, cache):
    """mediapipe_results, kept in `cache` (a folder) when given."""
    if not cache:
        return mediapipe_results(kind, frames)
    st = os.stat(clip)
    key = f"{kind}-{os.path.basename(clip)}-{st.st_size}-{int(st.st_mtime)}-mediapipe-{mp.__version__}.json"
    path = os.path.join(cache, key)
    if os.path.exists(path):
        return [[(points, label) for points, label in f] for f in json.load(open(path))]
    found = mediapipe_results(kind, frames)
    os.makedirs(cache, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=cache, delete=False, suffix=".part") as f:
        json.dump(found, f)
    os.replace(f.name, path)
    return found


def framegraph_results(kind, clip, cli, sets=()):
    with tempfile.TemporaryDirectory() as tmp:
        pipeline, out = os.path.join(tmp, "p.fg"), os.path.join(tmp, "out.jsonl")
        open(pipeline, "w").write(PIPELINES[kind].format(clip=os.path.abspath(clip), out=out))
        subprocess.run([cli, "run", pipeline, "--quiet"] + [a for s in sets for a in ("--set", s)], check=True, cwd=ROOT)
        lines = sorted((json.loads(l) for l in open(out) if l.strip()), key=lambda l: l["index"])
    return [[([(p[0], p[1]) for p in s["points"]], (s.get("classification") or {}).get("label"),
              (s.get("classification") or {}).get("confidence")) for s in l["landmarks"]]
            for l in lines]


def scale_of(kind, a):
    """MediaPipe's size of the object, in pixels: wrist to middle knuckle, or shoulders' to hips' midpoint."""
    if kind == "hands":
        return float(np.linalg.norm(a[0] - a[9]))
    return float(np.linalg.norm((a[11] + a[12]) / 2 - (a[23] + a[24]) / 2))


def compare(kind, ref, ours, w, h, differing=None):
    """Frames with the same count, paired distances, equal and compared labels; `differing` (a list)
    gets (frame, MediaPipe's label, FrameGraph's label, FrameGraph's score, distance) per label that differs."""
    same_count, distances, labels_equal, labels_total = 0, [], 0, 0
    for index, (r, o) in enumerate(zip(ref, ours)):
        if len(r) == len(o):
            same_count += 1
        # share[i][j]: MediaPipe's hand i against FrameGraph's j, as a share of i's size.
        share = []
        for points, _ in r:
            a = np.array(points) * [w, h]
            size = scale_of(kind, a)
            share.append([float(np.linalg.norm(a - np.array(theirs[0]) * [w, h], axis=1).mean()) / size if size > 0 else float("nan")
                          for theirs in o])
        k = min(len(r), len(o))
        best = min(((sum(0 if np.isnan(share[i][j]) else share[i][j] for i, j in zip(mine, ours)), list(zip(mine, ours)))
                    for mine in itertools.combinations(range(len(r)), k) for ours in itertools.permutations(range(len(o)), k)),
                   key=lambda c: c[0], default=(0, []))[1]
        for i, j in best:
            label = r[i][1]
            if not np.isnan(share[i][j]):
                distances.append(share[i][j])
            if kind == "hands":
                labels_total += 1
                labels_equal += int(label == o[j][1])
                if label != o[j][1] and differing is not None:
                    differing.append((index, label, o[j][1], o[j][2], share[i][j]))
    return same_count, distances, labels_equal, labels_total


def main():
    default_clips = sorted(glob.glob(os.path.join(ROOT, "..", "shared", "media", "webcam", "*.mkv")))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clips", nargs="*", default=default_clips)
    parser.add_argument("--cli", default=os.path.join(ROOT, ".build/release/framegraph"))
    parser.add_argument("--only", choices=["hands", "pose"])
    parser.add_argument("--json", help="write the per-clip and overall figures here")
    parser.add_argument("--set", action="append", default=[], metavar="NODE.OPTION=VALUE",
                        help="a node option for FrameGraph's run (nodes: hands, pose); repeatable")
    parser.add_argument("--show-handedness", action="store_true", help="list each paired hand whose handedness differs")
    parser.add_argument("--mediapipe-cache", metavar="DIR", help="keep MediaPipe's results per clip here")
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
            ref = cached_mediapipe_results(kind, clip, frames, args.mediapipe_cache)
            ours = framegraph_results(kind, clip, args.cli, [s for s in args.set if s.startswith(kind + ".")])
            if len(ours) != len(ref):
                print(f"{os.path.basename(clip)}: FrameGraph wrote {len(ours)} frames, MediaPipe saw {len(ref)}")
            differing = []
            same, distances, eq, lab = compare(kind, ref, ours, w, h, differing)
            for index, theirs, mine, score, distance in differing if args.show_handedness else []:
                print(f"  {os.path.basename(clip)} frame {index}: MediaPipe {theirs}, FrameGraph {mine} (score {score:.3f}; "
                      f"{len(ref[index])} and {len(ours[index])} hands; distance {100 * distance:.1f} %)")
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
