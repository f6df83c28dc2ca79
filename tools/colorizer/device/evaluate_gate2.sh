#!/bin/bash
# Issue 46, helper issue46e, round 2: the convolutional neutral head (neutral_head_conv.py) trained on the GPU on frozen
# v4.1 taps, then evaluate_gate.sh with it (same candidates, same rule: select_gate.py). Carry as evaluate_gate.sh's plus
# debian/train (fetch_debian_photos.py), bsds/train20 (the 20 held-out BSDS500 train photos) and all 15 office clips in webcam/.
C=.colorizer-carry; mkdir -p /tmp/m /tmp/log
nvidia-smi --query-gpu=name --format=csv,noheader
python3 $C/code/neutral_head_conv.py models/colorizer/colorizer.onnx /tmp/m/gate2.npz --bsds-train $C/bsds/train20 --bsds-skip 0 \
    --debian-train $C/debian/train --webcam $C/webcam 2>&1 | grep -v Warning | tee /tmp/m/head_log.txt
[ -f /tmp/m/gate2.npz ] || { cd $OUT && tar czf m.tgz -C /tmp m; exit 1; }
GATE=/tmp/m/gate2.npz bash $C/code/device/evaluate_gate.sh
