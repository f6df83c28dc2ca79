#!/usr/bin/env bash
# Two builds of FrameGraph on the same work, alternated A B A B … (issue 40's "no benchmark
# regresses"): `model bench` of each model pinned to CPU 0 (median of 60 predictions), and the
# offline pipelines on the sample clip (wall seconds and CPU seconds of the whole run, both cores),
# written as one pipeline text both builds read. Prints every run, then per case the median of each
# side over the rounds and AFTER/BEFORE. Asserts nothing.
#
#   tools/bench/before_after.sh ROUNDS BEFORE_BINARY AFTER_BINARY
#   git worktree add --detach ../before 602777a && (cd ../before && swift build -c release --product framegraph)
#   tools/bench/before_after.sh 5 ../before/.build/release/framegraph .build/release/framegraph
#
# Needs the set-up's models (models/cache) and sample (samples/media/portrait.mp4); each build is run
# from this checkout, so both read the same models and clip.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=$1 before=$2 after=$3
export FRAMEGRAPH_MODELS=${FRAMEGRAPH_MODELS:-models/cache:models}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clip=samples/media/portrait.mp4
cat > "$work/portrait.fg" <<FG
source = file        path=$clip
net    = segment     model=selfie_segmentation smoothing=0.2
matte  = background  mode=colour colour=00b140
output = encode      path=$work/out-portrait.mp4
source -> matte.frame
source -> net -> matte.mask
matte -> output
FG
cat > "$work/colorize.fg" <<FG
source    = file       path=$clip
colorizer = colorize   model=colorizer
recombine = recombine
output    = encode     path=$work/out-colorize.mp4
source -> recombine.frame
source -> colorizer -> recombine.ab
recombine -> output
FG
cat > "$work/faces.fg" <<FG
source = file          path=$clip
mesh   = face-landmarks  max-faces=1
marks  = annotate        point-size=1 labels=false
output = encode          path=$work/out-mesh.mp4
source -> marks.frame
source -> mesh -> marks.results
marks -> output
FG
cat > "$work/label.fg" <<FG
source = file      path=$clip
labels = label     max-results=3
marks  = annotate  labels=true
output = encode    path=$work/out-label.mp4
source -> marks.frame
source -> labels -> marks.results
marks -> output
FG
models=(models/cache/selfie_segmentation.tflite models/cache/face_detection_short_range.tflite models/cache/face_landmark.tflite
        models/cache/efficientnet_lite0.onnx models/colorizer/colorizer.onnx)
for r in $(seq "$rounds"); do
  for side in BEFORE AFTER; do
    bin=$before; [ "$side" = AFTER ] && bin=$after
    for m in "${models[@]}"; do
      ms=$(taskset -c 0 "$bin" model bench "$m" --runs 60 --stages 0 2>&1 | grep -o "median [0-9.]*" | head -1 | awk '{print $2}')
      echo "$r $side model:$(basename "$m") $ms"
    done
    for p in portrait colorize faces label; do
      rm -f "$work"/out-*.mp4
      # bash's own time (wall, user, system seconds); a run that fails stops the benchmark.
      if ! t=$( { TIMEFORMAT="%R %U %S"; time "$bin" run "$work/$p.fg" --quiet >/dev/null 2>"$work/err"; } 2>&1 ); then
        echo "$side $p failed: $(tail -n 1 "$work/err")" >&2
        exit 1
      fi
      wall=$(echo "$t" | awk '{print $1}') cpu=$(echo "$t" | awk '{print $2 + $3}')
      echo "$r $side pipeline-wall:$p $wall"
      echo "$r $side pipeline-cpu:$p $cpu"
    done
  done
done | tee "$work/runs.txt" | python3 -c '
import statistics, sys
v = {}
for line in sys.stdin:
    print(line.rstrip(), flush=True)
    r, side, case, x = line.split()
    v.setdefault(case, {}).setdefault(side, []).append(float(x))
print()
print("| case | before (median) | after (median) | after / before |")
print("|---|---:|---:|---:|")
for case, s in v.items():
    b, a = statistics.median(s["BEFORE"]), statistics.median(s["AFTER"])
    unit = "ms" if case.startswith("model") else "s"
    print(f"| {case} | {b:.3f} {unit} | {a:.3f} {unit} | {a / b:.3f} |")
'
