#!/usr/bin/env bash
# The area resize (network input preparation) of the current tree against a git revision's
# (default afb3b61, the gathers before the permute plan; REV must predate fg_area_resize's plan
# argument, which the old side is called without), one plane at a time, pinned to CPU 0:
#   tools/bench/area_resize_ab.sh [REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:-afb3b61}
cc=$(command -v clang || echo cc)
out=$(mktemp -d)
git show "$rev:Sources/CFrameGraphKernels/resample.c" | sed 's/fg_area_resize/old_area_resize/; s/fg_area_taps/old_area_taps/;
  s/fg_yuv_float_to_rgb24/old_yuv/; s/fg_float_to_bytes/old_ftb/; s/fg_chroma_row_to_rgb24/old_crr/; s/fg_rgb24_to_cbcr/old_cbcr/;
  s/fg_ab_row/old_ab/' > "$out/old.c"
"$cc" -O2 -I Sources/CFrameGraphKernels/include -I Sources/CFrameGraphKernels -iquote Sources/CFrameGraphKernels tools/bench/area_resize_ab.c \
  "$out/old.c" Sources/CFrameGraphKernels/resample.c Sources/CFrameGraphKernels/cpu.c -o "$out/bench"
for size in "640 480" "320 240" "1920 1080" "960 540"; do taskset -c 0 "$out/bench" $size; done
rm -rf "$out"
