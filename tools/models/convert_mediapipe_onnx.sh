#!/usr/bin/env bash
# MediaPipe's float models (models/cache/*.tflite, fetched by fetch_mediapipe_models.sh) as ONNX
# beside them, made by tools/models/tflite_to_onnx.py with the tflite and onnx packages of
# .venv-quant (tools/quantized/setup.sh), for the ONNX importer's parity test against the golden
# outputs (Tests/ONNXImportTests/MediaPipeONNXTests.swift). Each is written to a temporary file and
# renamed; one that is already there is kept. Under a second each.
set -euo pipefail
cd "$(dirname "$0")/../.."
for m in selfie_segmentation selfie_segmentation_landscape face_detection_short_range face_landmark; do
  [ -s "models/cache/$m.onnx" ] && continue
  tmp="models/cache/.$m.onnx.partial-$$"
  trap 'rm -f "$tmp"' EXIT
  .venv-quant/bin/python tools/models/tflite_to_onnx.py "models/cache/$m.tflite" "$tmp" > /dev/null
  mv "$tmp" "models/cache/$m.onnx"
done
