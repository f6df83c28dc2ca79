#!/usr/bin/env bash
# Creates the tools venv (.venv-tools) with what the tests need from PyPI (onnx, onnxruntime:
# the reference runtime of the ONNX parity tests; pillow: PNG reading for tools/metaltensor;
# ai-edge-litert: LiteRT, the reference runtime of tools/models/validate.py; pytest and mypy: the
# Python package's suite, python/tests), pinned in
# tools/requirements-ci.txt, and
# installs tools/fgtools (the helpers the tools share across folders) into it, editable.
# Idempotent; quiet when already set up.
# For the full tools (TFLite flatbuffer reader, colorizer metrics, peers' benchmarks) use tools/requirements-tools.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-tools/bin/python ]; then
  python3 -m venv .venv-tools
fi
if ! .venv-tools/bin/python -c "import onnx, onnxruntime, numpy, PIL, ai_edge_litert.interpreter, pytest, mypy" 2>/dev/null; then
  echo "installing the test suite's Python tools (onnx, onnxruntime, numpy, pillow, ai-edge-litert, pytest, mypy) into .venv-tools"
  .venv-tools/bin/python -m pip install --quiet --disable-pip-version-check -r tools/requirements-ci.txt
fi
# fgtools from this checkout (an editable install: edits in tools/fgtools take effect at once).
if ! .venv-tools/bin/python -c 'import os, sys, fgtools; sys.exit(os.path.dirname(os.path.realpath(fgtools.__file__)) != os.path.realpath("tools/fgtools"))' 2>/dev/null; then
  echo "installing tools/fgtools into .venv-tools (editable)"
  .venv-tools/bin/python -m pip install --quiet --disable-pip-version-check -e tools
  rm -rf tools/fgtools.egg-info
fi
