#!/usr/bin/env bash
# The live view's JPEG encoder against the one before it, one core (taskset -c 0), interleaved:
# FFmpeg's MJPEG encoder after a range-stretch pass against libjpeg-turbo from the planes
# (Sources/CJPEGTurbo), on the first frame of the setup's portrait clip (640x480, limited range).
#
#   tools/bench/jpeg_encoders.sh [ROUNDS=9] [PICTURES_PER_ROUND=100]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f samples/media/portrait.mp4 ] || { echo "jpeg_encoders: samples/media/portrait.mp4 is missing (tools/make-samples.sh)" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ffmpeg -nostdin -v error -i samples/media/portrait.mp4 -frames:v 1 -f rawvideo -pix_fmt yuv420p "$work/frame.yuv"
gcc -O2 -I Sources/CJPEGTurbo/include tools/bench/jpeg_encoders.c Sources/CJPEGTurbo/jpeg_planes.c -o "$work/jpeg_encoders" \
    $(pkg-config --cflags --libs libavcodec libavutil) -ljpeg
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 0 "$work/jpeg_encoders" "$work/frame.yuv" 640 480 "${1:-9}" "${2:-100}"
