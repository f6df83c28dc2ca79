#!/usr/bin/env bash
# The test of framegraph-streams (live streams supervised by Ray actors), about 25 s. Sets up
# .venv-ray if needed, then runs tools/cluster/test_streams.py with it. KEEP=1 keeps a failed run's folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/setup.sh"
PYTHONDONTWRITEBYTECODE=1 exec "$here/../../.venv-ray/bin/python" "$here/test_streams.py" "$@"
