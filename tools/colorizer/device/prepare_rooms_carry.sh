#!/bin/bash
# Issue 46, helper issue46f ("Tried (5)"): builds the git-ignored carry folder .colorizer-carry/ for finetune_rooms.sh and
# evaluate_rooms.sh on the dev machine (repo root; ../shared beside the repo; PY = a python with the pinned tools
# packages: numpy, scipy, scikit-image, pillow, onnxruntime, matplotlib, scikit-learn, and tools/ on PYTHONPATH for
# fgtools). Light: run it pinned to one core (taskset -c 1) under the shared CPU lock where others share the machine.
set -e
PY=${PY:-.venv-tools/bin/python}; C=.colorizer-carry; S=../shared
export PYTHONPATH=tools${PYTHONPATH:+:$PYTHONPATH}
mkdir -p $C/bsdst/val $C/bsds $C/webcam $C/cand $C/places
rm -rf $C/code && cp -r tools/colorizer $C/code && rm -rf $C/code/__pycache__
[ -d $C/bsdst/train ] || cp -r $S/data/bsds500/train $C/bsdst/
ls $S/data/bsds500/val | sort | head -20 | xargs -I{} cp $S/data/bsds500/val/{} $C/bsdst/val/    # train.py logs the first 20
[ -d $C/bsds/val ] || cp -r $S/data/bsds500/val $C/bsds/
cp $S/media/webcam/*.mkv $C/webcam/
cp $S/media/one-by-one-person-detection.mp4 $C/hallway.mp4
cp models/cache/selfie_segmentation.onnx $C/
[ -d $C/debian/train ] || $PY tools/colorizer/fetch_debian_photos.py --out $C/debian             # apt-get download, checked
$PY tools/colorizer/prep_data.py --out /tmp/colprep >/dev/null                                      # frames of the clips
$PY tools/colorizer/synth_rooms.py people --webcam /tmp/colprep/webcam/train \
    --segmenter models/cache/selfie_segmentation.onnx --out $C/people.npz                            # training clips only
$PY - <<'PYEOF'
import os, shutil, sys
sys.path.insert(0, "tools/colorizer")
import places as pl
for place, pkg, rel in pl.PHOTO_PLACES:     # the evaluation photos as places.py finds them in the pinned wheels
    d = f".colorizer-carry/places/{pkg}"
    os.makedirs(d, exist_ok=True)
    shutil.copy(pl.package_file(pkg, rel), d)
PYEOF
du -sh $C/*
echo "training call carry: $C/code $C/bsdst $C/webcam $C/debian $C/people.npz"
echo "evaluation call carry: $C/code $C/bsds $C/debian/validation $C/webcam $C/places $C/hallway.mp4 $C/selfie_segmentation.onnx $C/cand"
