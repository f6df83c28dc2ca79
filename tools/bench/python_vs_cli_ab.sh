#!/bin/sh
# Two builds of the C library against the CLI, interleaved: each round runs python_vs_cli.py once
# with the old library (FRAMEGRAPH_LIB=OLD) and once with this checkout's, alternating which goes
# first; every run measures its own CLI reference beside it. Prints each run's median lines, then
# the medians of the ratios per build.
#   tools/bench/python_vs_cli_ab.sh OLD_LIBRARY.so [ROUNDS] [SIDES]
# OLD_LIBRARY.so: a copy of an earlier build's .build/release/libFrameGraphC.so.
set -eu
old=$1
rounds=${2:-5}
sides=${3:-cli,py-frames,py-results}
root=$(cd "$(dirname "$0")/../.." && pwd)
new=$root/.build/release/libFrameGraphC.so
py=$root/.venv-tools/bin/python
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=1
while [ "$i" -le "$rounds" ]; do
    if [ $((i % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    for which in $order; do
        if [ "$which" = old ]; then lib=$old; else lib=$new; fi
        FRAMEGRAPH_LIB=$lib "$py" "$root/tools/bench/python_vs_cli.py" --rounds 1 --sides "$sides" > "$out/$which-$i.txt"
        echo "round $i $which:"; sed -n '/^median/,/^one copy/p' "$out/$which-$i.txt" | sed '1d;$d'
    done
    i=$((i + 1))
done
"$py" - "$out" "$rounds" <<'PY'
import re, statistics, sys
from pathlib import Path
folder, rounds = Path(sys.argv[1]), int(sys.argv[2])
print("medians over rounds of each run's (python / its own CLI), whole run and since frames flowed:")
for which in ("old", "new"):
    ratios = {}
    for i in range(1, rounds + 1):
        text = (folder / f"{which}-{i}.txt").read_text().split("median", 1)[1]
        for line in text.splitlines()[1:]:
            m = re.match(r"\s+(python.*?)\s{2,}([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
            if m:
                ratios.setdefault(m.group(1), []).append((float(m.group(3)), float(m.group(5))))
    for side, values in ratios.items():
        print(f"  {which:<4} {side:<28} whole {statistics.median(v[0] for v in values):.3f}  steady {statistics.median(v[1] for v in values):.3f}  (n={len(values)})")
PY
