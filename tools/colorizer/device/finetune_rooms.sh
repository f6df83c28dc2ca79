#!/bin/bash
# Issue 46, helper issue46f ("Tried (5)" in the model card): three fine-tunes of v4.1 with synthetic neutral rooms
# (synth_rooms.py) as a share of the photo rows, on one H200 at once. Run from the repo root on the GPU machine.
# Carry (git-ignored, each named in the call's carry): .colorizer-carry/code (a copy of tools/colorizer),
# .colorizer-carry/bsdst/{train,val} (BSDS500 train, the first 20 val photos), .colorizer-carry/webcam (*.mkv),
# .colorizer-carry/debian/train (fetch_debian_photos.py), .colorizer-carry/people.npz (synth_rooms.py people, from
# prep_data.py's frames of the training clips). The 500 rooms are drawn here first (synth_rooms.py rooms, 14 processes).
# The recipe is "Tried (3)"'s N2 (webcam look, neutral weight 3, the Debian photos) plus --room-photos/--room-share:
#   R1 share 0.3; R2 share 0.6; R3 share 0.3 with --temporal 0.5 (the hallway's flicker rose in every earlier fine-tune).
C=.colorizer-carry; D=/tmp/carry; M=${MIN:-6.0}
export PYTHONUNBUFFERED=1
nproc; nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
python3 -c "import numpy, scipy, skimage, PIL, torch; print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'skimage', skimage.__version__, 'PIL', PIL.__version__, 'torch', torch.__version__)"
python3 $C/code/synth_rooms.py rooms --n 500 --seed 46 --photos $C/bsdst/train --photos $C/debian/train --people $C/people.npz \
    --out /tmp/rooms --workers 14 || exit 1
python3 $C/code/prep_data.py --webcam $C/webcam --bsds $C/bsdst --out $D --val-limit 20 2>&1 | tail -2
X="--data $D --arch effnet --input-size 192 --batch 128 --temporal 0.2 --skin-weight 3 --wd 2e-3 --photo-rot 12 \
   --photo-smin 0.25 --swa --eval-every 25 --select-temps 0.7,1.0 --init-onnx models/colorizer/colorizer.onnx --freeze-bn \
   --lr 5e-4 --enc-lr 0.25 --webcam-frac 0.25 --extra-photos $C/debian/train --photo-aug webcam --neutral-weight 3 \
   --room-photos /tmp/rooms --minutes $M"
mkdir -p /tmp/R1 /tmp/R2 /tmp/R3
python3 $C/code/train.py $X --room-share 0.3 --seed 561 --out /tmp/R1 > /tmp/R1/stdout.txt 2>&1 &
python3 $C/code/train.py $X --room-share 0.6 --seed 562 --out /tmp/R2 > /tmp/R2/stdout.txt 2>&1 &
python3 $C/code/train.py $X --room-share 0.3 --temporal 0.5 --seed 563 --out /tmp/R3 > /tmp/R3/stdout.txt 2>&1 &
wait
for r in R1 R2 R3; do echo "== $r"; grep -E "init-onnx|synthetic rooms|extra|batch 128|training done|SWA of|selected|Error|error|Traceback" /tmp/$r/stdout.txt | cut -c1-400; tail -2 /tmp/$r/stdout.txt | cut -c1-300
  (cd /tmp && tar czf $OUT/$r.tgz --exclude='*.pt' $r); done
python3 -c "
from PIL import Image; import glob
fs = sorted(glob.glob('/tmp/rooms/*.jpg'))[:24]; s = Image.new('RGB', (6 * 192, 4 * 144))
for i, f in enumerate(fs): s.paste(Image.open(f).resize((192, 144)), ((i % 6) * 192, (i // 6) * 144))
s.save('$OUT/rooms_sheet.png')"; cp /tmp/rooms/rooms.json $OUT/
ls -la $OUT
