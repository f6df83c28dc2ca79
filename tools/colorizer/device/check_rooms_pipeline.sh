#!/bin/bash
# Issue 46, helper issue46f: a CPU check of evaluate_rooms.sh's measuring path and select_rooms.py (both phases) before any
# GPU time is spent, with v4.1 standing in for a candidate (R1_ema_T0.7 = v4.1 at T 0.7, R1_ema_T1.0 = v4.1 at T 1.0;
# validation places limited to 4 photos). Expected: v4.1's office and evaluation figures as the model card's, the
# stand-in picked, and adoption failing ("neutral chroma not lower"). About 2.5 min on one core (dev VM: run it under
# the shared CPU lock). Needs the carry of prepare_rooms_carry.sh.
PY=${PY:-.venv-tools/bin/python}; C=.colorizer-carry; R=${R:-/tmp/rooms_check}; rm -rf $R; mkdir -p $R /tmp/valp_check
cp $C/bsds/val/* $C/debian/validation/*.jpg /tmp/valp_check/
export OMP_NUM_THREADS=1 COLORIZER_VAL_DIR=/tmp/valp_check COLORIZER_PLACES_DIR=$C/places COLORIZER_PLACES_CLIP=$C/hallway.mp4
V=models/colorizer/colorizer.onnx; M="--segmenter $C/selfie_segmentation.onnx"; T=tools/colorizer
$PY $T/metrics.py v4.1=$V $M --no-photos --webcam $C/webcam --smoothing 0.6 --scene-cut 6 --json $R/office_ref.json > $R/o1.log 2>&1
$PY $T/metrics.py v4.1=$V $M --no-photos --no-webcam --places-val --limit 4 --json $R/val_ref.json > $R/v1.log 2>&1
$PY $T/metrics.py R1_ema_T0.7=$V@0.7 R1_ema_T1.0=$V@1.0 $M --no-photos --webcam $C/webcam --smoothing 0.6 --scene-cut 6 --json $R/office_g0.json > $R/o2.log 2>&1
$PY $T/metrics.py R1_ema_T0.7=$V@0.7 R1_ema_T1.0=$V@1.0 $M --no-photos --no-webcam --places-val --limit 4 --json $R/val_g0.json > $R/v2.log 2>&1
$PY $T/device/select_rooms.py select $R
PK=$(cat $R/pick.txt); [ -n "$PK" ] || exit 1
$PY $T/metrics.py v4.1=$V $PK=$V@${PK##*_T} $M --no-photos --no-webcam --places --smoothing 0,0.6 --scene-cut 6 --json $R/places.json > $R/p.log 2>&1
$PY $T/metrics.py v4.1=$V $PK=$V@${PK##*_T} $M --no-photos --webcam $C/webcam --smoothing 0,0.6 --scene-cut 6 --json $R/office_final.json > $R/of.log 2>&1
$PY $T/device/select_rooms.py adopt $R $PK
! grep -il traceback $R/*.log
