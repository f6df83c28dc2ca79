#!/usr/bin/env bash
# What watching a live run costs: the same live run (face-detect on the setup's portrait clip, looped,
# 30 fps, DURATION s) with no viewer and with VIEWERS MJPEG viewers (curl on /video.mjpg), interleaved
# ROUNDS times. Prints each run's CPU seconds since the first frame (runCPUSeconds), dropped-busy and
# frames out, and the mean CPU of each side.
#
#   tools/bench/serve_viewers.sh [VIEWERS=20] [DURATION=10] [ROUNDS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
viewers=${1:-20}; duration=${2:-10}; rounds=${3:-3}
bin=${FRAMEGRAPH_BIN:-.build/release/framegraph}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() {  # $1: viewers, $2: stats file
  local args=(run face-detect --input samples/media/portrait.mp4 --loop --mode live --duration "$duration" --output "$work/o.mp4" --quiet --stats "$2")
  if [ "$1" -eq 0 ]; then "$bin" "${args[@]}"; return; fi
  "$bin" "${args[@]}" --serve 127.0.0.1:0 --serve-clients $((viewers + 4)) 2> "$work/err" &
  local pid=$! port=""
  for _ in $(seq 100); do port=$(grep -o '127.0.0.1:[0-9]*' "$work/err" 2>/dev/null | head -1 || true); [ -n "$port" ] && break; sleep 0.05; done
  local curls=()
  for _ in $(seq "$viewers"); do curl -s -o /dev/null --max-time $((duration + 10)) "http://$port/video.mjpg" & curls+=($!); done
  wait "$pid"
  kill "${curls[@]}" 2>/dev/null || true; wait 2>/dev/null || true
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }
printf '%-8s %-8s %12s %12s %10s\n' round viewers runCPUSeconds droppedBusy framesOut
sum0=0; sum1=0
for r in $(seq "$rounds"); do
  for v in 0 "$viewers"; do
    run "$v" "$work/s.json"
    cpu=$(field "$work/s.json" runCPUSeconds)
    printf '%-8s %-8s %12.3f %12s %10s\n' "$r" "$v" "$cpu" "$(field "$work/s.json" droppedBusy)" "$(field "$work/s.json" framesOut)"
    if [ "$v" -eq 0 ]; then sum0=$(python3 -c "print($sum0+$cpu)"); else sum1=$(python3 -c "print($sum1+$cpu)"); fi
  done
done
python3 -c "a=$sum0/$rounds; b=$sum1/$rounds; print(f'mean runCPUSeconds: no viewer {a:.3f} s, {$viewers} viewers {b:.3f} s ({(b-a)/a*100:+.1f} %)')"
