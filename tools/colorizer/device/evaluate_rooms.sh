#!/bin/bash
# Issue 46, helper issue46f ("Tried (5)"): the room fine-tunes' candidates (rule in select_rooms.py) on the GPU machine's
# CPUs. Carry (git-ignored): .colorizer-carry/code (a copy of tools/colorizer), .colorizer-carry/bsds/val (BSDS500 val),
# .colorizer-carry/debian/validation (the 14 lomiri photos), .colorizer-carry/webcam (*.mkv), .colorizer-carry/places
# (<package>/<file>, places.py's photos), .colorizer-carry/hallway.mp4, .colorizer-carry/selfie_segmentation.onnx,
# .colorizer-carry/cand/R{1,2,3}_{ema,swa}.onnx (finetune_rooms.sh's colorizer.onnx / colorizer_swa.onnx).
# Phase 1: every candidate and v4.1 on the validation places and the office clips (2 models per process, one thread
# each); the rule; phase 2: v4.1 and the pick on the evaluation places (grids), the office clips raw and smoothed,
# BSDS500 val; the adoption criteria measured there.
C=.colorizer-carry; R=/tmp/m; mkdir -p $R /tmp/log /tmp/valp
cp $C/bsds/val/* $C/debian/validation/*.jpg /tmp/valp/; ls /tmp/valp | wc -l
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 COLORIZER_VAL_DIR=/tmp/valp COLORIZER_PLACES_DIR=$C/places COLORIZER_PLACES_CLIP=$C/hallway.mp4
nproc; python3 -c "import onnxruntime, skimage, cv2; print(onnxruntime.__version__, skimage.__version__, cv2.__version__)"
V=models/colorizer/colorizer.onnx
L=""; for r in R1 R2 R3; do for s in ema swa; do for T in 0.7 1.0; do L="$L ${r}_${s}_T$T=$C/cand/${r}_$s.onnx@$T"; done; done; done
set -- $L
M="--segmenter $C/selfie_segmentation.onnx"; J=/tmp/jobs; : > $J
grp() { echo "python3 $C/code/metrics.py $2 $M --no-photos --webcam $C/webcam --smoothing 0.6 --scene-cut 6 --json $R/office_$1.json > /tmp/log/office_$1.log 2>&1" >> $J
        echo "python3 $C/code/metrics.py $2 $M --no-photos --no-webcam --places-val --json $R/val_$1.json > /tmp/log/val_$1.log 2>&1" >> $J; }
grp ref "v4.1=$V"; i=0
while [ $# -gt 0 ]; do grp g$i "$1 $2"; shift 2; i=$((i+1)); done
(grep office $J; grep val_ $J) | timeout 330 xargs -P 16 -I{} sh -c "{}"
echo "phase 1 done at $SECONDS s"
python3 $C/code/device/select_rooms.py select $R | tee $R/selection.txt
P=$(cat $R/pick.txt)
if [ -n "$P" ]; then
  r=${P%%_T*}; T=${P##*_T}; PM="$P=$C/cand/$r.onnx@$T"
  timeout 170 python3 $C/code/metrics.py v4.1=$V $PM $M --no-photos --no-webcam --places --places-grids $R/grids --smoothing 0,0.6 --scene-cut 6 --json $R/places.json > /tmp/log/places.log 2>&1 &
  timeout 170 python3 $C/code/metrics.py v4.1=$V $PM $M --no-photos --webcam $C/webcam --smoothing 0,0.6 --scene-cut 6 --json $R/office_final.json > /tmp/log/office_final.log 2>&1 &
  timeout 170 python3 $C/code/metrics.py v4.1=$V $PM $M --no-webcam --val $C/bsds/val --json $R/bsds_val.json > /tmp/log/bsds.log 2>&1 &
  wait
  grep "^\[places\]" /tmp/log/places.log | grep -v "val\]"; grep "^\[photos\]" /tmp/log/bsds.log
  python3 $C/code/device/select_rooms.py adopt $R $P | tee $R/adoption.txt
fi
grep -il "traceback" /tmp/log/*.log; echo "all done at $SECONDS s"
cd $OUT && tar czf logs.tgz -C /tmp log && tar czf m.tgz -C /tmp m; ls -la $OUT
