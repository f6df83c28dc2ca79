#!/usr/bin/env bash
# What watching a live run costs: the same live run (face-detect on the setup's portrait clip, looped,
# 30 fps, DURATION s) with no viewer and with VIEWERS MJPEG viewers (curl on /video.mjpg), interleaved
# ROUNDS times. Prints each run's CPU seconds since the first frame (runCPUSeconds), dropped-busy and
# frames out, then per build the median CPU of each side and the extra CPU the viewers cost.
#
#   tools/bench/serve_viewers.sh [VIEWERS=20] [DURATION=10] [ROUNDS=3]
#
# FRAMEGRAPH_BIN picks the build (default .build/release/framegraph). With FRAMEGRAPH_BIN_OLD=PATH
# (a copy of an earlier build's binary) both builds run in the same session, alternating
# old 0, old VIEWERS, new 0, new VIEWERS each round, so both sides see the same machine. SERVE_ARGS
# adds options to the served runs (e.g. "--serve-fps 5"); SERVE_ARGS_OLD, when set, replaces them for
# the old build. On a machine of two cores or more the run is pinned to CPU 0 and the viewers (curl)
# to CPU 1, as viewers on other machines would be; the load average before and after says what
# else was running.
set -euo pipefail
cd "$(dirname "$0")/../.."
viewers=${1:-20}; duration=${2:-10}; rounds=${3:-3}
new=${FRAMEGRAPH_BIN:-.build/release/framegraph}
old=${FRAMEGRAPH_BIN_OLD:-}
serve_args=${SERVE_ARGS:-}
serve_args_old=${SERVE_ARGS_OLD-$serve_args}
pin_run=(); pin_view=()
if [ "$(nproc)" -ge 2 ]; then pin_run=(taskset -c 0); pin_view=(taskset -c 1); fi
for b in "$new" ${old:+"$old"}; do [ -x "$b" ] || { echo "serve_viewers: no executable $b" >&2; exit 2; }; done
[ -f samples/media/portrait.mp4 ] || { echo "serve_viewers: samples/media/portrait.mp4 is missing (tools/make-samples.sh)" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() {  # $1: binary, $2: viewers, $3: stats file, $4: serve options
  local args=(run pipelines/face-detect.fg --input samples/media/portrait.mp4 --loop --mode live --duration "$duration" --output "$work/o.mp4" --quiet --stats "$3")
  if [ "$2" -eq 0 ]; then "${pin_run[@]}" "$1" "${args[@]}"; return; fi
  # shellcheck disable=SC2086
  "${pin_run[@]}" "$1" "${args[@]}" --serve 127.0.0.1:0 --serve-clients $(("$2" + 4)) $4 2> "$work/err" &
  local pid=$! port=""
  for _ in $(seq 100); do port=$(grep -o '127.0.0.1:[0-9]*' "$work/err" 2>/dev/null | head -1 || true); [ -n "$port" ] && break; sleep 0.05; done
  local curls=()
  for _ in $(seq "$2"); do "${pin_view[@]}" curl -s -o /dev/null --max-time $((duration + 10)) "http://$port/video.mjpg" & curls+=($!); done
  wait "$pid"
  kill "${curls[@]}" 2>/dev/null || true; wait 2>/dev/null || true
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; run pinned: ${pin_run[*]:-no}, viewers: ${pin_view[*]:-no}; serve args: new ${serve_args:-none}${old:+, old ${serve_args_old:-none}}"
builds=(new); [ -n "$old" ] && builds=(old new)
printf '%-6s %-6s %-8s %14s %12s %10s\n' round build viewers runCPUSeconds droppedBusy framesOut
: > "$work/results"
for r in $(seq "$rounds"); do
  for build in "${builds[@]}"; do
    bin=$new; sargs=$serve_args
    if [ "$build" = old ]; then bin=$old; sargs=$serve_args_old; fi
    for v in 0 "$viewers"; do
      run "$bin" "$v" "$work/s.json" "$sargs"
      cpu=$(field "$work/s.json" runCPUSeconds); busy=$(field "$work/s.json" droppedBusy)
      printf '%-6s %-6s %-8s %14.3f %12s %10s\n' "$r" "$build" "$v" "$cpu" "$busy" "$(field "$work/s.json" framesOut)"
      echo "$build $v $cpu $busy" >> "$work/results"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/results" "$viewers" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
viewers = sys.argv[2]
for build in dict.fromkeys(r[0] for r in rows):
    base = [float(r[2]) for r in rows if r[0] == build and r[1] == "0"]
    watched = [float(r[2]) for r in rows if r[0] == build and r[1] == viewers]
    busy = [int(r[3]) for r in rows if r[0] == build and r[1] == viewers]
    a, b = statistics.median(base), statistics.median(watched)
    each = ", ".join("%+.1f" % ((w - z) / z * 100) for z, w in zip(base, watched))
    print("%s: median runCPUSeconds no viewer %.3f s, %s viewers %.3f s (%+.1f %%; each round %s %%); dropped-busy with viewers %s"
          % (build, a, viewers, b, (b - a) / a * 100, each, busy))
EOF
