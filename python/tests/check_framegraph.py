"""The Python package against the CLI, on the set-up's sample (samples/media/portrait.mp4).

    FRAMEGRAPH_LIB=.build/release/libFrameGraphC.so python python/tests/check_framegraph.py CLI SCRATCH

Run by EndToEndTests/PythonPackageTests with .venv-tools/bin/python (numpy); installs nothing: the
package is imported from python/ beside this script. Prints one line per check; exits 1 on the
first failure, naming it.
"""
import _thread
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import framegraph as fg  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLI, SCRATCH = sys.argv[1], Path(sys.argv[2])
SAMPLE = str(ROOT / "samples/media/portrait.mp4")
PIPELINE = str(ROOT / "pipelines/face-detect.fg")
SETTINGS = {"source.duration": 2}  # 60 frames: the same --set on both sides


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def decode(pattern_or_file, width, height):
    """Every frame of a file or an image sequence as RGB, decoded by ffmpeg."""
    args = ["ffmpeg", "-nostdin", "-v", "error"]
    if "%" in str(pattern_or_file):
        args += ["-start_number", "0"]
    args += ["-i", str(pattern_or_file), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    raw = subprocess.run(args, check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, height, width, 3)


def playable_frames(path):
    """Frames ffprobe counts in a video file (decoding it to the end)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_frames", "-of", "csv=p=0", str(path)], capture_output=True, text=True)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else -1


SCRATCH.mkdir(parents=True, exist_ok=True)
(SCRATCH / "cli").mkdir(exist_ok=True)

# The CLI's run: every output frame as a PNG (the frames as the pipeline made them), and the results.
cli = subprocess.run([CLI, "run", PIPELINE, "--input", SAMPLE, "--output", str(SCRATCH / "cli/%05d.png"),
                      "--results", str(SCRATCH / "cli.jsonl"), "--quiet"] + [f"--set={k}={v}" for k, v in SETTINGS.items()],
                     capture_output=True, text=True)
check(cli.returncode == 0, f"the CLI's run (status {cli.returncode}: {cli.stderr.strip()[:300]})")
cli_results = [json.loads(line) for line in (SCRATCH / "cli.jsonl").read_text().splitlines() if line.strip()]

# The same run from Python, writing its own video too.
items = []
with fg.run(PIPELINE, input=SAMPLE, output=str(SCRATCH / "python.mp4"), set=SETTINGS) as run:
    for item in run:
        items.append((item.index, item.time, item.frame.copy(), item.results, item.frame.flags.writeable))
stats = run.stats
check(len(items) > 0, f"python run delivered {len(items)} items")
height, width = items[0][2].shape[:2]
cli_frames = decode(SCRATCH / "cli/%05d.png", width, height)
check(len(items) == len(cli_frames), f"frame count: python {len(items)}, CLI {len(cli_frames)}")
check([i[0] for i in items] == list(range(len(items))), "indices 0, 1, 2 … in order")
check(all(i[2].shape == (height, width, 3) and i[2].dtype == np.uint8 for i in items), f"frames are uint8 {height}×{width}×3")
check(not any(i[4] for i in items), "frames are read-only views")
same = sum(int(np.array_equal(i[2], f)) for i, f in zip(items, cli_frames))
worst = max(int(np.abs(i[2].astype(int) - f.astype(int)).max()) for i, f in zip(items, cli_frames))
check(same == len(items), f"pixels equal to the CLI's PNGs: {same}/{len(items)} frames identical (largest difference {worst})")
check(len(cli_results) == len(items), f"results lines: python {len(items)}, CLI {len(cli_results)}")
check([i[3] for i in items] == cli_results, "results equal to the CLI's --results JSONL, line by line")
check(sum(len(r["detections"]) for r in cli_results) > 0, "the clip has faces (the comparison compares something)")
check(abs(items[1][1] - items[0][1] - 1 / 30) < 1e-6, f"times in seconds ({items[0][1]:.4f}, {items[1][1]:.4f} …)")
check(isinstance(stats, dict) and "nodes" in stats and stats["program"]["itemsDelivered"] == len(items),
      f"final stats present ({len(stats.get('nodes', []))} nodes, {stats.get('program')})")
check(playable_frames(SCRATCH / "python.mp4") == len(items), "python's --output video has every frame")

# Errors: one line, the CLI's message, a Python exception of the right class.
try:
    fg.run(PIPELINE, input=SAMPLE, set={"facez.min-score": 0.5})
    check(False, "a --set naming no node raises")
except fg.PipelineError as e:
    check("no node 'facez'" in str(e) and "did you mean 'faces'" in str(e) and "\n" not in str(e), f"PipelineError: {e}")
try:
    fg.run("no-such-pipeline")
    check(False, "an unknown pipeline raises")
except fg.PipelineError as e:
    check("no pipeline file 'no-such-pipeline'" in str(e) and "face-detect" in str(e), f"PipelineError: {str(e)[:120]}…")
try:
    fg.run(PIPELINE, input=str(SCRATCH / "missing.mp4"))
    check(False, "a missing input raises")
except fg.FrameGraphError as e:
    check("missing.mp4" in str(e) and "\n" not in str(e), f"{type(e).__name__}: {e}")
try:
    fg.run(PIPELINE, input=SAMPLE, mode="sideways")
    check(False, "a bad mode raises")
except fg.RequestError as e:
    check("live or offline" in str(e), f"RequestError: {e}")

# Closing early leaves a playable file with what was made.
run = fg.run(PIPELINE, input=SAMPLE, output=str(SCRATCH / "early.mp4"))
taken = [next(run).index for _ in range(5)]
run.close()
early = playable_frames(SCRATCH / "early.mp4")
check(taken == [0, 1, 2, 3, 4] and early >= 5, f"close() after 5 items: early.mp4 plays, {early} frames")
check(run.stats.get("interrupted") is True or run.stats.get("program", {}).get("ended") is True, "stats after close")

# Ctrl-C (KeyboardInterrupt) while iterating a live run stops it and leaves a playable file.
run = fg.run(PIPELINE, input=SAMPLE, output=str(SCRATCH / "interrupted.mp4"), mode="live")
threading.Timer(1.0, _thread.interrupt_main).start()
seen = 0
try:
    for item in run:
        seen += 1
    check(False, "KeyboardInterrupt reached the loop")
except KeyboardInterrupt:
    pass
interrupted = playable_frames(SCRATCH / "interrupted.mp4")
check(seen > 0 and interrupted > 0, f"Ctrl-C after {seen} items: interrupted.mp4 plays, {interrupted} frames; run closed: {run._handle is None}")
# Live, a reader slower than the output clock loses the oldest items (counted), never holds the run.
with fg.run(PIPELINE, input=SAMPLE, mode="live", queue=1, frames=False) as run:
    slow = []
    for item in run:
        slow.append(item.index)
        time.sleep(0.2)  # 5 items a second against 30 a second
        if len(slow) == 5:
            break
    live_stats = run.stats
dropped = live_stats["program"]["itemsDropped"]
check(dropped > 0 and slow == sorted(slow) and slow[-1] - slow[0] > 4, f"live, a slow reader: items {slow}, {dropped} dropped")

# The sample in samples/python runs as its docstring says.
sample = subprocess.run([sys.executable, str(ROOT / "samples/python/faces.py"), SAMPLE, str(SCRATCH / "sample.mp4")], capture_output=True,
                        text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "python")}, cwd=str(ROOT))
last = sample.stdout.strip().splitlines()[-1] if sample.stdout.strip() else ""
check(sample.returncode == 0 and last.startswith("300 frames, 300 out") and playable_frames(SCRATCH / "sample.mp4") == 300,
      f"samples/python/faces.py: {last or sample.stderr.strip()[-300:]}")
print("all python checks passed")
