#!/bin/bash
# Issue 46, helper issue46g ("Tried (6)"): fit the candidates of select_classifier.py's rule, then measure them beside
# v4.1 in one session on this machine (metrics.py, onnxruntime, one thread) and apply the rule. Repo root; needs
# ../shared (BSDS500, the webcam clips, the hallway clip), PY a python with the pinned tools packages
# (tools/requirements-tools.txt), and the git-ignored inputs (prepare them as the model card's "Tried (6)" says):
#   FEAT  retrain_classifier.py features' output (default /tmp/issue46g-feat.npz)
#   VALP  BSDS500 val + the 14 lomiri validation photos in one folder (default /tmp/issue46g-valp)
# CPU-heavy steps under the shared lock (/tmp/fg-cpu.lock) as the helpers' rules ask.
set -e
PY=${PY:-.venv-col/bin/python}; FEAT=${FEAT:-/tmp/issue46g-feat.npz}; VALP=${VALP:-/tmp/issue46g-valp}
D=${D:-/tmp/issue46g-eval}; K=${K:-/tmp/issue46g-cand}; L="flock /tmp/fg-cpu.lock"
export PYTHONPATH=tools OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
mkdir -p $D $K
V=models/colorizer/colorizer.onnx
fitk() { [ -f $K/$1.onnx ] || $L $PY tools/colorizer/retrain_classifier.py fit $V $FEAT $K/$1.onnx "${@:2}" --iters 200 > $K/$1.log 2>&1; tail -4 $K/$1.log; }
fitk K0 --room-share 0   --lam 1.0  --l2 1e-3
fitk K1 --room-share 0.3 --lam 1.0  --l2 1e-3
fitk K2 --room-share 0.6 --lam 1.0  --l2 1e-3
fitk K3 --room-share 0.3 --lam 1.0  --l2 1e-2
fitk K4 --room-share 0.3 --lam 0.85 --l2 1e-3
M="v4.1=$V"; for k in K0 K1 K2 K3 K4; do M="$M $k=$K/$k.onnx"; done
S="--segmenter models/cache/selfie_segmentation.onnx --no-photos"
COLORIZER_VAL_DIR=$VALP $L $PY tools/colorizer/metrics.py $M $S --no-webcam --places-val --json $D/val_all.json > $D/val.log 2>&1
$L $PY tools/colorizer/metrics.py $M $S --webcam ../shared/media/webcam --smoothing 0,0.6 --scene-cut 6 --json $D/office_all.json > $D/office.log 2>&1
$L $PY tools/colorizer/metrics.py $M $S --no-webcam --places --places-grids $D/grids --smoothing 0,0.6 --scene-cut 6 --json $D/places.json > $D/places.log 2>&1
$PY tools/colorizer/select_classifier.py select $D | tee $D/selection.txt
P=$(cat $D/pick.txt)
[ -z "$P" ] || $PY tools/colorizer/select_classifier.py adopt $D $P | tee $D/adoption.txt
