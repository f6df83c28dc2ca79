#!/usr/bin/env bash
# Hands and pose live: the emulated camera (tools/bench/emulated-camera.sh: CLIP as 640×480 YUYV at
# 30 fps) into pipelines/hands.fg and pipelines/pose.fg for DURATION seconds each, encoding to MP4 in
# out/live-hands-pose/. Prints per pipeline the frames in and out, dropped while busy and late, the
# node's latency (p50 / p95) and the run's CPU per frame. Asserts nothing.
#
#   tools/bench/live-hands-pose.sh [CLIP] [DURATION]
#   tools/bench/live-hands-pose.sh ../shared/media/webcam/bird.mkv 10
set -euo pipefail
cd "$(dirname "$0")/../.."
clip=${1:-../shared/media/webcam/bird.mkv} duration=${2:-10}
source tools/bench/emulated-camera.sh "$clip" out/live-hands-pose
for p in hands pose; do
  env "${camera_env[@]}" "$bin" run "pipelines/$p.fg" --camera /tmp/fakecam/video0 --duration "$duration" \
    --output "out/live-hands-pose/$p.mp4" --stats "out/live-hands-pose/$p.json" --quiet
  python3 - "out/live-hands-pose/$p.json" "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = next(x for x in d["nodes"] if x["kind"] in ("hand-landmarks", "pose-landmarks"))
print(f"{sys.argv[2]}: {d['framesIn']} in, {d['framesOut']} out, dropped busy {d['droppedBusy']}, late {d['droppedLate']}; "
      f"node p50 {n['latency']['p50']:.1f} ms, p95 {n['latency']['p95']:.1f} ms; {1000 * d['runCPUSeconds'] / max(1, d['framesOut']):.2f} ms CPU a frame")
PY
done
