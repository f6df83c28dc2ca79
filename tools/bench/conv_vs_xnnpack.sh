#!/usr/bin/env bash
# Builds tools/bench/conv_vs_xnnpack.c against the project's kernel and the system XNNPACK and times
# the windowed (stem and 3×3) convolutions of the shipped models, pinned to CPU 0. Arguments, if any:
# one case as "SIZE IN OUT KERNEL STRIDE".
set -euo pipefail
# BlazeFace, face landmarks, selfie segmentation, the colorizer, EfficientNet-Lite0 stems; a 3×3 inside a network.
cases=("128 3 24 5 2" "192 3 16 3 2" "256 3 16 3 2" "256 1 16 3 2" "224 3 32 3 2" "32 32 32 3 1")
[ $# -gt 0 ] && cases=("$@")
exec "$(dirname "$0")/kernel_bench.sh" conv_vs_xnnpack convolution "${cases[@]}"
