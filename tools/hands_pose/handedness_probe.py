#!/usr/bin/env python3
"""Why a paired hand's handedness differs from MediaPipe's, on the frames that
`tools/hands_pose/parity.py --show-handedness` lists: on frame F, the hand landmark model
(hand_landmark_full, run by LiteRT as MediaPipe runs it) reads two crops of the same picture — the
region MediaPipe's tracking made from MediaPipe's own hand on frame F − 1, and the region
FrameGraph's made from FrameGraph's hand on F − 1 (both by MediaPipe's HandLandmarksToRectCalculator
rule: the 12 region points' bounds along the wrist → knuckles line, shifted up a tenth, squared,
×2), each sampled corner to corner, bilinear, edge pixels repeated, as ImageToTensor does. Prints,
per hand, both regions (centre, side, rotation), the handedness score LiteRT gives on each and how
far LiteRT's points on each lie from what MediaPipe and FrameGraph reported on F (in % of the
wrist → middle-knuckle length): when LiteRT on MediaPipe's region gives MediaPipe's points and label
and on FrameGraph's region FrameGraph's, the label follows the region, i.e. the two trackers' regions
differ (their histories), not the model's arithmetic or the crop.

  .venv-tools/bin/python tools/hands_pose/handedness_probe.py CLIP:FRAME [CLIP:FRAME …] \\
      --mediapipe-cache DIR [--cli .build/release/framegraph] [--set hands.KEY=VALUE …]

CLIP is a file name under ../shared/media/webcam or a path; DIR holds MediaPipe's results as
parity.py --mediapipe-cache keeps them (run parity.py with it first). FrameGraph's results come
from `framegraph run` with the hands node (its defaults, and --set options).
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGION_POINTS = [0, 1, 2, 3, 5, 6, 9, 10, 13, 14, 17, 18]


def decode_rgb(clip):
    w, h = (int(v) for v in subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                            "-of", "csv=p=0", clip], capture_output=True, text=True, check=True).stdout.strip().split(","))
    raw = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", clip, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3), w, h


def normalized(angle):
    return angle - 2 * math.pi * math.floor((angle + math.pi) / (2 * math.pi))


def hand_region(points, w, h):
    """(centre x, centre y, side, rotation), pixels: the next frame's region from 21 normalised points."""
    p = np.array(points, dtype=np.float64)
    sub = p[REGION_POINTS]
    x0, y0 = p[0, 0] * w, p[0, 1] * h
    m = ((p[5] + p[13]) / 2 + p[9]) / 2
    rotation = normalized(math.pi / 2 - math.atan2(-(m[1] * h - y0), m[0] * w - x0))
    ax, ay = (sub.min(0) + sub.max(0)) / 2
    back = normalized(-rotation)
    ox, oy = (sub[:, 0] - ax) * w, (sub[:, 1] - ay) * h
    px, py = ox * math.cos(back) - oy * math.sin(back), ox * math.sin(back) + oy * math.cos(back)
    pcx, pcy = (px.min() + px.max()) / 2, (py.min() + py.max()) / 2
    c, s = math.cos(rotation), math.sin(rotation)
    cx, cy = pcx * c - pcy * s + ax * w, pcx * s + pcy * c + ay * h
    width, height = px.max() - px.min(), py.max() - py.min()
    # Shifted by −0.1 of the height along the region's own y axis, squared on the long side, ×2.
    cx, cy = cx + 0.1 * height * s, cy - 0.1 * height * c
    return cx, cy, max(width, height) * 2, rotation


def crop(frame, region, size=224):
    """The region as the model's input: size × size × 3 in 0…1, corner to corner, bilinear, edges repeated."""
    cx, cy, side, r = region
    c, s, step = math.cos(r), math.sin(r), side / size
    a0 = -side / 2
    ox, oy = cx + c * a0 - s * a0, cy + s * a0 + c * a0
    cols, rows = np.meshgrid(np.arange(size, dtype=np.float64), np.arange(size, dtype=np.float64))
    x = ox + cols * c * step - rows * s * step
    y = oy + cols * s * step + rows * c * step
    hgt, wid = frame.shape[:2]
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[..., None], (y - y0)[..., None]
    x0, y0 = x0.astype(int), y0.astype(int)

    def at(yy, xx):
        return frame[np.clip(yy, 0, hgt - 1), np.clip(xx, 0, wid - 1)].astype(np.float64)
    top = at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx
    bottom = at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx
    return ((top * (1 - fy) + bottom * fy) / 255).astype(np.float32)[None]


class Landmarker:
    def __init__(self, path):
        self.model = Interpreter(model_path=path)
        self.model.allocate_tensors()
        self.input = self.model.get_input_details()[0]["index"]
        self.outputs = {d["name"]: d["index"] for d in self.model.get_output_details()}

    def read(self, frame, region, w, h):
        """Handedness ("Left" score), presence, and the 21 points normalised to the frame."""
        self.model.set_tensor(self.input, crop(frame, region))
        self.model.invoke()
        out = {n: self.model.get_tensor(i).reshape(-1) for n, i in self.outputs.items()}
        marks = out["Identity"].reshape(21, 3)[:, :2] / 224
        cx, cy, side, r = region
        c, s = math.cos(r), math.sin(r)
        dx, dy = (marks[:, 0] - 0.5) * side, (marks[:, 1] - 0.5) * side
        points = np.stack([(cx + dx * c - dy * s) / w, (cy + dx * s + dy * c) / h], axis=1)
        return float(out["Identity_2"][0]), float(out["Identity_1"][0]), points


def distance(a, b, w, h):
    """Mean point distance as a share of a's wrist → middle-knuckle length."""
    a, b = np.array(a) * [w, h], np.array(b) * [w, h]
    size = np.linalg.norm(a[0] - a[9])
    return float(np.linalg.norm(a - b, axis=1).mean() / size) if size > 0 else float("nan")


def nearest(points, hands, w, h):
    """The hand of `hands` (a list of (points, …)) nearest `points`, and its distance."""
    scored = [(distance(points, hand[0], w, h), hand) for hand in hands]
    return min(scored, key=lambda t: t[0], default=(float("nan"), None))


def framegraph_hands(clip, cli, sets):
    with tempfile.TemporaryDirectory() as tmp:
        pipeline, out = os.path.join(tmp, "p.fg"), os.path.join(tmp, "out.jsonl")
        open(pipeline, "w").write(f"source = file path={os.path.abspath(clip)}\nhands = hand-landmarks max-hands=2 model=full\n"
                                  f"log = results path={out}\nsource -> hands -> log\n")
        subprocess.run([cli, "run", pipeline, "--quiet"] + [a for s in sets for a in ("--set", s)], check=True, cwd=ROOT)
        lines = sorted((json.loads(l) for l in open(out) if l.strip()), key=lambda l: l["index"])
    return [[([(p[0], p[1]) for p in s["points"]], (s.get("classification") or {}).get("label"),
              (s.get("classification") or {}).get("confidence")) for s in l["landmarks"]] for l in lines]


def mediapipe_hands(clip, cache):
    st = os.stat(clip)
    pattern = os.path.join(cache, f"hands-{os.path.basename(clip)}-{st.st_size}-{int(st.st_mtime)}-mediapipe-*.json")
    found = glob.glob(pattern)
    if not found:
        sys.exit(f"no MediaPipe results for {clip} in {cache}: run tools/hands_pose/parity.py --mediapipe-cache {cache} first")
    return [[(points, label) for points, label in f] for f in json.load(open(found[0]))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("frames", nargs="+", metavar="CLIP:FRAME")
    ap.add_argument("--mediapipe-cache", required=True, metavar="DIR")
    ap.add_argument("--cli", default=os.path.join(ROOT, ".build/release/framegraph"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models/cache/hand_landmark_full.tflite"))
    ap.add_argument("--set", action="append", default=[], metavar="hands.KEY=VALUE")
    a = ap.parse_args()
    marker = Landmarker(a.model)
    by_clip = {}
    for item in a.frames:
        name, _, index = item.rpartition(":")
        by_clip.setdefault(name, []).append(int(index))
    for name, indices in by_clip.items():
        clip = name if os.path.exists(name) else os.path.join(ROOT, "..", "shared", "media", "webcam", name)
        frames, w, h = decode_rgb(clip)
        ref, ours = mediapipe_hands(clip, a.mediapipe_cache), framegraph_hands(clip, a.cli, a.set)
        for f in indices:
            if f < 1 or f >= min(len(ref), len(ours)):
                print(f"{name} frame {f}: outside 1…{min(len(ref), len(ours)) - 1}")
                continue
            for mp_points, mp_label in ref[f]:
                d, mine = nearest(mp_points, ours[f], w, h)
                if mine is None or mine[1] == mp_label:
                    continue
                print(f"{name} frame {f}: MediaPipe {mp_label}, FrameGraph {mine[1]} (its score {mine[2]:.3f}); points {100 * d:.1f} % apart")
                for who, hand, previous in (("MediaPipe", mp_points, ref[f - 1]), ("FrameGraph", mine[0], ours[f - 1])):
                    gap, before = nearest(hand, previous, w, h)
                    if before is None:
                        print(f"  {who}'s hand had no hand before it on frame {f - 1}: a new palm")
                        continue
                    region = hand_region(before[0], w, h)
                    left, presence, points = marker.read(frames[f], region, w, h)
                    print(f"  {who}'s region from its frame {f - 1} hand: centre ({region[0]:.1f}, {region[1]:.1f}), side {region[2]:.1f}, "
                          f"rotation {math.degrees(region[3]):.1f}°; LiteRT there: Left score {left:.3f} → {'Left' if left >= 0.5 else 'Right'}, "
                          f"presence {presence:.3f}, points {100 * distance(hand, points.tolist(), w, h):.2f} % from {who}'s")
                mp_region = hand_region(nearest(mp_points, ref[f - 1], w, h)[1][0], w, h) if ref[f - 1] else None
                our_region = hand_region(nearest(mine[0], ours[f - 1], w, h)[1][0], w, h) if ours[f - 1] else None
                if mp_region and our_region:
                    print(f"  regions differ by centre {math.hypot(mp_region[0] - our_region[0], mp_region[1] - our_region[1]):.1f} px, "
                          f"side {our_region[2] - mp_region[2]:+.1f} px, rotation {math.degrees(normalized(our_region[3] - mp_region[3])):+.1f}°")
    return 0


if __name__ == "__main__":
    sys.exit(main())
