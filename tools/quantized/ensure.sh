#!/usr/bin/env bash
# models/cache/quantized/ as tools/quantized/ makes it, made only when missing or stale: .venv-quant
# (setup.sh), then make_models.py, which does nothing when manifest.json's stamp (the generator's
# code and pins, the photos, the source models) is current, then verify.py on the 8 reference photos
# (the spread between each reference runtime's own two paths, verify.json, the parity tests' bound
# for dynamic-range and QDQ models) when verify.json is older than the manifest. The no-op path
# takes well under a second. Arguments go to make_models.py (e.g. --force).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/quantized/setup.sh
.venv-quant/bin/python tools/quantized/make_models.py "$@"
out="${FRAMEGRAPH_QUANT_OUT:-models/cache/quantized}"
if [ ! -s "$out/verify.json" ] || [ "$out/manifest.json" -nt "$out/verify.json" ]; then
  .venv-quant/bin/python tools/quantized/verify.py --photos 8 > "$out/verify.log" 2>&1 \
    || { tail -n 20 "$out/verify.log" >&2; exit 1; }
fi
