#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and ThreadSanitizer.
#
#   tools/sanitize.sh [address|thread|all]      (default: all)
#
# Both build optimised (-c release, testing enabled), as users run FrameGraph: lifetime bugs that only
# the optimiser exposes (an unsafe pointer outliving its owner) show up only there. The CLI that the
# end-to-end tests run is built with the same sanitizer. Scratch folders: .build-asan, .build-tsan.
#
# Skipped under both, and why:
#   LiveCameraTests, liveModeAt30fps, colorizeFileLive, liveColorizeKeepsOneOutputPerTick
#                                     real-time schedules: the instrumentation (2-15x slower) makes the
#                                     machine, not the code, miss frames
#   eccv16                            a 32 M-parameter model: minutes under instrumentation
#   Fuzz                              the in-suite fuzz loops (tools/fuzz/run.sh fuzzes with ASan instead)
#   CameraPipelineTests, CameraLogicTests (ASan only): the emulated camera is LD_PRELOADed into the
#                                     CLI, and ASan must be the first library loaded
# Leaks inside the toolchain's own libraries are suppressed (tools/lsan.supp).
# Known ThreadSanitizer blind spot: a frame buffer read on one thread and released last on another
# returns to the BufferPool through Swift's reference counting, which lives in the uninstrumented
# runtime; if the pool then hands it to a source, TSan reports the source's write against the old
# read although the release/acquire of the count orders them (seen with a worker node that passes
# the source's own frame straight to a sink).
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
scripts/install-deps.sh
tools/make-samples.sh
tools/models/fetch_mediapipe_models.sh models/cache
tools/setup-python.sh
make -s -C Tests/FakeCamera
common_skip="LiveCameraTests|liveModeAt30fps|colorizeFileLive|liveColorizeKeepsOneOutputPerTick|eccv16|Fuzz"
status=0
if [ "$which" = address ] || [ "$which" = all ]; then
  echo "== AddressSanitizer"
  swift build -c release --sanitize=address --scratch-path .build-asan --build-tests -Xswiftc -enable-testing 2>&1 | tail -n 1
  LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0" ASAN_OPTIONS="detect_leaks=1" \
    swift test -c release --sanitize=address --scratch-path .build-asan --skip-build -Xswiftc -enable-testing \
      --skip "$common_skip|CameraPipelineTests|CameraLogicTests" || status=1
fi
if [ "$which" = thread ] || [ "$which" = all ]; then
  echo "== ThreadSanitizer"
  swift build -c release --sanitize=thread --scratch-path .build-tsan --build-tests -Xswiftc -enable-testing 2>&1 | tail -n 1
  TSAN_OPTIONS="halt_on_error=0" \
    swift test -c release --sanitize=thread --scratch-path .build-tsan --skip-build -Xswiftc -enable-testing \
      --skip "$common_skip" || status=1
fi
exit $status
