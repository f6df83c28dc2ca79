#!/usr/bin/env bash
# Two settings (or two builds) of one model, alternated A B A B …, pinned to CPU 0: each round runs
# `framegraph model bench MODEL --runs 60` once per side; prints each run's median and minimum, then
# the medians of both over the rounds, their ratio and how many rounds B won. Asserts nothing.
#
#   tools/bench/model_ab.sh ROUNDS MODEL "ENV_A" "ENV_B" [own|xnnpack|auto] [BINARY_A] [BINARY_B]
#   tools/bench/model_ab.sh 5 models/cache/selfie_segmentation.tflite FRAMEGRAPH_AVX512_FULL_WIDTH=0 FRAMEGRAPH_AVX512_FULL_WIDTH=1 own
#
# ENV_A / ENV_B: environment settings for each side (X=1 for none); the binaries default to
# .build/release/framegraph (an older build copied elsewhere compares builds). PRECISION=bf16 (or
# int8) in the environment times both sides in that precision:
#   PRECISION=bf16 tools/bench/model_ab.sh 5 hand_landmark_full X=1 X=1 own .build/release/framegraph-old
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=$1 model=$2 a=$3 b=$4 kernels=${5:-own}
bin_a=${6:-.build/release/framegraph} bin_b=${7:-.build/release/framegraph}
for _ in $(seq "$rounds"); do
  for side in A B; do
    if [ "$side" = A ]; then settings=$a bin=$bin_a; else settings=$b bin=$bin_b; fi
    # shellcheck disable=SC2086
    line=$(env $settings taskset -c 0 "$bin" model bench "$model" --runs 60 --conv-kernels "$kernels" --stages 0 --precision "${PRECISION:-fp32}" 2>&1 |
      grep -o "median [0-9.]*\|min [0-9.]*" | awk '{print $2}' | tr '\n' ' ')
    echo "$side $line"
  done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    print(line.rstrip())
    side, median, minimum = line.split()[:3]
    runs.setdefault(side, []).append((float(median), float(minimum)))
for side, v in sorted(runs.items()):
    print(f"{side} median of medians {statistics.median(x for x, _ in v):.3f} ms, median of minimums {statistics.median(m for _, m in v):.3f} ms")
a, b = [x for x, _ in runs["A"]], [x for x, _ in runs["B"]]
print(f"B/A of the medians {statistics.median(b) / statistics.median(a):.3f}, B faster in {sum(y < x for x, y in zip(a, b))} of {len(a)} rounds")
'
