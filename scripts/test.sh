#!/usr/bin/env bash
# Runs the test suite on a fresh Debian 12 machine: installs what is missing, makes the default
# input, builds and runs every test. Tests that need ../shared skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
tools/make-samples.sh
tools/models/fetch_mediapipe_models.sh models/cache
tools/setup-python.sh
swift build --build-tests 2>&1 | tail -n 5
swift test --skip-build "$@"
