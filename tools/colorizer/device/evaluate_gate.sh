#!/bin/bash
# Issue 46, helper issue46e: the neutral head's candidates (neutral_gate.py; rule in select_gate.py) on the GPU
# machine's CPUs. Carry (.colorizer-carry/, git-ignored): code/ = a copy of tools/colorizer (with device/);
# gate.npz (neutral_gate.py fit; or $GATE); bsds/val (BSDS500 val); webcam/{hungry,want,walk,no}.mkv; places/<package>/<file>;
# hallway.mp4; selfie_segmentation.onnx. Phase 1: every candidate and v4.1 on the validation places and the office
# clips (groups of 4 models per process, one thread each); the rule; phase 2: v4.1 and the pick on the evaluation
# places (grids), the office clips raw and smoothed, BSDS500 val photos.
C=.colorizer-carry; R=/tmp/m; mkdir -p $R /tmp/log $C/cand
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 COLORIZER_VAL_DIR=$C/bsds/val COLORIZER_PLACES_DIR=$C/places COLORIZER_PLACES_CLIP=$C/hallway.mp4
nproc; python3 -c "import onnxruntime, skimage, cv2; print(onnxruntime.__version__, skimage.__version__, cv2.__version__)"
V=models/colorizer/colorizer.onnx; NG="python3 $C/code/neutral_gate.py fold $V ${GATE:-$C/gate.npz}"
L=""
for g in 1.0 1.05 1.1 1.15; do for h in 1.0 1.5 2.0; do $NG $C/cand/G${g}_h$h.onnx --g $g --h $h >/dev/null; L="$L G${g}_h$h=$C/cand/G${g}_h$h.onnx"; done
  for h in 0 1.5; do for m in 0.05 0.2; do $NG $C/cand/C${g}_h${h}_m$m.onnx --g $g --h $h --cast --m0 $m >/dev/null; L="$L C${g}_h${h}_m$m=$C/cand/C${g}_h${h}_m$m.onnx"; done; done; done
set -- $L; ls $C/cand | wc -l
M="--segmenter $C/selfie_segmentation.onnx"; J=/tmp/jobs; : > $J
grp() { echo "python3 $C/code/metrics.py $2 $M --no-photos --webcam $C/webcam --smoothing 0.6 --scene-cut 6 --json $R/office_$1.json > /tmp/log/office_$1.log 2>&1" >> $J
        echo "python3 $C/code/metrics.py $2 $M --no-photos --no-webcam --places-val --json $R/val_$1.json > /tmp/log/val_$1.log 2>&1" >> $J; }
grp ref "v4.1=$V"; i=0
while [ $# -gt 0 ]; do grp g$i "$1 $2 $3 $4"; shift 4; i=$((i+1)); done
(grep office $J; grep val_ $J) | timeout 300 xargs -P 16 -I{} sh -c "{}"
echo "phase 1 done at $SECONDS s"
python3 $C/code/device/select_gate.py $R | tee $R/selection.txt
P=$(cat $R/pick.txt)
if [ -n "$P" ]; then
  PM="$P=$C/cand/$P.onnx"
  timeout 150 python3 $C/code/metrics.py v4.1=$V $PM $M --no-photos --no-webcam --places --places-grids $R/grids --smoothing 0,0.6 --scene-cut 6 --json $R/places.json > /tmp/log/places.log 2>&1 &
  timeout 150 python3 $C/code/metrics.py v4.1=$V $PM $M --no-photos --webcam $C/webcam --smoothing 0,0.6 --scene-cut 6 --json $R/office_final.json > /tmp/log/office_final.log 2>&1 &
  timeout 150 python3 $C/code/metrics.py v4.1=$V $PM $M --no-webcam --val $C/bsds/val --json $R/bsds_val.json > /tmp/log/bsds.log 2>&1 &
  wait; cp $C/cand/$P.onnx $R/
  grep "^\[places\]" /tmp/log/places.log | grep -v "val\]"; grep "^\[photos\]" /tmp/log/bsds.log
fi
grep -il "traceback" /tmp/log/*.log; echo "all done at $SECONDS s"
cd $OUT && tar czf logs.tgz -C /tmp log && tar czf m.tgz -C /tmp m; ls -la $OUT
