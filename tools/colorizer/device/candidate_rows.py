"""The figures a selection rule reads for each candidate, from one evaluation directory D: per group G,
D/val_G.json (metrics.py --places-val: the validation places, both looks pooled) and D/office_G.json
(metrics.py on the held-out office clips, smoothing 0.6, scene cut 6). Shared by select_gate.py
("Tried (4)") and select_rooms.py ("Tried (5)", and through it select_classifier.py, "Tried (6)").
"""
import glob
import json
import os


def read(D):
    """{candidate: {val_rmse, val_cf, val_neutral, off_rmse, off_cf, off_skin, off_flicker}} over every group of D."""
    rows = {}
    for f in sorted(glob.glob(f"{D}/val_*.json")):
        grp = os.path.basename(f)[4:-5]
        V = json.load(open(f))["models"]
        O = json.load(open(f"{D}/office_{grp}.json"))["models"]
        for k in V:
            v = V[k]["places_validation"]["places"]["ALL photos, both looks"]
            o = O[k]["webcam_heldout"]["settings"]["w=0.6,cut=6"]
            rows[k] = dict(val_rmse=v["rmse_ratio"], val_cf=v["colourfulness_ratio"], val_neutral=v["neutral_chroma_ours"],
                           off_rmse=o["rmse_ratio"], off_cf=o["colourfulness_ratio"], off_skin=o["skin_ok_fraction"],
                           off_flicker=o["flicker_ratio"])
    return rows
