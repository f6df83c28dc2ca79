#!/usr/bin/env bash
# The README's screenshot of the preview window, made as the tests make theirs: face-detect.fg runs
# live on the setup's portrait clip with --preview under a virtual X server (Xvfb); after a few
# seconds the screen is grabbed with xwd (cut to the window), the window sent q (the run ends as with Ctrl-C), and the picture is
# converted (ffmpeg: scaled to 480 wide, 256 colours) to docs/preview-window.png.
#
#   tools/screenshot-preview.sh [OUTPUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/preview-window.png}
bin=.build/release/framegraph
[ -x "$bin" ] || swift build -c release --product framegraph
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x720x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
read -r display_number <&3
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
export DISPLAY=":$display_number"
mkdir -p out/screenshot
"$bin" run pipelines/face-detect.fg --mode live --loop --preview --set marks.hud=true --quiet \
  --output out/screenshot/faces.mp4 --results out/screenshot/faces.jsonl --stats out/screenshot/stats.json &
run_pid=$!
xdotool search --sync --name "FrameGraph: face-detect" >/dev/null
sleep 4
# The whole screen, cut to the window's place (SDL makes more than one X window under that title).
xwd -root -silent -out out/screenshot/screen.xwd
eval "$(xwininfo -name "FrameGraph: face-detect" | awk '/Absolute upper-left X/{print "X="$4} /Absolute upper-left Y/{print "Y="$4} /Width/{print "W="$2} /Height/{print "H="$2}')"
xdotool search --name "FrameGraph: face-detect" windowfocus --sync key q
wait "$run_pid"
ffmpeg -loglevel error -y -i out/screenshot/screen.xwd \
  -vf "crop=$W:$H:$X:$Y,scale=480:-1:flags=area,split[a][b];[a]palettegen=max_colors=256[p];[b][p]paletteuse" "$out"
echo "$out ($(stat -c %s "$out") bytes)"
