#!/usr/bin/env bash
# The shared runner of the C kernel benchmarks: builds tools/bench/BENCH.c with the toolchain's clang
# against one of the project's kernel files (Sources/CFrameGraphKernels/KERNEL.c) and the system
# XNNPACK, then runs it once per case, pinned to CPU 0. Each case is one string of the benchmark's
# arguments. Asserts nothing.
#
#   tools/bench/kernel_bench.sh BENCH KERNEL CASE...
#   tools/bench/kernel_bench.sh pointwise_vs_xnnpack convolution "96 16 16" "48 32 32"
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n 2,8p "$0"; exit 2; }
bench=$1 kernel=$2
shift 2
cc=$(command -v clang || echo cc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cc" -O2 -I Sources/CFrameGraphKernels/include -I Sources/CFrameGraphKernels "tools/bench/$bench.c" \
  "Sources/CFrameGraphKernels/$kernel.c" Sources/CFrameGraphKernels/cpu.c -lXNNPACK -lpthreadpool -lm -o "$out/bench"
for shape in "$@"; do
  # shellcheck disable=SC2086  # a case is the benchmark's arguments, split on spaces
  taskset -c 0 "$out/bench" $shape
done
