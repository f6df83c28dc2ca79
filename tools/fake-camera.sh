#!/usr/bin/env bash
# fake-camera.sh: run a command with the emulated V4L2 camera of the test suite (Tests/FakeCamera)
# playing a video clip, so that camera pipelines run on a machine without a camera.
#
#   tools/fake-camera.sh CLIP [--size WxH] [--fps N] [--device PATH] [--seconds S] [--stamp] -- COMMAND…
#
#   tools/fake-camera.sh samples/media/portrait.mp4 -- \
#       .build/release/framegraph run pipelines/portrait-segment.fg --camera /dev/video0 --duration 3 --output live.mp4
#
# Tests/FakeCamera/build/libfakecam.so (built here with make when missing or older than its sources;
# needs gcc and libjpeg62-turbo-dev) is preloaded into COMMAND (LD_PRELOAD, inherited by its
# children). It answers at --device (default /dev/video0, which need not exist; a real camera at
# that path is hidden from COMMAND) and plays the kernel side of V4L2 streaming as a UVC webcam does
# (YUYV and MJPEG, buffers, poll, timestamps): Tests/FakeCamera/README.md. The clip is converted
# once to raw YUYV at --size (default 640x480) and --fps (default 30), at most --seconds of it
# (default 10), into Tests/FakeCamera/build/clips/ (git-ignored; `make -C Tests/FakeCamera clean`
# removes it), and loops for as long as COMMAND reads. The picture is the clip's own unless --stamp,
# which draws the emulator's frame-number cells across the top (what the tests decode).
# Also set: FRAMEGRAPH_CAMERAS=DEVICE, so `framegraph devices` lists it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
me="fake-camera.sh"
usage() {
  echo "usage: tools/fake-camera.sh CLIP [--size WxH] [--fps N] [--device PATH] [--seconds S] [--stamp] -- COMMAND…" >&2
  exit 2
}
die() { echo "$me: $*" >&2; exit 2; }

[ $# -ge 1 ] || usage
case "$1" in -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
clip="$1"; shift
size=640x480 fps=30 device=/dev/video0 seconds=10 stamp=0
while [ $# -gt 0 ]; do
  case "$1" in
    --size) [ $# -ge 2 ] || usage; size="$2"; shift 2 ;;
    --fps) [ $# -ge 2 ] || usage; fps="$2"; shift 2 ;;
    --device) [ $# -ge 2 ] || usage; device="$2"; shift 2 ;;
    --seconds) [ $# -ge 2 ] || usage; seconds="$2"; shift 2 ;;
    --stamp) stamp=1; shift ;;
    --) shift; break ;;
    *) die "unknown option $1 (options: --size WxH, --fps N, --device PATH, --seconds S, --stamp; then -- COMMAND…)" ;;
  esac
done
[ $# -ge 1 ] || die "no command: put it after -- (e.g. -- .build/release/framegraph run pipelines/portrait-segment.fg --camera $device --preview)"
[ -f "$clip" ] || die "no such clip: $clip"
[[ "$size" =~ ^([0-9]+)x([0-9]+)$ ]] || die "--size $size: expected WxH, e.g. 640x480"
width="${BASH_REMATCH[1]}" height="${BASH_REMATCH[2]}"
{ [ $((width % 2)) -eq 0 ] && [ "$width" -ge 16 ] && [ "$height" -ge 16 ]; } || die "--size $size: the width must be even, both at least 16"
[[ "$fps" =~ ^[0-9]+$ ]] && [ "$fps" -ge 1 ] && [ "$fps" -le 240 ] || die "--fps $fps: expected a whole number 1…240"
[[ "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--seconds $seconds: expected a number of seconds"
[[ "$device" == /* ]] || die "--device $device: give an absolute path (the emulator compares it as a string)"
command -v ffmpeg >/dev/null || die "ffmpeg is not installed (scripts/install-deps.sh)"

# The emulator, built when missing or out of date (make decides).
lib="$root/Tests/FakeCamera/build/libfakecam.so"
if ! make -s -C "$root/Tests/FakeCamera" build/libfakecam.so >&2; then
  die "cannot build $lib (needs gcc, make and libjpeg62-turbo-dev): see Tests/FakeCamera/README.md"
fi

# The clip as raw YUYV frames at the camera's size and rate, converted once per clip and settings.
clips="$root/Tests/FakeCamera/build/clips"
mkdir -p "$clips"
abs="$(cd "$(dirname "$clip")" && pwd)/$(basename "$clip")"
key="$(printf '%s\n' "$abs" "$(stat -c '%s %Y' "$abs")" "$size" "$fps" "$seconds" | sha256sum | cut -c1-16)"
raw="$clips/$(basename "${clip%.*}")-$size-$fps-$key.yuv"
if [ ! -s "$raw" ]; then
  echo "$me: converting $clip to raw YUYV ${size} at ${fps} fps (at most ${seconds} s) for the emulated camera" >&2
  tmp="$(mktemp "$clips/.partial-XXXXXX.yuv")"
  trap 'rm -f "$tmp"' EXIT
  ffmpeg -nostdin -v error -y -i "$abs" -t "$seconds" -an \
    -vf "fps=$fps,scale=$width:$height:force_original_aspect_ratio=decrease,pad=$width:$height:(ow-iw)/2:(oh-ih)/2" \
    -pix_fmt yuyv422 -f rawvideo "$tmp"
  [ -s "$tmp" ] || die "ffmpeg made no frames from $clip"
  chmod 644 "$tmp"
  mv "$tmp" "$raw"
  trap - EXIT
fi

export LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
export FAKECAM_PATH="$device"
export FAKECAM_CLIP="$raw" FAKECAM_CLIP_SIZE="$size" FAKECAM_SIZE="$size" FAKECAM_FPS="$fps" FAKECAM_STAMP="$stamp"
export FAKECAM_FORMATS="${FAKECAM_FORMATS:-YUYV,MJPG}"
export FRAMEGRAPH_CAMERAS="$device${FRAMEGRAPH_CAMERAS:+:$FRAMEGRAPH_CAMERAS}"
exec "$@"
