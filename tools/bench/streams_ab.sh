#!/usr/bin/env bash
# Two builds alternated on one many-stream run: N streams of a 640×480 clip (looping, paced live at
# 30 fps, each written to its own MP4) in ONE framegraph process, this build ("new") and
# FRAMEGRAPH_BIN_OLD ("old") in turn, R rounds of D seconds, the order alternating each round.
# Prints per round and side: cores (run CPU seconds, start-up excluded, over elapsed), the worst
# stream's late+repeated share, the worst stream's end-to-end p99, x264's time per frame (p50, the
# first stream's encoder) and its preset; then the medians of the cores. Asserts nothing.
#
#   FRAMEGRAPH_BIN_OLD=/tmp/old/framegraph tools/bench/streams_ab.sh [N] [ROUNDS] [SECONDS] [PIPELINE] [CLIP]
#   FRAMEGRAPH_BIN_OLD=/tmp/old/framegraph flock /tmp/fg-cpu.lock tools/bench/streams_ab.sh 8 4 15
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-8}
rounds=${2:-4}
seconds=${3:-15}
pipeline=${4:-pipelines/portrait-segment.fg}
clip=${5:-../shared/media/webcam/again.mkv}
new=${FRAMEGRAPH_BIN:-.build/release/framegraph}
old=${FRAMEGRAPH_BIN_OLD:?set FRAMEGRAPH_BIN_OLD to the other build}
[ -f "$clip" ] || { echo "streams_ab: no clip $clip (../shared/media/webcam holds the default)"; exit 1; }
dir=out/streams-ab
rm -rf "$dir"
args=()
for _ in $(seq "$n"); do args+=(--input "$clip"); done
echo "$(basename "$pipeline"): $n streams in one process, $rounds rounds of $seconds s, new $new against old $old"
for r in $(seq "$rounds"); do
  order=(new old)
  [ $((r % 2)) -eq 0 ] && order=(old new)
  for side in "${order[@]}"; do
    bin=$new
    [ "$side" = old ] && bin=$old
    run="$dir/$side-$r"
    mkdir -p "$run"
    FRAMEGRAPH_MODELS=models/cache "$bin" run "$pipeline" --mode live --loop --duration "$seconds" --quiet "${args[@]}" \
      --output "$run/{stream}.mp4" --stats "$run/stats.json" >/dev/null
    python3 - "$run/stats.json" "$side" "$r" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
streams = s.get("streams") or [s]
late = max(100.0 * (x["droppedLate"] + x["duplicated"]) / max(1, x["framesIn"]) for x in streams)
p99 = max(x["endToEnd"]["p99"] for x in streams)
enc = s.get("encoder") or {}
p50 = (enc.get("encode") or {}).get("p50", 0.0)
print(f"round {sys.argv[3]} {sys.argv[2]:3s} cores {s['runCPUSeconds'] / s['elapsedSeconds']:.3f}  late+rep worst {late:.2f} %  "
      f"p99 {p99:.1f} ms  x264 p50 {p50:.2f} ms {enc.get('preset', '-')}")
PY
  done
done
python3 - "$dir" <<'PY'
import json, os, statistics, sys
d = sys.argv[1]
for side in ("new", "old"):
    cores = [json.load(open(os.path.join(d, r, "stats.json"))) for r in sorted(os.listdir(d)) if r.startswith(side + "-")]
    print(f"median cores {side}: {statistics.median(s['runCPUSeconds'] / s['elapsedSeconds'] for s in cores):.3f}")
PY
