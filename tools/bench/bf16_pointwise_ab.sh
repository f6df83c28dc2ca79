#!/usr/bin/env bash
# The bfloat16 1×1 kernel (Sources/CFrameGraphKernels/convolution_bf16.c) as it is and as it was at
# REV, each built with the toolchain's clang into tools/bench/bf16_pointwise.c, alternated A B A B …
# ROUNDS times per case, pinned to CPU 0. Each case is "ROWS K N" (a layer: pixels, input and output
# channels). Equal checksums mean the same values bit for bit. Asserts nothing.
#
#   tools/bench/bf16_pointwise_ab.sh REV ROUNDS CASE...
#   tools/bench/bf16_pointwise_ab.sh ed0a4f5~1 3 "196 112 672" "49 1152 192" "3136 24 144"
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n 2,8p "$0"; exit 2; }
rev=$1 rounds=$2
shift 2
# The toolchain's clang (next to swift when clang is not on PATH): the project's C kernels are built with it.
swift_bin=$(command -v swift || true)
cc=$(command -v clang || { [ -n "$swift_bin" ] && [ -x "$(dirname "$(readlink -f "$swift_bin")")/clang" ] && echo "$(dirname "$(readlink -f "$swift_bin")")/clang"; } || echo cc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
git show "$rev:Sources/CFrameGraphKernels/convolution_bf16.c" > "$out/convolution_bf16_then.c"
k=Sources/CFrameGraphKernels
for side in then now; do
  src=$k/convolution_bf16.c
  [ "$side" = then ] && src=$out/convolution_bf16_then.c
  "$cc" -O2 -I $k/include -I $k tools/bench/bf16_pointwise.c "$src" $k/convolution.c $k/cpu.c -lm -o "$out/$side"
done
for shape in "$@"; do
  for _ in $(seq "$rounds"); do
    for side in then now; do
      # shellcheck disable=SC2086  # a case is the benchmark's arguments, split on spaces
      label=now
      [ "$side" = then ] && label="at $rev"
      echo "$label: $(taskset -c 0 "$out/$side" $shape)"
    done
  done
done
