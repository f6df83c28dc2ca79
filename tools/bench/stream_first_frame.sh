#!/usr/bin/env bash
# Time to the first frame of a local RTSP stream (tools/streams/rtsp_server.py: GStreamer's test
# pattern, 320x240 H.264 at 30 fps, a keyframe every 30 frames), interleaved N times:
#   framegraph probe URL --allow-network   (its "first frame" line: request → first decoded frame)
#   ffmpeg reading the same URL to its first decoded frame (wall time of `-frames:v 1`), the reference
#
#   tools/bench/stream_first_frame.sh [N]     (run under the CPU lock: flock /tmp/fg-cpu.lock …)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-5}
bin=${FRAMEGRAPH_BIN:-.build/release/framegraph}
exec 3< <(sleep 600)
coproc server { exec /usr/bin/python3 tools/streams/rtsp_server.py <&3; }
read -r line <&"${server[0]}"
url=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["url"])' "$line")
trap 'kill $server_PID 2>/dev/null || true' EXIT
sleep 1
for i in $(seq "$n"); do
  fg=$("$bin" probe "$url" --allow-network --seconds 0 | sed -n 's/.*first frame: *\([0-9]*\) ms.*/\1/p')
  start=$(date +%s%N)
  ffmpeg -nostdin -v error -rtsp_transport tcp -i "$url" -frames:v 1 -f null - 
  ff=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "run $i: framegraph probe first frame ${fg} ms; ffmpeg -frames:v 1 ${ff} ms"
done
