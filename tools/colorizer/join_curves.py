#!/usr/bin/env python3
"""Join the curves.json of consecutive training stages (a run and the fine-tunes that started from its
weights) into one list: every row gets its stage name, "stage_step"/"stage_t" (as the stage logged them)
and "step"/"t" counted from the start of the first stage, so plot_curves.py draws the whole chain.
A stage given as NAME=PATH:N keeps only its rows up to step N (where the exported snapshot was taken);
NAME=PATH:ema drops its SWA row (train.py --swa logs the average of the late snapshots as a last row with
"swa_of"), for a stage whose final EMA, not its SWA, the next stage started from.

Usage: join_curves.py E=runE/curves.json F2=F2/curves.json G2=G2/curves.json:7050 out.json        # v3
       join_curves.py effA=A/curves.json:ema effG=G/curves.json out.json                         # v4
"""
import json
import sys


def main(args):
    out_path, rows, step0, t0 = args[-1], [], 0, 0.0
    for spec in args[:-1]:
        name, _, path = spec.partition("=")
        path, _, upto = path.partition(":")
        stage = json.load(open(path))
        if upto == "ema":
            stage = [r for r in stage if not r.get("swa_of")]
        elif upto:
            stage = [r for r in stage if r["step"] <= int(upto)]
        for r in stage:
            r = dict(r, stage=name, stage_step=r["step"], stage_t=r["t"])
            r["step"], r["t"] = step0 + r["stage_step"], round(t0 + r["stage_t"], 1)
            rows.append(r)
        step0, t0 = rows[-1]["step"], rows[-1]["t"]
    json.dump(rows, open(out_path, "w"), indent=0)
    print(out_path, len(rows), "rows, stages", [s.partition("=")[0] for s in args[:-1]])


if __name__ == "__main__":
    main(sys.argv[1:])
