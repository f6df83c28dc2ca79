#!/usr/bin/env bash
# Smoothness of live output: runs a pipeline live on a looping clip for DURATION seconds with each
# presentation-delay setting given (default: 0, the old free-running clock, then auto), one after the
# other, and prints per setting: ticks, dropped-late, duplicated (busy / no new frame), dropped-busy,
# dropped to the clock rate, the delay D (and how often auto raised it), end-to-end p50/p99.
#
#   tools/bench/smooth-live.sh [PIPELINE] [CLIP] [DURATION] [LATENCY…]
#   tools/bench/smooth-live.sh pipelines/portrait-segment.fg ../shared/media/webcam/again.mkv 600 0 auto
#
# With the emulated camera instead of a clip: CAMERA=1 (builds Tests/FakeCamera; the clip is ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
pipeline=${1:-pipelines/portrait-segment.fg}
clip=${2:-../shared/media/webcam/again.mkv}
duration=${3:-600}
shift 3 2>/dev/null || shift $#
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=(0 auto)
bin=.build/release/framegraph
[ -x "$bin" ] || swift build -c release --product framegraph
mkdir -p out/smooth
source_args=(--input "$clip" --loop)
env_args=()
if [ "${CAMERA:-0}" = 1 ]; then
  make -s -C Tests/FakeCamera
  source_args=(--camera /tmp/fakecam/video0)
  env_args=(LD_PRELOAD="$PWD/Tests/FakeCamera/build/libfakecam.so" FAKECAM_PATH=/tmp/fakecam/video0 FAKECAM_FORMATS=YUYV
            FAKECAM_SIZE=640x480 FAKECAM_FPS=30 FRAMEGRAPH_CAMERAS=/tmp/fakecam/video0)
fi
for latency in "${settings[@]}"; do
  stats="out/smooth/stats-$(basename "$pipeline" .fg)-$latency.json"
  env ${env_args[@]+"${env_args[@]}"} "$bin" run "$pipeline" --mode live "${source_args[@]}" --duration "$duration" --latency "$latency" \
    --output "out/smooth/$(basename "$pipeline" .fg)-$latency.mp4" --stats "$stats" --quiet
  python3 - "$stats" "$latency" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ticks = s["framesOut"] + s["skippedTicks"]
bad = s["droppedLate"] + s["duplicated"]
print(f"--latency {sys.argv[2]:>4}: {ticks} ticks in {s['elapsedSeconds']:.0f} s; dropped-late {s['droppedLate']}, "
      f"duplicated {s['duplicated']} ({s['duplicatedBusy']} busy, {s['duplicated'] - s['duplicatedBusy']} no new frame), "
      f"late+dup {bad} = {100 * bad / max(1, ticks):.3f} % of ticks; dropped-busy {s['droppedBusy']}, "
      f"dropped to the clock rate {s['droppedRate']}; D {s['presentationDelayMs']:.1f} ms "
      f"(set {len(s['presentationDelayChanges'])}x); end-to-end p50 {s['endToEnd']['p50']:.1f} ms, p99 {s['endToEnd']['p99']:.1f} ms; "
      f"CPU {s['cpuSeconds']:.0f} s")
PY
done
