#!/usr/bin/env bash
# Creates .venv-quant (git-ignored by .gitignore's `.venv*/`): the converters that make the quantized
# test models of tools/quantized/ (TensorFlow's TFLiteConverter, onnxruntime's quantizer,
# onnxconverter-common's float16 pass) and their reference runtimes (LiteRT, onnxruntime), pinned in
# tools/quantized/requirements.txt. Separate from .venv-tools: TensorFlow is large (the venv is
# 1.7 GB, a 274 MB wheel) and only the model generator needs it.
# Idempotent; quiet when already set up (30 ms). 37 s here from PyPI without a pip cache (2 cores,
# ~400 MB of wheels).
#   tools/quantized/setup.sh && .venv-quant/bin/python tools/quantized/make_models.py
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -x .venv-quant/bin/python ]; then
  python3 -m venv .venv-quant
fi
# Importing TensorFlow takes seconds: once the imports have worked, the requirements' SHA-256 is
# kept in the venv and a later run with the same requirements only compares it (milliseconds).
want="$(sha256sum tools/quantized/requirements.txt | cut -d' ' -f1)"
if [ "$(cat .venv-quant/.requirements.sha256 2>/dev/null)" = "$want" ]; then
  exit 0
fi
if ! .venv-quant/bin/python -c "import tensorflow, onnx, onnxruntime, onnxconverter_common, numpy, PIL, tflite, ai_edge_litert.interpreter" 2>/dev/null; then
  echo "installing the converters (tensorflow-cpu, onnxruntime, onnxconverter-common, ai-edge-litert) into .venv-quant"
  nice -n 10 .venv-quant/bin/python -m pip install --quiet --disable-pip-version-check -r tools/quantized/requirements.txt
fi
echo "$want" > .venv-quant/.requirements.sha256
