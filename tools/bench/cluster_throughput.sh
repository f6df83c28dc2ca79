#!/usr/bin/env bash
# framegraph-batch throughput with 1 and 2 worker nodes on this machine, and Ray's per-task overhead
# against the framegraph CLI in a loop (tools/bench/cluster_throughput.py says how). Sets up .venv-ray.
#   tools/bench/cluster_throughput.sh [--rounds 3] [--clips 12] [--seconds 4]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/../cluster/setup.sh"
PYTHONDONTWRITEBYTECODE=1 exec "$here/../../.venv-ray/bin/python" "$here/cluster_throughput.py" "$@"
