#!/usr/bin/env bash
# Cost per stream: N streams of a 640×480 clip (file sources looping, paced live at 30 fps, each
# written to its own MP4) in ONE framegraph process (`--input` given N times: one network worker and
# one model for all) against N SEPARATE framegraph processes running at the same time, for each N,
# the two sides interleaved (one then the other, order alternating with N) in one run of this script.
# Prints per side: the cores used (the run's CPU seconds from the first frame, start-up excluded,
# over its elapsed seconds; processes summed), late+repeated (frames dropped late plus ticks that
# repeated a frame) and dropped-busy, each as a share of the stream's frames in (the worst stream,
# and all streams together), end-to-end p99 (the worst stream's), and peak RSS (the process's, or
# the processes' sum). Asserts nothing.
#
#   tools/bench/streams.sh [CLIP] [DURATION] [COUNTS] [PIPELINE] [BATCH]
#   tools/bench/streams.sh ../shared/media/webcam/again.mkv 20 "1 2 4 8"
#   tools/bench/streams.sh ../shared/media/webcam/again.mkv 20 "16" pipelines/face-detect.fg
#   FRAMEGRAPH_BIN_OLD=/tmp/old/framegraph tools/bench/streams.sh … (adds the old build's one process)
set -euo pipefail
cd "$(dirname "$0")/../.."
clip=${1:-../shared/media/webcam/again.mkv}
duration=${2:-20}
counts=${3:-1 2 4 8}
pipeline=${4:-pipelines/portrait-segment.fg}
batch=${5:-1}
bin=${FRAMEGRAPH_BIN:-.build/release/framegraph}
# FRAMEGRAPH_BIN_OLD: another build's one-process side ("one-old") too, interleaved with the others.
old=${FRAMEGRAPH_BIN_OLD:-}
[ -x "$bin" ] || swift build -c release --product framegraph
[ -f "$clip" ] || { echo "streams: no clip $clip (../shared/media/webcam holds the default)"; exit 1; }
dir=out/streams
rm -rf "$dir"
mkdir -p "$dir"
echo "$(basename "$pipeline") live at 30 fps, $(basename "$clip") looping, ${duration} s per side, batch $batch, $(nproc) cores"
printf '%-3s %-9s %6s %17s %17s %9s %8s\n' N side cores "late+rep worst/all" "busy% worst/all" "p99 ms" "RSS MiB"
for n in $counts; do
  sides=(one separate)
  [ $((n % 2)) -eq 1 ] && sides=(separate one)
  [ -n "$old" ] && sides=("${sides[0]}" one-old "${sides[1]}")
  for side in "${sides[@]}"; do
    run="$dir/$side-$n"
    mkdir -p "$run"
    side_bin=$bin
    [ "$side" = one-old ] && side_bin=$old
    python3 - "$side_bin" "$pipeline" "$clip" "$duration" "$n" "$side" "$run" "$batch" <<'PY'
import json, os, subprocess, sys
bin_, pipeline, clip, duration, n, side, run, batch = sys.argv[1:9]
n = int(n)
env = dict(os.environ, FRAMEGRAPH_MODELS="models/cache")
common = ["run", pipeline, "--mode", "live", "--loop", "--duration", duration, "--quiet"]
if side.startswith("one"):
    cmds = [[bin_] + common + sum([["--input", clip] for _ in range(n)], [])
            + ["--batch", batch, "--output", f"{run}/{{stream}}.mp4", "--stats", f"{run}/stats.json"]]
else:
    cmds = [[bin_] + common + ["--input", clip, "--output", f"{run}/{i}.mp4", "--stats", f"{run}/stats-{i}.json"] for i in range(n)]
procs = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL) for c in cmds]
rss = 0
for p in procs:
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0: sys.exit(f"streams: {' '.join(p.args[:4])} … exited with {status}")
    rss += usage.ru_maxrss  # KiB
stats = [json.load(open(os.path.join(run, f))) for f in sorted(os.listdir(run)) if f.startswith("stats")]
cpu = sum(s["runCPUSeconds"] for s in stats)
elapsed = max(s["elapsedSeconds"] for s in stats)
streams = [st for s in stats for st in (s.get("streams") or [s])]
def late(st): return st["droppedLate"] + st["duplicated"]
def pct(a, b): return 100.0 * a / b if b else 0.0
late_worst = max(pct(late(st), st["framesIn"]) for st in streams)
late_all = pct(sum(late(st) for st in streams), sum(st["framesIn"] for st in streams))
busy_worst = max(pct(st["droppedBusy"], st["framesIn"]) for st in streams)
busy_all = pct(sum(st["droppedBusy"] for st in streams), sum(st["framesIn"] for st in streams))
p99 = max(st["endToEnd"]["p99"] for st in streams)
print(f"{n:<3d} {side:<9s} {cpu / elapsed:6.2f} {late_worst:8.2f}/{late_all:6.2f} % {busy_worst:8.2f}/{busy_all:6.2f} % {p99:9.1f} {rss / 1024:8.0f}")
PY
  done
done
