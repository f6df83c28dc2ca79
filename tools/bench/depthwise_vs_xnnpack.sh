#!/usr/bin/env bash
# Builds tools/bench/depthwise_vs_xnnpack.c against the project's kernel and the system XNNPACK and
# times depthwise convolutions of the sizes MediaPipe's, EfficientNet-Lite's and the colorizer's
# blocks have, pinned to CPU 0.
set -euo pipefail
cases=("96 16 3 1" "48 32 3 1" "96 32 3 2" "24 64 3 1" "12 128 3 1" "64 24 3 1" "112 32 3 1" "56 144 3 1" "28 240 5 1" "14 480 3 1" "14 672 5 1" "7 1152 5 1")
[ $# -gt 0 ] && cases=("$@")
exec "$(dirname "$0")/kernel_bench.sh" depthwise_vs_xnnpack depthwise "${cases[@]}"
