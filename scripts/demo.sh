#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds FrameGraph (release),
# makes the default input (samples/portrait.mp4) and runs pipelines/transcode.fg on it, printing the
# statistics and leaving out/transcode.mp4 (and out/transcode-stats.json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
tools/make-samples.sh
swift build -c release --product framegraph 2>&1 | tail -n 1
.build/release/framegraph run pipelines/transcode.fg --input samples/portrait.mp4 \
  --output out/transcode.mp4 --stats out/transcode-stats.json "$@"
echo "wrote out/transcode.mp4 and out/transcode-stats.json"
