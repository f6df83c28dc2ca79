#!/usr/bin/env bash
# Live results on screen: the emulated camera (640×480 at 30 fps, playing a webcam clip of a person)
# → face detection → annotate (boxes, keypoints, HUD) → a preview window on a virtual X server
# (Xvfb) + H.264 encode, against the same camera → encode alone (transcode without the resize),
# ROUNDS rounds interleaved (A B A B …), DURATION seconds each. Prints per run: output ticks,
# skipped ticks, repeated ticks, faces' dropped-busy, frames the window got, end-to-end p50/p99, and
# CPU per output frame (process CPU seconds / frames out); then the medians.
#
#   tools/bench/live-annotate.sh [CLIP] [DURATION] [ROUNDS]
#   tools/bench/live-annotate.sh ../shared/media/webcam/again.mkv 30 3
#   PIPELINE=pipelines/face-mesh.fg tools/bench/live-annotate.sh ...     (the face mesh instead of face detection)
#   PIPELINE=pipelines/label-video.fg tools/bench/live-annotate.sh ...   (image labeling)
set -euo pipefail
cd "$(dirname "$0")/../.."
clip=${1:-../shared/media/webcam/again.mkv}
duration=${2:-30}
rounds=${3:-3}
pipeline=${PIPELINE:-pipelines/face-detect.fg}
[ -f "$clip" ] || clip=samples/media/portrait.mp4
source tools/bench/emulated-camera.sh "$clip" out/live-annotate
# A virtual screen on a free display number.
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x720x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
read -r display_number <&3
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
camera_env+=(DISPLAY=":$display_number")
cat > out/live-annotate/encode-only.fg <<'FG'
source = file   path=unused.mp4
output = encode path=out/live-annotate/encode-only.mp4
source -> output
FG
summary=out/live-annotate/summary.txt
: > "$summary"
for round in $(seq 1 "$rounds"); do
  for variant in annotated encode-only; do
    stats="out/live-annotate/stats-$variant-$round.json"
    if [ "$variant" = annotated ]; then
      args=("$pipeline" --preview --set marks.hud=true --output out/live-annotate/annotated.mp4
            --set log.path=out/live-annotate/faces.jsonl)
    else
      args=(out/live-annotate/encode-only.fg)
    fi
    env "${camera_env[@]}" "$bin" run "${args[@]}" --camera /tmp/fakecam/video0 --duration "$duration" --stats "$stats" --quiet
    python3 - "$stats" "$variant" "$summary" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
nodes = {n["name"]: n for n in s["nodes"]}
networks = [n for n in s["nodes"] if n["kind"] in ("network", "face-landmarks", "metaltensor-faces", "label")]
faces = ", ".join(f"{n['name']} {n['droppedBusy']} of {n['received']}" for n in networks) or "-"

window = nodes.get("preview", {}).get("emitted", "-")
ticks = s["framesOut"] + s["skippedTicks"]
cpu_ms = 1000 * s["runCPUSeconds"] / max(1, s["framesOut"])
e = s["endToEnd"]
line = (f"{sys.argv[2]:>11}: {ticks} ticks, skipped {s['skippedTicks']}, repeated {s['duplicated']}, dropped-busy {faces}, "
        f"window frames {window}, end-to-end p50 {e['p50']:.1f} p99 {e['p99']:.1f} ms, CPU {cpu_ms:.2f} ms per frame")
print(line)
open(sys.argv[3], "a").write(f"{sys.argv[2]} {cpu_ms} {s['skippedTicks']}\n")
PY
  done
done
python3 - "$summary" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
for v in ("annotated", "encode-only"):
    cpu = [float(r[1]) for r in rows if r[0] == v]
    print(f"median CPU per frame, {v}: {statistics.median(cpu):.2f} ms ({len(cpu)} runs); skipped ticks: {[int(r[2]) for r in rows if r[0] == v]}")
PY
