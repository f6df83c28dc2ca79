"""The Python package's cost per frame against the CLI, on one pipeline, interleaved.

    .venv-tools/bin/python tools/bench/python_vs_cli.py [--pipeline pipelines/face-detect.fg] [--input samples/media/portrait.mp4] [--rounds 5]

Needs the release build (`swift build -c release`: .build/release/framegraph and libFrameGraphC.so)
and numpy (.venv-tools). Every side runs the same pipeline with its video sink turned into a `null`
sink (a copy of the file beside it in pipelines/, so models are found the same way), offline, on the
same clip. After one unmeasured run of each Python side (the library's one-time work in the
process), each round runs, in turn (A B C D E, then again):

  cli            the CLI writing the null output (CPU time of the child process: start-up included)
  py-frames      Python reading item.frame of every item (rgb="fast", the default: numpy views of
                 frames converted by swscale's SIMD path when read)
  py-exact       the same with rgb="exact" (swscale's accurate path, the png sink's pixels)
  py-unread      Python iterating items without reading item.frame (frames=True: nothing converted)
  py-results     Python with frames=False (results only)

Two CPU figures per side: the whole run's (the CLI process's CPU time, start-up and model loading
included; for Python this process's CPU time over fg.run and the iteration, engine threads
included, opening the run and loading models included, starting Python not), and the steady
state's, the stats' runCPUSeconds (the process's CPU since frames started to flow: the CLI's
--stats file, Python's run.stats, which counts the Python thread too). Prints each round, then the
median ms per frame of each side and the ratio of each side's median to the CLI's, for both; then the cost of one copy of a
frame (`item.frame.copy()`), which the package avoids by handing out views. The pipeline runs on
several threads (decoder, detector worker, sinks): the runs are not pinned to one core.
"""
import argparse
import json
import os
import tempfile
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("FRAMEGRAPH_LIB", str(ROOT / ".build/release/libFrameGraphC.so"))
import framegraph as fg  # noqa: E402

SIDES = {
    "cli": "CLI (null sink)",
    "py-frames": "python, frames read (fast)",
    "py-exact": "python, frames read (exact)",
    "py-unread": "python, frames not read",
    "py-results": "python, frames=False",
}


def null_pipeline(source: Path) -> Path:
    """A copy of `source` whose encode/png sinks are null sinks (same folder name depth for models)."""
    text = source.read_text()
    text = re.sub(r"^(\s*\w[\w-]*\s*=\s*)(encode|png)\b.*$", r"\1null", text, flags=re.M)
    out = ROOT / "pipelines" / f".bench-null-{source.name}"
    out.write_text(text)
    return out


def cli_run(cli: str, pipeline: Path, clip: str):
    with tempfile.TemporaryDirectory() as folder:
        stats = Path(folder) / "stats.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([cli, "run", str(pipeline), "--input", clip, "--quiet", "--stats", str(stats)], check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        report = json.loads(stats.read_text())
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, report["runCPUSeconds"], report["framesOut"]


def python_run(pipeline: Path, clip: str, side: str):
    cpu0, start = time.process_time(), time.perf_counter()
    count = 0
    checksum = 0
    options = {"py-frames": {}, "py-exact": {"rgb": "exact"}, "py-unread": {}, "py-results": {"frames": False}}[side]
    read = side in ("py-frames", "py-exact")
    with fg.run(str(pipeline), input=clip, **options) as run:
        for item in run:
            count += 1
            if read:
                checksum += int(item.frame[0, 0, 0])  # touch the view
            checksum += len(item.results.get("detections", []))
    return time.process_time() - cpu0, time.perf_counter() - start, run.stats["runCPUSeconds"], count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", default=str(ROOT / "pipelines/face-detect.fg"))
    parser.add_argument("--input", default=str(ROOT / "samples/media/portrait.mp4"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sides", default=",".join(SIDES), help="comma-separated, from: " + ", ".join(SIDES))
    args = parser.parse_args()
    sides = [s for s in args.sides.split(",") if s]
    assert sides and sides[0] == "cli" and all(s in SIDES for s in sides), "sides start with cli"
    cli = str(ROOT / ".build/release/framegraph")
    pipeline = null_pipeline(Path(args.pipeline))
    try:
        frames = None
        print(f"{Path(args.pipeline).name} (sinks → null) on {Path(args.input).name}, offline; {args.rounds} interleaved rounds of {', '.join(sides)}")
        per = {s: ([], [], []) for s in sides}
        print(f"{'round':>5} {'side':<28} {'CPU ms/frame':>12} {'vs CLI':>7} {'run CPU ms/frame':>16} {'vs CLI':>7} {'wall ms/frame':>13}")
        # One unmeasured run of each Python side first: the library's one-time work in this process
        # (loading, the RGB kernel's check against swscale) is not a cost per frame.
        for side in sides:
            if side != "cli":
                python_run(pipeline, args.input, side)
        for r in range(1, args.rounds + 1):
            for side in sides:
                if side == "cli":
                    cpu, wall, run_cpu, n = cli_run(cli, pipeline, args.input)
                else:
                    cpu, wall, run_cpu, n = python_run(pipeline, args.input, side)
                assert frames in (None, n), (frames, n)
                frames = n
                for values, value in zip(per[side], (cpu, run_cpu, wall)):
                    values.append(value)
            for side in sides:
                cpu, run_cpu, wall = (v[-1] for v in per[side])
                print(f"{r:>5} {SIDES[side]:<28} {1000 * cpu / frames:>12.3f} {cpu / per['cli'][0][-1]:>7.3f} {1000 * run_cpu / frames:>16.3f} "
                      f"{run_cpu / per['cli'][1][-1]:>7.3f} {1000 * wall / frames:>13.3f}")
        print(f"frames per run: {frames}")
        medians = {side: [statistics.median(v) for v in per[side]] for side in sides}
        print(f"{'median':>6} {'side':<27} {'CPU ms/frame':>12} {'vs CLI':>7} {'run CPU ms/frame':>16} {'vs CLI':>7} {'wall ms/frame':>13}")
        for side in sides:
            cpu, run_cpu, wall = medians[side]
            print(f"{'':>6} {SIDES[side]:<27} {1000 * cpu / frames:>12.3f} {cpu / medians['cli'][0]:>7.3f} {1000 * run_cpu / frames:>16.3f} "
                  f"{run_cpu / medians['cli'][1]:>7.3f} {1000 * wall / frames:>13.3f}")
        # One copy of a frame, for comparison with the view the package hands out.
        with fg.run(str(pipeline), input=args.input, duration=1) as run:
            item = next(iter(run))
            frame = item.frame
            start = time.perf_counter()
            for _ in range(200):
                frame.copy()
            copy_ms = (time.perf_counter() - start) / 200 * 1000
        print(f"one copy of a {frame.shape[1]}×{frame.shape[0]} RGB frame (numpy .copy()): {copy_ms:.3f} ms")
    finally:
        pipeline.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
