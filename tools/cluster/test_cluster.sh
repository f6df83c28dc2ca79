#!/usr/bin/env bash
# The acceptance test of framegraph-batch on a two-node Ray cluster on this machine (about a minute).
# Sets up .venv-ray if needed (tools/cluster/setup.sh), then runs tools/cluster/test_cluster.py with it.
# KEEP=1 keeps the temporary folder of a failed run for inspection.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/setup.sh"
PYTHONDONTWRITEBYTECODE=1 exec "$here/../../.venv-ray/bin/python" "$here/test_cluster.py" "$@"
