#!/usr/bin/env bash
# Runs the test suite N times (default 3) with one core kept busy by stress-ng, as a shared or busy
# machine would be: the suite asserts schedules and bounds derived from what each run measured, never
# the machine's speed, so it must pass every time.
#
#   tools/test-under-load.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
scripts/install-deps.sh
command -v stress-ng >/dev/null || { echo "stress-ng is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
./scripts/test.sh --filter "NOTHING-$RANDOM" >/dev/null 2>&1 || true   # set-up and build once
stress-ng --cpu 1 --timeout 0 --quiet &
load=$!
trap 'kill $load 2>/dev/null || true' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  if swift test -c release -Xswiftc -enable-testing --skip-build > ".build/test-under-load-$i.log" 2>&1; then
    echo "run $i: $(grep -E 'Test run with' ".build/test-under-load-$i.log" | tail -n 1)"
  else
    echo "run $i FAILED: $(grep -E 'Test run with|✘ Test .*recorded' ".build/test-under-load-$i.log" | head -n 5)"
    failed=1
  fi
done
exit $failed
