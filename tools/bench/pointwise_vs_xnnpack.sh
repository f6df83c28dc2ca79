#!/usr/bin/env bash
# Builds tools/bench/pointwise_vs_xnnpack.c against the project's kernel and the system XNNPACK and
# times 1×1 convolutions of the sizes MediaPipe's and EfficientNet's blocks have, pinned to CPU 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
cc=$(command -v clang || echo cc)
out=$(mktemp -d)
"$cc" -O2 -I Sources/CFrameGraphKernels/include -I Sources/CFrameGraphKernels tools/bench/pointwise_vs_xnnpack.c \
  Sources/CFrameGraphKernels/convolution.c Sources/CFrameGraphKernels/cpu.c -lXNNPACK -lpthreadpool -lm -o "$out/bench"
for shape in "96 16 16" "48 32 32" "24 64 64" "12 128 128" "6 128 128" "64 96 24" "32 144 32" "128 16 64"; do
  taskset -c 0 "$out/bench" $shape
done
rm -rf "$out"
