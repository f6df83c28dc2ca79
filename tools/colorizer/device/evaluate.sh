#!/bin/bash
# Carry (.colorizer-carry/, git-ignored, named in the call's carry): code/ = a copy of tools/colorizer; bsds/{train,val} (BSDS500);
# webcam/*.mkv (the shared clips); debian/ (fetch_debian_photos.py --out); places/<package>/<file> (places.py's photos);
# hallway.mp4; selfie_segmentation.onnx; cand/*.onnx (evaluate.sh: the exports to measure). 64 MiB per call in all.
# As committed: round 2's candidates (P1-P3 and round 1's pick); round 1 looped over N1 N2 N3 alone.
# issue 46 (helper issue46d): phase 1 validation places + office clips for every candidate and v4.1 (one process
# each, one thread), the rule (select_rule.py), phase 2 the evaluation places (grids) and BSDS500 val for v4.1 and the pick.
C=.colorizer-carry; R=$OUT/m; mkdir -p $R /tmp/valp /tmp/log
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 COLORIZER_VAL_DIR=/tmp/valp COLORIZER_PLACES_DIR=$C/places COLORIZER_PLACES_CLIP=$C/hallway.mp4
cp $C/bsds/val/* $C/debian/validation/*.jpg /tmp/valp/; ls /tmp/valp | wc -l
M="--segmenter $C/selfie_segmentation.onnx"
J=/tmp/jobs; : > $J
for m in v4.1=models/colorizer/colorizer.onnx $(for r in P1 P2 P3; do for s in ema swa; do for T in 0.7 1.0; do echo ${r}_${s}_T$T=$C/cand/${r}_$s.onnx@$T; done; done; done) N2_ema_T1.0=$C/cand/N2_ema.onnx@1.0; do
  k=${m%%=*}
  echo "python3 $C/code/metrics.py $m $M --no-photos --no-webcam --places-val --json $R/val_$k.json > /tmp/log/val_$k.log 2>&1" >> $J
  echo "python3 $C/code/metrics.py $m $M --no-photos --webcam $C/webcam --smoothing 0,0.6 --scene-cut 6 --json $R/office_$k.json > /tmp/log/office_$k.log 2>&1" >> $J
done
# office first (longer)
(grep office $J; grep val_ $J) | xargs -P 16 -I{} sh -c "{}"
python3 $C/select.py $R | tee $R/selection.txt
P=$(cat $R/pick.txt); echo "pick: $P"
if [ -n "$P" ]; then
  r=${P%%_T*}; T=${P##*_T}; PM="$P=$C/cand/$r.onnx@$T"
  python3 $C/code/metrics.py v4.1=models/colorizer/colorizer.onnx $PM $M --no-photos --no-webcam --places --places-grids $R/grids \
     --smoothing 0,0.6 --scene-cut 6 --json $R/places.json > /tmp/log/places.log 2>&1 &
  python3 $C/code/metrics.py v4.1=models/colorizer/colorizer.onnx $PM $M --no-webcam --val $C/bsds/val --json $R/bsds_val.json > /tmp/log/bsds.log 2>&1 &
  wait
  grep "^\[places\]" /tmp/log/places.log | grep ALL; grep -i "colourfulness\|rmse" /tmp/log/bsds.log | tail -4
fi
grep -il "traceback" /tmp/log/*.log
cd $OUT && tar czf logs.tgz -C /tmp log && tar czf m.tgz m && rm -rf m; ls -la $OUT
