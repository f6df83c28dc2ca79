#!/usr/bin/env bash
# Memory over a long live run: loops a clip through pipelines/slow.fg (drop-while-busy at work) for
# DURATION seconds (default 600) and samples the process's RSS every 10 s. Prints the samples, the
# first-minute and last-minute medians and their ratio; the run's stats go to out/soak-stats.json.
#   tools/bench/memory-soak.sh [CLIP] [DURATION]
set -euo pipefail
cd "$(dirname "$0")/../.."
clip=${1:-samples/media/portrait.mp4}
duration=${2:-600}
bin=.build/release/framegraph
[ -x "$bin" ] || swift build -c release --product framegraph
mkdir -p out
"$bin" run pipelines/slow.fg --mode live --loop --duration "$duration" --input "$clip" \
  --output out/soak.mp4 --stats out/soak-stats.json --quiet &
pid=$!
samples=()
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  [ -n "$rss" ] && samples+=("$rss") && echo "t=$(( (${#samples[@]} - 1) * 10 ))s rss=${rss} kB"
  sleep 10
done
wait "$pid" || true
python3 - "${samples[@]}" <<'PY'
import statistics, sys
s = [int(x) for x in sys.argv[1:]]
if len(s) < 12:
    print("too few samples"); sys.exit(0)
first, last = statistics.median(s[1:7]), statistics.median(s[-6:])
print(f"RSS median first minute {first/1024:.1f} MiB, last minute {last/1024:.1f} MiB, "
      f"ratio {last/first:.3f}, max {max(s)/1024:.1f} MiB, min {min(s)/1024:.1f} MiB")
PY
python3 -c "import json; d=json.load(open('out/soak-stats.json')); print({k: d[k] for k in ['framesIn','admitted','droppedBusy','droppedLate','duplicated','framesOut','achievedFps','elapsedSeconds','cpuSeconds']}); print('e2e', d['endToEnd'])"
