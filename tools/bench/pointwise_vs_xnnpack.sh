#!/usr/bin/env bash
# Builds tools/bench/pointwise_vs_xnnpack.c against the project's kernel and the system XNNPACK and
# times 1×1 convolutions of the sizes MediaPipe's and EfficientNet's blocks have, pinned to CPU 0.
set -euo pipefail
exec "$(dirname "$0")/kernel_bench.sh" pointwise_vs_xnnpack convolution \
  "96 16 16" "48 32 32" "24 64 64" "12 128 128" "6 128 128" "64 96 24" "32 144 32" "128 16 64"
