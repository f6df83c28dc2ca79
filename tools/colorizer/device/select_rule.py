"""The selection rule (model card, "Tried (3)"), applied to phase 1's JSONs. Prints the table and the pick."""
import json, glob, os, sys
D = sys.argv[1]
rows = {}
for f in sorted(glob.glob(f"{D}/val_*.json")):
    k = os.path.basename(f)[4:-5]
    v = json.load(open(f))["models"][k]["places_validation"]["places"]["ALL photos, both looks"]
    o = json.load(open(f"{D}/office_{k}.json"))["models"][k]["webcam_heldout"]["settings"]["w=0.6,cut=6"]
    rows[k] = dict(val_rmse=v["rmse_ratio"], val_cf=v["colourfulness_ratio"], val_neutral=v["neutral_chroma_ours"],
                   off_rmse=o["rmse_ratio"], off_cf=o["colourfulness_ratio"], off_skin=o["skin_ok_fraction"], off_flicker=o["flicker_ratio"])
b = rows["v4.1"]
ok = {}
for k, r in rows.items():
    why = []
    if r["off_rmse"] > 1.10 * b["off_rmse"]: why.append("office a/b")
    if r["off_cf"] < 0.90 * b["off_cf"]: why.append("office colour")
    if r["off_skin"] < 0.90 * b["off_skin"]: why.append("office skin")
    if r["off_flicker"] > 1.10 * b["off_flicker"]: why.append("office flicker")
    if r["val_cf"] < 0.80: why.append("val colour")
    r["excluded"] = ",".join(why)
    print(f"{k:14s} val a/b {r['val_rmse']:.4f} colour {r['val_cf']:.3f} neutral {r['val_neutral']:.2f} | office a/b {r['off_rmse']:.4f} "
          f"colour {r['off_cf']:.4f} skin {r['off_skin']:.4f} flicker {r['off_flicker']:.4f} | {r['excluded'] or 'candidate'}")
c = {k: r for k, r in rows.items() if k != "v4.1" and not r["excluded"]}
pick = None
if c:
    best = min(r["val_rmse"] for r in c.values())
    near = {k: r for k, r in c.items() if r["val_rmse"] <= best + 0.005}
    pick = min(near, key=lambda k: near[k]["val_neutral"])
print("PICK", pick)
json.dump(dict(rows=rows, pick=pick), open(f"{D}/selection.json", "w"), indent=1)
open(f"{D}/pick.txt", "w").write(pick or "")
