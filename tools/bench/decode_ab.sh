#!/usr/bin/env bash
# Decoding alone, two framegraph builds alternated on one core: a `file` → `null` pipeline over
# CLIP repeated COPIES times (ffmpeg -stream_loop, no re-encoding), user + system CPU seconds of
# each run from /usr/bin/time. Asserts nothing.
#
#   tools/bench/decode_ab.sh ROUNDS CLIP COPIES BIN_A BIN_B
#   tools/bench/decode_ab.sh 3 out/live-cost/again-1920x1080.mp4 8 /tmp/framegraph-old .build/release/framegraph
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 5 ] || { sed -n 2,7p "$0"; exit 2; }
rounds=$1 clip=$2 copies=$3
dir=out/decode-ab
mkdir -p "$dir"
long="$dir/$(basename "${clip%.*}")-x$copies.mp4"
[ -f "$long" ] || ffmpeg -nostdin -v error -y -stream_loop $((copies - 1)) -i "$clip" -c copy -an "$long"
printf 'source = file path=x\noutput = null\nsource -> output\n' > "$dir/decode.fg"
for round in $(seq "$rounds"); do
  for side in A B; do
    bin=$4; [ "$side" = B ] && bin=$5
    /usr/bin/time -f "round $round $side: %U s user + %S s system, %e s" taskset -c 0 "$bin" run "$dir/decode.fg" --input "$long" --quiet
  done
done
