#!/usr/bin/env bash
# Creates .venv-ray (git-ignored, beside the repository's other venvs) with Ray from PyPI, pinned in
# tools/cluster/requirements.txt. Only tools/cluster needs it: the project's two-command set-up
# (scripts/test.sh, scripts/demo.sh) does not. Idempotent; quiet when already set up.
set -euo pipefail
cd "$(dirname "$0")/../.."
want="$(grep -E '^ray==' tools/cluster/requirements.txt | head -n1 | cut -d= -f3)"
if [ ! -x .venv-ray/bin/python ]; then
  python3 -m venv .venv-ray
fi
have="$(.venv-ray/bin/python -c 'import ray; print(ray.__version__)' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  echo "installing Ray $want for tools/cluster into .venv-ray"
  .venv-ray/bin/python -m pip install --quiet --disable-pip-version-check -r tools/cluster/requirements.txt
fi
# fgtools (tools/fgtools: the cluster helpers its tests and benchmark share), editable, from this checkout.
if ! .venv-ray/bin/python -c 'import os, sys, fgtools; sys.exit(os.path.dirname(os.path.realpath(fgtools.__file__)) != os.path.realpath("tools/fgtools"))' 2>/dev/null; then
  echo "installing tools/fgtools into .venv-ray (editable)"
  .venv-ray/bin/python -m pip install --quiet --disable-pip-version-check -e tools
  rm -rf tools/fgtools.egg-info
fi
