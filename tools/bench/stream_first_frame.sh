#!/usr/bin/env bash
# Time to the first frame of a local RTSP stream (tools/streams/rtsp_server.py: GStreamer's test
# pattern, 320x240 H.264 at 30 fps, a keyframe every 30 frames), interleaved N times:
#   framegraph probe URL --allow-network   (its "first frame" line: request → first decoded frame)
#   with FRAMEGRAPH_BIN_OLD set, that build's probe too, alternated with the new one in each round
#   ffmpeg reading the same URL to its first decoded frame (wall time of `-frames:v 1`), the reference
#
#   tools/bench/stream_first_frame.sh [N]     (run under the CPU lock: flock /tmp/fg-cpu.lock …)
#   FRAMEGRAPH_BIN_OLD=/tmp/old/framegraph tools/bench/stream_first_frame.sh 7
# Prints each round, then the medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-5}
bin=${FRAMEGRAPH_BIN:-.build/release/framegraph}
old=${FRAMEGRAPH_BIN_OLD:-}
# The server's stdin stays open while this sleep runs; the sleep is ended with the script (it would
# otherwise keep the descriptors it inherited, the CPU lock's among them, for its whole length).
exec 3< <(exec sleep 900)
sleeper=$!
coproc server { exec /usr/bin/python3 tools/streams/rtsp_server.py <&3; }
read -r line <&"${server[0]}"
url=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["url"])' "$line")
trap 'kill $server_PID $sleeper 2>/dev/null || true' EXIT
sleep 1
probe() { "$1" probe "$url" --allow-network --seconds 0 | sed -n 's/.*first frame: *\([0-9]*\) ms.*/\1/p'; }
news=() olds=() ffs=()
for i in $(seq "$n"); do
  line="run $i:"
  if [ -n "$old" ]; then
    o=$(probe "$old"); olds+=("$o"); line="$line old build ${o} ms;"
  fi
  f=$(probe "$bin"); news+=("$f"); line="$line framegraph probe first frame ${f} ms;"
  start=$(date +%s%N)
  ffmpeg -nostdin -v error -rtsp_transport tcp -i "$url" -frames:v 1 -f null -
  ff=$(( ($(date +%s%N) - start) / 1000000 )); ffs+=("$ff")
  echo "$line ffmpeg -frames:v 1 ${ff} ms"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
echo "median: framegraph $(median "${news[@]}") ms${old:+, old build $(median "${olds[@]}") ms}, ffmpeg $(median "${ffs[@]}") ms"
