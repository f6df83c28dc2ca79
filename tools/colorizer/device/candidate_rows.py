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


def mark_exclusions(rows, val_colour_floor):
    """Sets each row's "excluded" (the reasons, comma-separated; empty: eligible) against v4.1's row, and
    prints every row. The exclusions of Tried (4)-(6): office a/b > 1.10×, colourfulness outside 0.90–1.10×,
    skin < 0.90×, flicker > 1.10× v4.1's; validation a/b above v4.1's; validation colourfulness below
    `val_colour_floor(v4.1's row)` (each rule's own floor)."""
    b = rows["v4.1"]
    for k, r in rows.items():
        why = []
        if r["off_rmse"] > 1.10 * b["off_rmse"]: why.append("office a/b")
        if not 0.90 * b["off_cf"] <= r["off_cf"] <= 1.10 * b["off_cf"]: why.append("office colour")
        if r["off_skin"] < 0.90 * b["off_skin"]: why.append("office skin")
        if r["off_flicker"] > 1.10 * b["off_flicker"]: why.append("office flicker")
        if r["val_rmse"] > b["val_rmse"]: why.append("val a/b")
        if r["val_cf"] < val_colour_floor(b): why.append("val colour")
        r["excluded"] = ",".join(why)
        print(f"{k:16s} val a/b {r['val_rmse']:.4f} colour {r['val_cf']:.3f} neutral {r['val_neutral']:.2f} | office a/b "
              f"{r['off_rmse']:.4f} colour {r['off_cf']:.4f} skin {r['off_skin']:.4f} flicker {r['off_flicker']:.4f} | "
              f"{'reference' if k == 'v4.1' else (r['excluded'] or 'eligible')}")


def pick_lowest_neutral(rows, D, tie_key):
    """Among the eligible candidates, those within 0.25 of the lowest validation neutral chroma, the best by
    `tie_key` (a function of a row; the smallest wins); printed and written to D/selection.json and D/pick.txt."""
    c = {k: r for k, r in rows.items() if k != "v4.1" and not r["excluded"]}
    pick = None
    if c:
        best = min(r["val_neutral"] for r in c.values())
        near = {k: r for k, r in c.items() if r["val_neutral"] <= best + 0.25}
        pick = min(near, key=lambda k: tie_key(near[k]))
    print("PICK", pick)
    json.dump(dict(rows=rows, pick=pick), open(f"{D}/selection.json", "w"), indent=1)
    open(f"{D}/pick.txt", "w").write(pick or "")
    return pick
