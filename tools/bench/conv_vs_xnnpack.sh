#!/usr/bin/env bash
# Builds tools/bench/conv_vs_xnnpack.c against the project's kernel and the system XNNPACK and times
# the windowed (stem and 3×3) convolutions of the shipped models, pinned to CPU 0. Arguments, if any:
# one case as "SIZE IN OUT KERNEL STRIDE".
set -euo pipefail
cd "$(dirname "$0")/../.."
cc=$(command -v clang || echo cc)
out=$(mktemp -d)
"$cc" -O2 -I Sources/CFrameGraphKernels/include -I Sources/CFrameGraphKernels tools/bench/conv_vs_xnnpack.c \
  Sources/CFrameGraphKernels/convolution.c Sources/CFrameGraphKernels/cpu.c -lXNNPACK -lpthreadpool -lm -o "$out/bench"
# BlazeFace, face landmarks, selfie segmentation, the colorizer, EfficientNet-Lite0 stems; a 3×3 inside a network.
cases=("128 3 24 5 2" "192 3 16 3 2" "256 3 16 3 2" "256 1 16 3 2" "224 3 32 3 2" "32 32 32 3 1")
[ $# -gt 0 ] && cases=("$@")
for shape in "${cases[@]}"; do
  taskset -c 0 "$out/bench" $shape
done
rm -rf "$out"
