"""Frames pushed from Python (fg.Pipeline), fg.label, and 200 runs without a leak, on the set-up's
sample (samples/media/portrait.mp4) and models.

    FRAMEGRAPH_LIB=.build/release/libFrameGraphC.so python python/tests/check_pushed_and_label.py CLI SCRATCH

Run by EndToEndTests/PythonPackageTests with .venv-tools/bin/python (numpy). Prints one line per
check; exits 1 on the first failure, naming it.
"""
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import framegraph as fg  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLI, SCRATCH = sys.argv[1], Path(sys.argv[2])
SAMPLE = str(ROOT / "samples/media/portrait.mp4")
SCRATCH.mkdir(parents=True, exist_ok=True)


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def iou(a, b):
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    w = max(0.0, min(ax + aw, bx + bw) - max(ax, bx))
    h = max(0.0, min(ay + ah, by + bh) - max(ay, by))
    union = aw * ah + bw * bh - w * h
    return w * h / union if union > 0 else 0.0


# The sample's first 30 frames as RGB, made by ffmpeg, and the same frames as a file for the CLI.
raw = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", SAMPLE, "-frames:v", "30", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                     check=True, capture_output=True).stdout
frames = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 480, 640, 3)
check(len(frames) == 30, f"30 frames decoded ({len(frames)})")
subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "640x480", "-r", "30", "-i", "-",
                "-c:v", "ffv1", "-pix_fmt", "rgb24", str(SCRATCH / "frames.mkv")], input=raw, check=True)
cli = subprocess.run([CLI, "run", "face-detect", "--input", str(SCRATCH / "frames.mkv"), "--output", str(SCRATCH / "cli.mp4"),
                      "--results", str(SCRATCH / "cli.jsonl"), "--quiet"], capture_output=True, text=True)
check(cli.returncode == 0, f"the CLI on the same frames (status {cli.returncode}: {cli.stderr.strip()[:300]})")
cli_lines = [json.loads(l) for l in (SCRATCH / "cli.jsonl").read_text().splitlines() if l.strip()]

# Offline: process() is a call, one item per frame, the same faces as the CLI finds in those frames.
outs = []
with fg.Pipeline("face-detect", source="python", output=str(SCRATCH / "pushed.mp4")) as p:
    for i, frame in enumerate(frames):
        out = p.process(frame)
        outs.append((out.index, out.frame.copy(), out.results))
stats = p.stats
check([o[0] for o in outs] == list(range(30)), "process() returns frame 0, 1, 2 … in order, one per frame")
check(all(o[1].shape == (480, 640, 3) for o in outs), "each output is the pipeline's 640×480 RGB frame")
check(len(cli_lines) == 30, f"the CLI wrote 30 results lines ({len(cli_lines)})")
counts = sum(len(o[2]["detections"]) == len(c["detections"]) for o, c in zip(outs, cli_lines))
check(counts == 30 and sum(len(c["detections"]) for c in cli_lines) > 0, f"the same number of faces as the CLI on {counts}/30 frames")
boxes = [iou(a["box"], b["box"]) for o, c in zip(outs, cli_lines) for a, b in zip(o[2]["detections"], c["detections"])]
check(min(boxes) > 0.95 and sum(boxes) / len(boxes) > 0.98, f"boxes as the CLI's on the same pictures (IoU min {min(boxes):.4f}, mean {sum(boxes) / len(boxes):.4f}; the CLI reads them back from an FFV1 file)")
check(stats["framesOut"] == 30 if "framesOut" in stats else True, f"stats after close: framesOut {stats.get('framesOut')}")
played = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                         "-of", "csv=p=0", str(SCRATCH / "pushed.mp4")], capture_output=True, text=True).stdout.strip()
check(played == "30", f"the pipeline's own output video has the 30 pushed frames ({played})")

# Wrong frames: one clear line, as Python exceptions.
with fg.Pipeline("face-detect", source="python") as p:
    p.process(frames[0])
    try:
        p.push(np.zeros((240, 320, 3), np.uint8))
        check(False, "a frame of another size raises")
    except fg.RequestError as e:
        check("320×240" in str(e) and "640×480" in str(e), f"RequestError: {e}")
    try:
        p.push(np.zeros((480, 640), np.uint8))
        check(False, "a grey frame raises")
    except fg.RequestError as e:
        check("H×W×3" in str(e), f"RequestError: {e}")

# Live: push() never waits for the pipeline; a frame it has not taken yet is replaced by a newer one.
with fg.Pipeline("face-detect", source="python", mode="live", frames=False) as p:
    started = time.monotonic()
    for frame in np.concatenate([frames] * 4):
        p.push(frame)
    pushing = time.monotonic() - started
burst = p.stats
check(pushing < 5 and 1 <= burst["framesIn"] < 120,
      f"120 live pushes at once took {pushing:.2f} s; the pipeline took {burst['framesIn']} (the newest each time)")
with fg.Pipeline("face-detect", source="python", mode="live", frames=False) as p:
    for frame in np.concatenate([frames] * 2):
        p.push(frame)
        time.sleep(1 / 30)
paced = p.stats
check(paced["framesIn"] >= 50 and paced["mode"] == "live", f"60 pushes at 30 a second: {paced['framesIn']} taken, live")

# fg.label: ML Kit's labeler in one call, the CLI's `framegraph label` figures.
photo = SCRATCH / "photo.jpg"
subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", "2", "-i", SAMPLE, "-frames:v", "1", "-q:v", "2", str(photo)], check=True)
labels = fg.label(str(photo), max_results=5)
cli_label = subprocess.run([CLI, "label", str(photo), "--json", "--max-results", "5"], capture_output=True, text=True)
check(cli_label.returncode == 0, f"framegraph label ({cli_label.stderr.strip()[:200]})")
expected = json.loads(cli_label.stdout)["labels"]
check(len(labels) == len(expected) == 5 and [l.text for l in labels] == [e["text"] for e in expected]
      and all(abs(l.confidence - e["confidence"]) < 1e-6 for l, e in zip(labels, expected)),
      f"fg.label equals framegraph label: {[(l.text, round(l.confidence, 3)) for l in labels]}")
video = fg.label(SAMPLE, max_results=2, max_frames=4)
check(len(video) == 4 and [f.index for f in video] == [0, 1, 2, 3] and all(len(f.labels) == 2 for f in video),
      f"a video gives labels per frame ({[(f.index, round(f.time, 3)) for f in video]})")
try:
    fg.label(str(photo), model="no_such_model")
    check(False, "a missing model raises")
except fg.ModelError as e:
    check("no_such_model" in str(e), f"ModelError: {str(e)[:100]}…")
try:
    fg.label(str(photo), threshold=2)
    check(False, "a threshold above 1 raises")
except fg.RequestError as e:
    check("threshold" in str(e), f"RequestError: {e}")

# 200 runs opened, read and closed: memory stays flat (no leaked frames, models or threads).
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def one_run():
    with fg.run("face-detect", input=SAMPLE, duration=0.1) as run:
        for item in run:
            _ = item.frame[0, 0, 0]


for _ in range(20):
    one_run()
before = rss_mb()
started = time.monotonic()
for _ in range(180):
    one_run()
after = rss_mb()
check(after - before < 40, f"200 runs: resident memory {before:.0f} MB after 20, {after:.0f} MB after 200 "
      f"({after - before:+.1f} MB; {time.monotonic() - started:.1f} s for 180)")
print("all pushed-frame, label and leak checks passed")
