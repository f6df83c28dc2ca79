"""The Python package's cost per frame against the CLI, on one pipeline, interleaved.

    .venv-tools/bin/python tools/bench/python_vs_cli.py [--pipeline pipelines/face-detect.fg] [--input samples/media/portrait.mp4] [--rounds 3]

Needs the release build (`swift build -c release`: .build/release/framegraph and libFrameGraphC.so)
and numpy (.venv-tools). Both sides run the same pipeline with its video sink turned into a `null`
sink (a copy of the file beside it in .build/bench-python/, so models are found the same way),
offline, on the same clip. Each round runs, in turn: the CLI (CPU time of the child process), Python
iterating items with frames exposed (numpy views; CPU time of this process, engine threads
included), Python with frames=False (results only). Prints CPU ms per frame and wall ms per frame
for each, and the ratios against the CLI of the same round; then the cost of one copy of a frame
(`item.frame.copy()`), which the package avoids by handing out views.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("FRAMEGRAPH_LIB", str(ROOT / ".build/release/libFrameGraphC.so"))
import framegraph as fg  # noqa: E402


def null_pipeline(source: Path) -> Path:
    """A copy of `source` whose encode/png sinks are null sinks (same folder name depth for models)."""
    text = source.read_text()
    text = re.sub(r"^(\s*\w[\w-]*\s*=\s*)(encode|png)\b.*$", r"\1null", text, flags=re.M)
    out = ROOT / "pipelines" / f".bench-null-{source.name}"
    out.write_text(text)
    return out


def cli_run(cli: str, pipeline: Path, clip: str):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([cli, "run", str(pipeline), "--input", clip, "--quiet"], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def python_run(pipeline: Path, clip: str, frames: bool):
    cpu0, start = time.process_time(), time.perf_counter()
    count = 0
    checksum = 0
    with fg.run(str(pipeline), input=clip, frames=frames) as run:
        for item in run:
            count += 1
            if frames:
                checksum += int(item.frame[0, 0, 0])  # touch the view
            checksum += len(item.results["detections"]) if "detections" in item.results else 0
    return time.process_time() - cpu0, time.perf_counter() - start, count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", default=str(ROOT / "pipelines/face-detect.fg"))
    parser.add_argument("--input", default=str(ROOT / "samples/media/portrait.mp4"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cli = str(ROOT / ".build/release/framegraph")
    pipeline = null_pipeline(Path(args.pipeline))
    try:
        frames = None
        print(f"{Path(args.pipeline).name} (sinks → null) on {Path(args.input).name}, offline; {args.rounds} interleaved rounds")
        print(f"{'round':>5} {'side':<24} {'CPU ms/frame':>12} {'wall ms/frame':>13} {'CPU vs CLI':>10}")
        totals = {"cli": [0.0, 0.0], "py-frames": [0.0, 0.0], "py-results": [0.0, 0.0]}
        for r in range(1, args.rounds + 1):
            cpu, wall = cli_run(cli, pipeline, args.input)
            f_cpu, f_wall, n = python_run(pipeline, args.input, True)
            r_cpu, r_wall, n2 = python_run(pipeline, args.input, False)
            frames = n
            assert n == n2, (n, n2)
            for side, c, w in (("cli", cpu, wall), ("py-frames", f_cpu, f_wall), ("py-results", r_cpu, r_wall)):
                totals[side][0] += c
                totals[side][1] += w
                label = {"cli": "CLI (null sink)", "py-frames": "python, frames as numpy", "py-results": "python, results only"}[side]
                print(f"{r:>5} {label:<24} {1000 * c / n:>12.2f} {1000 * w / n:>13.2f} {c / cpu:>10.3f}")
        print(f"{'all':>5} frames per run: {frames}")
        for side, (c, w) in totals.items():
            print(f"{'all':>5} {side:<24} {1000 * c / (frames * args.rounds):>12.2f} {1000 * w / (frames * args.rounds):>13.2f} "
                  f"{c / totals['cli'][0]:>10.3f}")
        # One copy of a frame, for comparison with the view the package hands out.
        with fg.run(str(pipeline), input=args.input, duration=1) as run:
            item = next(iter(run))
            start = time.perf_counter()
            for _ in range(200):
                item.frame.copy()
            copy_ms = (time.perf_counter() - start) / 200 * 1000
            shape = item.frame.shape
        print(f"one copy of a {shape[1]}×{shape[0]} RGB frame (numpy .copy()): {copy_ms:.3f} ms")
    finally:
        pipeline.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
