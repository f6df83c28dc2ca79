#!/usr/bin/env python3
"""World landmarks and the pose's person mask against MediaPipe's own solutions (mediapipe 0.10.21,
video mode), on every frame of the given clips (default: ../shared/media/webcam/*.mkv):

- pose: `mp.solutions.pose.Pose(model_complexity=1, smooth_landmarks=True, enable_segmentation=True,
  smooth_segmentation=True)` vs `pose-segment world-landmarks=on` (the mask, with the pose's results
  riding on it). Per frame where both find a pose: the mean 3-D distance of the 33 world landmarks
  in centimetres; the masks' mean absolute difference (0…255 scale) and their IoU at 0.5.
- hands: `mp.solutions.hands.Hands(max_num_hands=2, model_complexity=1)` vs `hand-landmarks
  world-landmarks=on`: each MediaPipe hand paired with the FrameGraph hand whose image points are
  nearest; the mean 3-D distance of the 21 world landmarks in millimetres, over all paired hands and
  over those whose image points agree (mean distance <= 3 % of the wrist-to-middle-knuckle length,
  parity.py's measure): where the two follow a hand differently, the world points differ as the
  image points do.

  .venv-mediapipe/bin/python tools/hands_pose/world_mask_parity.py [--only hands|pose] [CLIP ...]

Prints per clip and overall (mean and 95th percentile). Goals (set here, before measuring): pose
world points within 1 cm on average, hand world points within 2 mm, mask IoU >= 0.95 and mean
absolute difference <= 3 (of 255); exits 1 when one is missed.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import mediapipe as mp
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "faces"))
from detection_parity import ROOT, decode_rgb  # noqa: E402

POSE = """source = file path={clip}
pose   = pose-segment world-landmarks=on
log    = results path={out}
masks  = png path={masks}/m-%05d.png
source -> pose -> log
pose -> masks
"""
HANDS = """source = file path={clip}
hands  = hand-landmarks max-hands=2 model=full world-landmarks=on
log    = results path={out}
source -> hands -> log
"""


def run_framegraph(text, cli, tmp):
    pipeline = os.path.join(tmp, "p.fg")
    open(pipeline, "w").write(text)
    subprocess.run([cli, "run", pipeline, "--quiet"], check=True, cwd=ROOT)


def pose_clip(clip, cli):
    frames, w, h = decode_rgb(clip)
    ref = []
    with mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1, smooth_landmarks=True, enable_segmentation=True,
                                smooth_segmentation=True, min_detection_confidence=0.5, min_tracking_confidence=0.5) as pose:
        for frame in frames:
            r = pose.process(frame)
            world = np.array([(p.x, p.y, p.z) for p in r.pose_world_landmarks.landmark]) if r.pose_world_landmarks else None
            ref.append((world, r.segmentation_mask))
    with tempfile.TemporaryDirectory() as tmp:
        out, masks = os.path.join(tmp, "out.jsonl"), os.path.join(tmp, "masks")
        os.mkdir(masks)
        run_framegraph(POSE.format(clip=os.path.abspath(clip), out=out, masks=masks), cli, tmp)
        lines = sorted((json.loads(l) for l in open(out) if l.strip()), key=lambda l: l["index"])
        ours = []
        for i, line in enumerate(lines):
            sets = [s for s in line["landmarks"] if s.get("world")]
            world = np.array([p[:3] for p in sets[0]["world"]]) if sets else None
            mask = np.asarray(Image.open(os.path.join(masks, f"m-{i:05d}.png")).convert("L"), dtype=np.float32) / 255
            ours.append((world, mask))
    world_cm, mad, iou = [], [], []
    for (rw, rm), (ow, om) in zip(ref, ours):
        if rw is None or ow is None:
            continue
        world_cm.append(100 * float(np.linalg.norm(rw - ow, axis=1).mean()))
        if rm is not None:
            mad.append(255 * float(np.abs(rm - om).mean()))
            a, b = rm >= 0.5, om >= 0.5
            union = np.logical_or(a, b).sum()
            iou.append(float(np.logical_and(a, b).sum() / union) if union else 1.0)
    return len(ref), world_cm, mad, iou


def hands_clip(clip, cli):
    frames, w, h = decode_rgb(clip)
    ref = []
    with mp.solutions.hands.Hands(static_image_mode=False, max_num_hands=2, model_complexity=1,
                                  min_detection_confidence=0.5, min_tracking_confidence=0.5) as hands:
        for frame in frames:
            r = hands.process(frame)
            ref.append([(np.array([(p.x * w, p.y * h) for p in m.landmark]), np.array([(p.x, p.y, p.z) for p in wm.landmark]))
                        for m, wm in zip(r.multi_hand_landmarks or [], r.multi_hand_world_landmarks or [])])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl")
        run_framegraph(HANDS.format(clip=os.path.abspath(clip), out=out), cli, tmp)
        lines = sorted((json.loads(l) for l in open(out) if l.strip()), key=lambda l: l["index"])
    ours = [[(np.array([(p[0] * w, p[1] * h) for p in s["points"]]), np.array([p[:3] for p in s["world"]]))
             for s in line["landmarks"] if s.get("world")] for line in lines]
    world_mm, agreeing_mm = [], []
    for r, o in zip(ref, ours):
        left = list(range(len(o)))
        for image, world in r:
            if not left:
                break
            j = min(left, key=lambda k: float(np.linalg.norm(image - o[k][0], axis=1).mean()))
            left.remove(j)
            mm = 1000 * float(np.linalg.norm(world - o[j][1], axis=1).mean())
            world_mm.append(mm)
            size = float(np.linalg.norm(image[0] - image[9]))
            if size > 0 and float(np.linalg.norm(image - o[j][0], axis=1).mean()) <= 0.03 * size:
                agreeing_mm.append(mm)
    return len(ref), world_mm, agreeing_mm


def summary(values):
    return (float(np.mean(values)), float(np.percentile(values, 95))) if values else (float("nan"), float("nan"))


def main():
    default_clips = sorted(glob.glob(os.path.join(ROOT, "..", "shared", "media", "webcam", "*.mkv")))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clips", nargs="*", default=default_clips)
    parser.add_argument("--cli", default=os.path.join(ROOT, ".build/release/framegraph"))
    parser.add_argument("--only", choices=["hands", "pose"])
    args = parser.parse_args()
    if not args.clips:
        sys.exit("no clips given and none in ../shared/media/webcam")
    ok = True
    if args.only in (None, "pose"):
        all_world, all_mad, all_iou, frames = [], [], [], 0
        for clip in args.clips:
            n, world, mad, iou = pose_clip(clip, args.cli)
            frames += n
            all_world += world
            all_mad += mad
            all_iou += iou
            print(f"pose {os.path.basename(clip):>12}: {n} frames, {len(world)} compared; world {summary(world)[0]:.2f} cm; "
                  f"mask |diff| {summary(mad)[0]:.2f}/255, IoU {summary(iou)[0]:.4f}")
        (wm, wp), (mm, mp95), (im, _) = summary(all_world), summary(all_mad), summary(all_iou)
        iou_p5 = float(np.percentile(all_iou, 5)) if all_iou else float("nan")
        met = wm <= 1 and im >= 0.95 and mm <= 3
        ok = ok and met
        print(f"pose all: {frames} frames, {len(all_world)} with a pose in both; world landmarks mean {wm:.2f} cm (95th pct {wp:.2f}; goal <= 1); "
              f"mask mean |diff| {mm:.2f}/255 (95th pct {mp95:.2f}; goal <= 3), IoU mean {im:.4f} (5th pct {iou_p5:.4f}; goal >= 0.95): "
              f"{'met' if met else 'NOT met'}")
    if args.only in (None, "hands"):
        all_world, all_agreeing, frames = [], [], 0
        for clip in args.clips:
            n, world, agreeing = hands_clip(clip, args.cli)
            frames += n
            all_world += world
            all_agreeing += agreeing
            print(f"hands {os.path.basename(clip):>12}: {n} frames, {len(world)} hands paired; world {summary(world)[0]:.2f} mm, "
                  f"{summary(agreeing)[0]:.2f} mm on the {len(agreeing)} whose image points agree")
        (wm, wp), (am, ap) = summary(all_world), summary(all_agreeing)
        met = am <= 2
        ok = ok and met
        print(f"hands all: {frames} frames, {len(all_world)} hands paired; world landmarks mean {wm:.2f} mm (95th pct {wp:.2f}, "
              f"median {float(np.median(all_world)) if all_world else float('nan'):.2f}); on the {len(all_agreeing)} hands whose image points agree "
              f"within 3 %: mean {am:.2f} mm (95th pct {ap:.2f}; goal <= 2): {'met' if met else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
