#!/usr/bin/env python3
"""Face mesh parity: FrameGraph's face-landmarks against MediaPipe's own face mesh solution
(mediapipe 0.10.21, `mp.solutions.face_mesh`: static_image_mode=False, max_num_faces=1,
refine_landmarks=False, min_detection_confidence=0.5, min_tracking_confidence=0.5) on every frame
of the given clips, both tracking from frame to frame.

Per frame: whether each finds a face (they must agree), and for frames where both do, the mean
distance of the 468 points, in pixels, as a share of MediaPipe's inter-ocular distance (points 33
and 263, the outer eye corners). Prints per clip and overall; exits 1 when a goal is missed
(agreement on every frame, mean distance <= 1.5 % of the inter-ocular distance on every frame).

  .venv-mediapipe/bin/python tools/faces/mesh_parity.py ../shared/media/webcam/*.mkv

MediaPipe gets RGB frames converted by the ffmpeg tool; FrameGraph decodes the file itself.
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

from detection_parity import ROOT, decode_rgb  # beside this file

PIPELINE = """source = file path={clip}
mesh   = face-landmarks max-faces=1 lines=none
log    = results path={out}
source -> mesh -> log
"""


def mediapipe_meshes(clip):
    frames, w, h = decode_rgb(clip)
    found = []
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=False,
                                         min_detection_confidence=0.5, min_tracking_confidence=0.5) as mesh:
        for frame in frames:
            result = mesh.process(frame)
            faces = result.multi_face_landmarks or []
            found.append([[(p.x, p.y) for p in face.landmark] for face in faces])
    return found, w, h


def framegraph_meshes(clip, cli):
    with tempfile.TemporaryDirectory() as tmp:
        pipeline, out = os.path.join(tmp, "p.fg"), os.path.join(tmp, "mesh.jsonl")
        open(pipeline, "w").write(PIPELINE.format(clip=os.path.abspath(clip), out=out))
        subprocess.run([cli, "run", pipeline, "--quiet"], check=True, cwd=ROOT)
        lines = sorted((json.loads(l) for l in open(out) if l.strip()), key=lambda l: l["index"])
    return [[[(p[0], p[1]) for p in s["points"]] for s in l["landmarks"]] for l in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clips", nargs="+")
    parser.add_argument("--cli", default=os.path.join(ROOT, ".build/release/framegraph"))
    args = parser.parse_args()
    total, disagree, errors = 0, 0, []
    for clip in args.clips:
        ref, w, h = mediapipe_meshes(clip)
        ours = framegraph_meshes(clip, args.cli)
        clip_errors, clip_disagree = [], 0
        for r, o in zip(ref, ours):
            if bool(r) != bool(o):
                clip_disagree += 1
                continue
            if not r:
                continue
            a, b = np.array(r[0]) * [w, h], np.array(o[0]) * [w, h]
            iod = np.linalg.norm(a[33] - a[263])
            clip_errors.append(float(np.linalg.norm(a - b, axis=1).mean() / iod))
        with_face = sum(1 for r in ref if r)
        print(f"{os.path.basename(clip):>12}: {len(ref)} frames ({len(ours)} from FrameGraph), MediaPipe finds a face on {with_face}; "
              f"disagree on {clip_disagree}; mean point distance / inter-ocular: median {100 * statistics.median(clip_errors) if clip_errors else float('nan'):.3f} %, "
              f"max {100 * max(clip_errors, default=0):.3f} %")
        total += len(ref)
        disagree += clip_disagree + abs(len(ref) - len(ours))
        errors += clip_errors
    ok = disagree == 0 and max(errors, default=0) <= 0.015
    print(f"all: {total} frames, disagree on {disagree}; mean point distance / inter-ocular distance: median "
          f"{100 * statistics.median(errors) if errors else float('nan'):.3f} %, max {100 * max(errors, default=0):.3f} % (goal <= 1.5 %): "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
