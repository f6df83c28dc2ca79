#!/bin/bash
# Carry (.colorizer-carry/, git-ignored, named in the call's carry): code/ = a copy of tools/colorizer; bsds/{train,val} (BSDS500);
# webcam/*.mkv (the shared clips); debian/ (fetch_debian_photos.py --out); places/<package>/<file> (places.py's photos);
# hallway.mp4; selfie_segmentation.onnx; cand/*.onnx (evaluate.sh: the exports to measure). 64 MiB per call in all.
# issue 46 (helper issue46d): three fine-tunes of v4.1 on the GPU at once. Run from the repo root on the GPU machine.
C=.colorizer-carry; D=/tmp/carry; M=${MIN:-6.5}
export PYTHONUNBUFFERED=1
nproc; nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
python3 $C/code/prep_data.py --webcam $C/webcam --bsds $C/bsds --out $D --val-limit 20 2>&1 | tail -3
X="--data $D --arch effnet --input-size 192 --batch 128 --temporal 0.2 --skin-weight 3 --wd 2e-3 --photo-rot 12 \
   --photo-smin 0.25 --swa --eval-every 25 --select-temps 0.7,1.0 --init-onnx models/colorizer/colorizer.onnx --freeze-bn \
   --lr 5e-4 --enc-lr 0.25 --webcam-frac 0.25 --extra-photos $C/debian/train --minutes $M"
mkdir -p /tmp/P1 /tmp/P2 /tmp/P3
python3 $C/code/train.py $X --photo-aug webcam --neutral-weight 8 --seed 464 --out /tmp/P1 > /tmp/P1/stdout.txt 2>&1 &
python3 $C/code/train.py $X --photo-aug webcam --neutral-weight 3 --lam 0.7 --seed 465 --out /tmp/P2 > /tmp/P2/stdout.txt 2>&1 &
python3 $C/code/train.py $X --photo-aug webcam --neutral-weight 3 --temporal 0.5 --seed 466 --out /tmp/P3 > /tmp/P3/stdout.txt 2>&1 &
wait
for r in P1 P2 P3; do echo "== $r"; grep -E "init-onnx|initialised|extra|batch 128|training done|SWA of|selected|Error|error|Traceback" /tmp/$r/stdout.txt | cut -c1-400; tail -3 /tmp/$r/stdout.txt | cut -c1-300
  (cd /tmp && tar czf $OUT/$r.tgz --exclude='*.pt' $r); done
ls -la $OUT
