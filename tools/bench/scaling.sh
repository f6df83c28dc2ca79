#!/usr/bin/env bash
# Cost as work grows: the portrait pipeline (decode → selfie segmentation → full-resolution
# composite → null sink, offline, both cores) at 640×480, 1280×720 and 1920×1080, then 1, 2 and 4
# streams of 640×480 in one process (N independent chains in one graph) and as N processes at once.
# Prints fps (frames out / elapsed, summed over streams) and CPU milliseconds per frame for each
# case, medians of ROUNDS interleaved rounds, and writes a trace per resolution (out/scaling/).
# Inputs are made from samples/media/portrait.mp4 with the ffmpeg CLI (out/scaling/, ignored).
#
#   tools/bench/scaling.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
fg=.build/release/framegraph
[ -x "$fg" ] || swift build -c release --product framegraph
dir=out/scaling
mkdir -p "$dir"
clip=samples/media/portrait.mp4
for size in 640x480 1280x720 1920x1080; do
  [ -f "$dir/portrait-$size.mp4" ] || ffmpeg -nostdin -v error -y -i "$clip" -vf "scale=${size/x/:}:flags=bicubic" \
      -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p "$dir/portrait-$size.mp4"
done
export FRAMEGRAPH_MODELS=$PWD/models/cache

# A graph of N independent portrait chains, one per stream.
streams_pipeline() {
  local n=$1 file=$dir/streams-$1.fg
  : > "$file"
  for i in $(seq 1 "$n"); do
    cat >> "$file" <<EOP
s$i = file path=$PWD/$dir/portrait-640x480.mp4
n$i = segment model=selfie_segmentation
m$i = background mode=colour
k$i = null
s$i -> m$i.frame
s$i -> n$i -> m$i.mask
m$i -> k$i
EOP
  done
  echo "$file"
}

# One offline run → prints "frames elapsed cpu", frames summed over every null sink (a graph of N
# streams has N; the report's framesOut counts the first sink only).
run_stats() {
  local stats
  stats=$(mktemp --suffix .json)
  "$fg" run "$@" --mode offline --quiet --stats "$stats"
  python3 -c "import json,sys; s=json.load(open('$stats')); print(sum(n['processed'] for n in s['nodes'] if n['kind'] == 'null'), s['elapsedSeconds'], s['runCPUSeconds'])"
  rm -f "$stats"
}

declare -A results
for r in $(seq 1 "$rounds"); do
  for size in 640x480 1280x720 1920x1080; do
    read -r frames elapsed cpu < <(run_stats pipelines/measure-segment.fg --input "$dir/portrait-$size.mp4")
    results[res-$size]+="$(python3 -c "print($frames/$elapsed, $cpu/$frames*1000)");"
  done
  for n in 1 2 4; do
    read -r frames elapsed cpu < <(run_stats "$(streams_pipeline "$n")")
    results[graph-$n]+="$(python3 -c "print($frames/$elapsed, $cpu/$frames*1000)");"
    # N processes at once: frames of all over the longest run (each run's own elapsed time, first
    # frame to last, so that start-up — model loading, kernel tuning — is left out as it is for the
    # graphs), CPU of all.
    pids=()
    outs=()
    for i in $(seq 1 "$n"); do
      o=$(mktemp); outs+=("$o")
      run_stats pipelines/measure-segment.fg --input "$dir/portrait-640x480.mp4" > "$o" &
      pids+=($!)
    done
    wait "${pids[@]}"
    total_frames=0; total_cpu=0; longest=0
    for o in "${outs[@]}"; do
      read -r f e c < "$o"; total_frames=$((total_frames + f)); total_cpu=$(python3 -c "print($total_cpu + $c)")
      longest=$(python3 -c "print(max($longest, $e))"); rm -f "$o"
    done
    results[proc-$n]+="$(python3 -c "print($total_frames/$longest, $total_cpu/$total_frames*1000)");"
  done
done

python3 - "$rounds" <<EOP
import statistics, sys
rows = """$(for k in "${!results[@]}"; do echo "$k=${results[$k]}"; done)"""
table = {}
for line in rows.strip().splitlines():
    k, v = line.split("=", 1)
    pairs = [tuple(map(float, p.split())) for p in v.strip(";").split(";") if p.strip()]
    table[k] = (statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs))
print(f"portrait pipeline (measure-segment.fg), offline, both cores, medians of {sys.argv[1]} rounds")
print(f"{'case':28s} {'fps':>8s} {'CPU ms/frame':>13s}")
for k in ["res-640x480", "res-1280x720", "res-1920x1080", "graph-1", "graph-2", "graph-4", "proc-1", "proc-2", "proc-4"]:
    name = {"res": "one stream at ", "graph": "640x480 streams in one graph: ", "proc": "640x480 processes at once: "}[k.split("-")[0]] + k.split("-", 1)[1]
    fps, cpu = table[k]
    print(f"{name:28s} {fps:8.1f} {cpu:13.2f}")
EOP
for size in 640x480 1920x1080; do
  "$fg" run pipelines/measure-segment.fg --input "$dir/portrait-$size.mp4" --mode offline --quiet --trace "$dir/trace-$size.json"
done
echo "traces: $dir/trace-640x480.json $dir/trace-1920x1080.json (open in Perfetto)"
