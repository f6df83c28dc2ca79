#!/usr/bin/env bash
# Live colorization at 30 fps: `pipelines/colorize-webcam.fg` on the emulated camera (640×480,
# 30 fps, playing a webcam clip) and `pipelines/colorize-file.fg --mode live` on the same clip, each
# to an MP4, ROUNDS rounds interleaved, DURATION seconds each (the file run ends with its clip).
# Prints per run: output ticks, skipped ticks, repeated ticks, the colorizer's dropped-busy of
# received, its p50 time, end-to-end p50/p99 and CPU per output frame (process CPU / frames out).
# Asserts nothing.
#
#   tools/bench/live-colorize.sh [CLIP] [DURATION] [ROUNDS]
#   tools/bench/live-colorize.sh ../shared/media/webcam/again.mkv 20 2
set -euo pipefail
cd "$(dirname "$0")/../.."
clip=${1:-../shared/media/webcam/again.mkv}
duration=${2:-20}
rounds=${3:-2}
[ -f "$clip" ] || clip=samples/media/portrait.mp4
source tools/bench/emulated-camera.sh "$clip" out/live-colorize
for round in $(seq 1 "$rounds"); do
  for variant in webcam file; do
    stats="out/live-colorize/stats-$variant-$round.json"
    if [ "$variant" = webcam ]; then
      env "${camera_env[@]}" "$bin" run pipelines/colorize-webcam.fg --camera /tmp/fakecam/video0 --duration "$duration" \
          --output out/live-colorize/webcam.mp4 --stats "$stats" --quiet
    else
      "$bin" run pipelines/colorize-file.fg --input "$clip" --mode live --output out/live-colorize/file.mp4 --stats "$stats" --quiet
    fi
    python3 - "$stats" "$variant" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = next(n for n in s["nodes"] if n["name"] == "colorizer")
ticks = s["framesOut"] + s["skippedTicks"]
cpu_ms = 1000 * s["runCPUSeconds"] / max(1, s["framesOut"])
e = s["endToEnd"]
print(f"{sys.argv[2]:>6}: {ticks} ticks, skipped {s['skippedTicks']}, repeated {s['duplicated']}, colorizer dropped-busy "
      f"{c['droppedBusy']} of {c['received']}, end-to-end p50 {e['p50']:.1f} p99 {e['p99']:.1f} ms, CPU {cpu_ms:.2f} ms per frame")
PY
  done
done
