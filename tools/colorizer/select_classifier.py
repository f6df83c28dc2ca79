"""Issue 46, helper issue46g ("Tried (6)": only the colour classifier retrained on the CPU, retrain_classifier.py).

RULE (written down and committed before any candidate was measured on a validation place, an office clip or an
evaluation place; retrain_classifier.py's own log, which measures only training-side images, may be read before):
  Candidates (5), each v4.1 with only its 32->168 classifier (weights + bias) refitted by retrain_classifier.py fit on
  the features of retrain_classifier.py features (180 BSDS500 train photos + 83 Debian training pictures, each as shipped
  and with one webcam look; every 3rd frame of the 11 training office clips; 600 synth_rooms.py rooms, seed 46, each as
  drawn and with one webcam look), 256 cells per image, 90 % of the images (the 10 % held back only reported), skin
  weight 3, at most 200 L-BFGS iterations, decoded at T 0.7 (the graph's own, unchanged), at the node's default
  vividness (0.5):
    K0  room share 0   (no rooms: the control), lam 1.0 (no class rebalancing), l2 1e-3
    K1  room share 0.3, lam 1.0, l2 1e-3
    K2  room share 0.6, lam 1.0, l2 1e-3
    K3  room share 0.3, lam 1.0, l2 1e-2 (a stronger pull towards v4.1's weights)
    K4  room share 0.3, lam 0.85 (a little rebalancing), l2 1e-3
  Why lam 1.0 mostly (chosen from retrain_classifier.py's training-side log only, before the rule): refitted with v4's
  lam 0.5 or 0.7 the classifier paints MORE chroma on the held-back training photos' neutral cells than v4.1 does
  (9.4 -> 11-13), with or without rooms; lam 0.85 about as v4.1 (9.7); lam 1.0 less (6.2-6.4; rooms 9.4 -> 3.4-4.0).
  Said plainly: while timing metrics.py, one exploratory fit (room share 0.3, lam 1.0, l2 1e-3, 60 iterations: not
  one of the candidates as fitted) was measured on the held-out office clips beside v4.1 before this rule was written
  (w 0.6: a/b 0.404x, colourfulness 0.863x, skin 0.906, flicker 0.222x; v4.1 0.423x, 0.892x, 0.937, 0.237x); no
  validation or evaluation place was measured with any fit before the rule was committed.
  Phase 1, all in one measuring session beside v4.1 (metrics.py, onnxruntime CPU, one thread, the dev VM): validation
  places (--places-val with COLORIZER_VAL_DIR = BSDS500 val (100) + the 14 lomiri validation photos of
  fetch_debian_photos.py, both looks, pooled "ALL photos, both looks") and the 4 held-out office clips (w 0.6, cut 6).
  Excluded: office clips (w 0.6) worse than v4.1's in the same run by more than 10 % on any of a/b RMSE/grey
  (> 1.10x), colourfulness (outside 0.90x-1.10x), skin kept (< 0.90x), flicker (> 1.10x); validation places with
  a/b RMSE/grey above v4.1's, or colourfulness ratio below 0.80 (absolute).
  Chosen: the lowest validation-places neutral chroma; within 0.25 of it, the lower validation a/b RMSE/grey.
  Adoption (phase 2: the evaluation places of places.py, v4.1 beside the pick in the same session; office clips raw
  and w 0.6):
    * neutral chroma lower than v4.1's on photos, webcam-look photos and the hallway (all frames);
    * a/b RMSE/grey no higher than v4.1's + 0.01 on photos, webcam-look photos and the hallway;
    * hallway colourfulness no lower than v4.1's - 0.05;
    * no evaluation goal v4.1 meets there newly missed (a/b <= 0.85x photos (as shipped) / <= 1.2x the hallway,
      colourfulness 0.7-1.3x on photos, webcam-look photos and the hallway, skin kept >= 0.9 on the hallway,
      flicker <= 1.2x on the hallway);
    * office clips (raw and w 0.6) within 10 % of v4.1's on a/b, colourfulness (two-sided), skin, flicker;
    * FrameGraph runs the pick (framegraph model check; model run within 0.05 a/b units of onnxruntime) in
      <= 10 ms per frame on one thread (model bench --threads 1).
  Nothing passes: v4.1 stays and the try is written down in the model card ("Tried (6)").
  The evaluation places are measured for every candidate in the same session (for the card's table); only the
  pick's figures decide adoption.
Implementation: select_rooms.py's select/adopt (the same exclusions, choice and adoption criteria), on DIR with
val_all.json (--places-val), office_all.json (--smoothing 0,0.6 --scene-cut 6; copied to office_final.json) and
places.json (--places --smoothing 0,0.6 --scene-cut 6).
Usage: select_classifier.py select DIR | select_classifier.py adopt DIR PICK
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "device"))
import select_rooms  # noqa: E402

if __name__ == "__main__":
    D = sys.argv[2]
    if sys.argv[1] == "select":
        select_rooms.select(D)
    else:
        if not os.path.exists(f"{D}/office_final.json"):
            shutil.copy(f"{D}/office_all.json", f"{D}/office_final.json")
        select_rooms.adopt(D, sys.argv[3])
