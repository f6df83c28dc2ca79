#!/usr/bin/env bash
# Continuous recording of several live streams in one process (issue 42's soak): N looped webcam
# clips through portrait-segment.fg, each output cut into segments with retention, for DURATION
# seconds, sampling the process's RSS every 10 s. Then per stream: the segments kept (each decoded
# to its end with ffprobe: frames counted, errors reported), the index, and the RSS of the first
# and last minutes. Asserts nothing.
#
#   tools/bench/streams_soak.sh [DURATION] [STREAMS] [SEGMENT] [KEEP]
#   tools/bench/streams_soak.sh 600 4 1m 5m
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${1:-600} n=${2:-4} segment=${3:-1m} keep=${4:-5m}
bin=${BIN:-.build/release/framegraph}
media=${MEDIA:-../shared/media/webcam}
[ -d "$media" ] || { echo "streams_soak: no $media (../shared/media/webcam holds the clips)"; exit 1; }
dir=out/streams-soak
rm -rf "$dir" && mkdir -p "$dir"
inputs=()
for clip in $(ls "$media"/*.mkv | head -n "$n"); do inputs+=(-i "$clip"); done
FRAMEGRAPH_MODELS=${FRAMEGRAPH_MODELS:-models/cache:models} "$bin" run pipelines/portrait-segment.fg --mode live --loop \
  --duration "$duration" "${inputs[@]}" --output "$dir/{stream}/rec.mp4" --set output.segment="$segment" \
  --set output.keep="$keep" --stats "$dir/stats.json" --quiet &
pid=$!
samples=()
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  [ -n "$rss" ] && samples+=("$rss")
  sleep 10
done
wait "$pid"
for d in "$dir"/*/; do
  files=$(ls "$d" | grep -c '\.mp4$' || true)
  bad=0 frames=""
  for f in "$d"*.mp4; do
    c=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$f" 2>"$dir/err" || echo 0)
    [ -s "$dir/err" ] && bad=$((bad + 1))
    frames="$frames $c"
  done
  echo "$(basename "$d"): $files segments kept, frames per segment:$frames; decode errors in $bad; index lines $(wc -l < "$d/index.jsonl" 2>/dev/null || echo 0)"
done
python3 - "$dir/stats.json" "${samples[@]}" <<'PY'
import json, statistics, sys
s = json.load(open(sys.argv[1]))
for st in s.get("streams", []):
    ticks = st["framesOut"] + st["skippedTicks"]
    print(f'{st["name"]}: {st["framesOut"]} frames out, late {st["droppedLate"]} + repeated {st["duplicated"]} of {ticks}, busy {st["droppedBusy"]}, p99 {st["endToEnd"]["p99"]:.1f} ms')
print(f'cores {s["runCPUSeconds"] / s["elapsedSeconds"]:.3f}')
r = [int(x) for x in sys.argv[2:]]
if len(r) >= 12:
    first, last = statistics.median(r[1:7]), statistics.median(r[-6:])
    print(f"RSS median first minute {first/1024:.1f} MiB, last minute {last/1024:.1f} MiB, ratio {last/first:.3f}, max {max(r)/1024:.1f} MiB")
    print("RSS each minute (MiB): " + " ".join(f"{x/1024:.1f}" for x in r[::6]))
PY
