#!/usr/bin/env bash
# Builds tools/bench/int8_vs_float.c against the project's kernel and the system XNNPACK and times
# the 1×1 convolutions of MediaPipe's selfie segmentation (sizes from `framegraph model bench
# selfie_segmentation`'s slowest stages) in float and in int8, pinned to CPU 0. Asserts nothing.
set -euo pipefail
exec "$(dirname "$0")/kernel_bench.sh" int8_vs_float convolution \
  "128 16 16" "64 16 72" "64 72 24" "32 24 88" "32 96 24" "16 96 32" "16 128 128"
