#!/usr/bin/env bash
# The README's screenshots of the preview window, made as the tests make theirs: a pipeline
# (face-detect.fg by default) runs live on a clip (the setup's portrait clip by default), looped,
# with --preview under a virtual X server (Xvfb); after SECONDS (4) the screen is grabbed with xwd
# (cut to the window), the window sent q (the run ends as with Ctrl-C), and the picture is
# converted (ffmpeg: scaled to 480 wide, 256 colours) to OUTPUT (docs/preview-window.png).
#
#   tools/screenshot-preview.sh [OUTPUT.png [PIPELINE.fg [CLIP [SECONDS]]]]
#   tools/screenshot-preview.sh docs/hands-window.png pipelines/hands.fg ../shared/media/webcam/hungry.mkv 1.2
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/preview-window.png}
pipeline=${2:-pipelines/face-detect.fg}
clip=${3:-samples/media/portrait.mp4}
seconds=${4:-4}
name=$(basename "$pipeline" .fg)
bin=.build/release/framegraph
[ -x "$bin" ] || swift build -c release --product framegraph
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x720x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
read -r display_number <&3
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
export DISPLAY=":$display_number"
mkdir -p out/screenshot
"$bin" run "$pipeline" --input "$clip" --mode live --loop --preview --set marks.hud=true --quiet \
  --output out/screenshot/out.mp4 --results out/screenshot/results.jsonl --stats out/screenshot/stats.json &
run_pid=$!
xdotool search --sync --name "FrameGraph: $name" >/dev/null
sleep "$seconds"
# The whole screen, cut to the window's place (SDL makes more than one X window under that title).
xwd -root -silent -out out/screenshot/screen.xwd
eval "$(xwininfo -name "FrameGraph: $name" | awk '/Absolute upper-left X/{print "X="$4} /Absolute upper-left Y/{print "Y="$4} /Width/{print "W="$2} /Height/{print "H="$2}')"
xdotool search --name "FrameGraph: $name" windowfocus --sync key q
wait "$run_pid"
ffmpeg -loglevel error -y -i out/screenshot/screen.xwd \
  -vf "crop=$W:$H:$X:$Y,scale=480:-1:flags=area,split[a][b];[a]palettegen=max_colors=256[p];[b][p]paletteuse" "$out"
echo "$out ($(stat -c %s "$out") bytes)"
