#!/usr/bin/env bash
# Two framegraph builds alternated live (A B A B …) on one pipeline and input: per run the cores
# used (the run's CPU over its time, start-up excluded), dropped-busy, dropped-late, duplicated and
# the end-to-end p99. Asserts nothing. Keep a copy of the old binary before rebuilding.
#
#   tools/bench/live_ab.sh ROUNDS SECONDS PIPELINE INPUT BIN_A BIN_B
#   cp .build/release/framegraph /tmp/framegraph-old   # … change, rebuild …
#   tools/bench/live_ab.sh 2 30 pipelines/colorize-file.fg out/live-cost/again-1920x1080.mp4 /tmp/framegraph-old .build/release/framegraph
#
# A_ARGS and B_ARGS add run arguments to one side (one build, two settings):
#   B_ARGS="--set net.precision=int8" tools/bench/live_ab.sh 3 30 pipelines/portrait-segment.fg \
#     ../shared/media/webcam/again.mkv .build/release/framegraph .build/release/framegraph
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 6 ] || { sed -n 2,8p "$0"; exit 2; }
rounds=$1 seconds=$2 pipeline=$3 input=$4
mkdir -p out/live-ab
for round in $(seq "$rounds"); do
  for side in A B; do
    bin=$5 extra=${A_ARGS:-}; [ "$side" = B ] && bin=$6 extra=${B_ARGS:-}
    # shellcheck disable=SC2086  # extra holds several words on purpose
    FRAMEGRAPH_MODELS=${FRAMEGRAPH_MODELS:-models/cache:models} "$bin" run "$pipeline" --mode live --input "$input" --loop --duration "$seconds" \
      --output out/live-ab/out.mp4 --stats out/live-ab/stats.json --quiet $extra
    python3 - "$side" "$round" <<'PY'
import json, sys
s = json.load(open("out/live-ab/stats.json"))
busy = [f"{n['name']} {n['droppedBusy']}" for n in s["nodes"] if n["droppedBusy"]]
print(f"round {sys.argv[2]} {sys.argv[1]}: cores {s['runCPUSeconds'] / s['elapsedSeconds']:.3f}, dropped-busy {s['droppedBusy']}"
      f"{' (' + ', '.join(busy) + ')' if busy else ''}, dropped-late {s['droppedLate']}, duplicated {s['duplicated']}, "
      f"end-to-end p99 {s['endToEnd']['p99']:.1f} ms")
PY
  done
done
