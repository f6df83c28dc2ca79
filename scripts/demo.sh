#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds FrameGraph (release),
# makes the default input (samples/media/portrait.mp4, a clip made from the public-domain astronaut portrait
# in the scikit-image wheel), fetches MediaPipe's selfie segmentation model from the mediapipe wheel
# on PyPI (both checked by SHA-256), and runs pipelines/portrait-segment.fg on it: the person is
# kept, the background replaced. Prints the statistics; leaves out/portrait-segment.mp4 and
# out/portrait-segment-stats.json. Extra arguments go to `framegraph run` (e.g. --mode live).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
tools/make-samples.sh
tools/models/fetch_mediapipe_models.sh models/cache
swift build -c release --product framegraph 2>&1 | tail -n 1
.build/release/framegraph run pipelines/portrait-segment.fg --input samples/media/portrait.mp4 \
  --output out/portrait-segment.mp4 --stats out/portrait-segment-stats.json "$@"
echo "wrote out/portrait-segment.mp4 and out/portrait-segment-stats.json"
