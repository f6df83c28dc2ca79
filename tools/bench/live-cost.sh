#!/usr/bin/env bash
# What a live run costs: portrait-segment.fg and colorize-file.fg live at 30 fps to MP4 on a looping
# clip, at its own size and scaled to 1920×1080, DURATION seconds each, one after the other (nothing
# in parallel). Before them, per size, the floor: the same clip decoded and encoded alone (file →
# encode, the same encoder settings, no network, no composite). Prints per run: frames out,
# dropped-busy, dropped-late, duplicated, end-to-end p99, and the cores used: the run's CPU seconds
# (runCPUSeconds: first frame to the end, start-up excluded) over its elapsed seconds. Asserts nothing.
#
#   tools/bench/live-cost.sh [CLIP] [DURATION] [SIZES]
#   tools/bench/live-cost.sh ../shared/media/webcam/again.mkv 60 "native 1920x1080"
#
# The 1080p input is made from CLIP with the ffmpeg CLI (bicubic, H.264 CRF 18) in out/live-cost/.
# The size `camera` runs from the emulated V4L2 camera instead (Tests/FakeCamera: CLIP's first 300
# frames as 640×480 YUYV at 30 fps, looping), as from a webcam: no H.264 decoding, a YUYV conversion.
#
#   tools/bench/live-cost.sh ../shared/media/webcam/again.mkv 60 "native camera 1920x1080"
set -euo pipefail
cd "$(dirname "$0")/../.."
clip=${1:-../shared/media/webcam/again.mkv}
duration=${2:-60}
sizes=${3:-native 1920x1080}
bin=.build/release/framegraph
[ -x "$bin" ] || swift build -c release --product framegraph
[ -f "$clip" ] || { echo "live-cost: no clip $clip (../shared/media/webcam holds the default)"; exit 1; }
dir=out/live-cost
mkdir -p "$dir"
for size in $sizes; do
  input=$clip
  from=(--input "$input" --loop)
  env_run=(env)
  if [ "$size" = camera ]; then
    # shellcheck source=tools/bench/emulated-camera.sh
    source tools/bench/emulated-camera.sh "$clip" "$dir/camera"
    from=(--camera /tmp/fakecam/video0)
    env_run=(env "${camera_env[@]}")
  elif [ "$size" != native ]; then
    input="$dir/$(basename "${clip%.*}")-$size.mp4"
    [ -f "$input" ] || ffmpeg -nostdin -v error -y -i "$clip" -vf "scale=${size/x/:}:flags=bicubic" -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p -an "$input"
    from=(--input "$input" --loop)
  fi
  printf 'source = file path=x\noutput = encode path=x.mp4\nsource -> output\n' > "$dir/decode-encode.fg"
  for pipeline in "$dir/decode-encode.fg" pipelines/portrait-segment.fg pipelines/colorize-file.fg; do
    stats="$dir/stats-$(basename "$pipeline" .fg)-$size.json"
    "${env_run[@]}" FRAMEGRAPH_MODELS=models/cache "$bin" run "$pipeline" --mode live "${from[@]}" --duration "$duration" \
      --output "$dir/$(basename "$pipeline" .fg)-$size.mp4" --stats "$stats" --quiet
    python3 - "$stats" "$pipeline" "$size" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
cores = s["runCPUSeconds"] / s["elapsedSeconds"]
print(f"{sys.argv[2]:32s} {sys.argv[3]:>9s}: out {s['framesOut']}, dropped-busy {s['droppedBusy']} of {s['framesIn']}, "
      f"dropped-late {s['droppedLate']}, duplicated {s['duplicated']}, end-to-end p99 {s['endToEnd']['p99']:.1f} ms, "
      f"{s['elapsedSeconds']:.1f} s, cores {cores:.3f} (process incl. start-up {s['cpuSeconds'] / s['elapsedSeconds']:.3f})")
PY
  done
done
