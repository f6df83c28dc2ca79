#!/usr/bin/env python3
"""Where a live run's late and repeated ticks were: reads a run's trace (`--trace`) and, per output
clock (one per stream), lists the frames it never showed (a gap in the frame numbers written) and the
ticks that repeated a frame, with the run time (s) and what else the trace says near them (the
stream's presentation delay changes, dropped-busy marks on its workers). Asserts nothing.

    tools/bench/late_ticks.py out/streams-ab/new-1/trace.json
"""
import collections
import json
import sys


def main(path):
    events = json.load(open(path))
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    lanes = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    t0 = min((e["ts"] for e in events if "ts" in e), default=0)
    spans = collections.defaultdict(list)
    instants = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            spans[e["tid"]].append(e)
        elif e.get("ph") == "i":
            instants[e["tid"]].append(e)
    for tid in sorted(t for t, n in lanes.items() if n.startswith("output clock")):
        writes = sorted(spans[tid], key=lambda e: e["ts"])
        seqs = [e["args"]["frame"] for e in writes]
        notes = []
        for prev, cur in zip(writes, writes[1:]):
            a, b = prev["args"]["frame"], cur["args"]["frame"]
            t = (cur["ts"] - t0) / 1e6
            if b == a:
                notes.append(f"{t:7.3f} s repeated frame {a}")
            elif b > a + 1:
                notes.append(f"{t:7.3f} s frames {a + 1}…{b - 1} not shown" if b > a + 2 else f"{t:7.3f} s frame {a + 1} not shown")
        first = f"first frame written {seqs[0]} at {(writes[0]['ts'] - t0) / 1e6:.3f} s" if writes else "nothing written"
        delays = [f"{(e['ts'] - t0) / 1e6:.2f} s {e['name']}" for e in instants[tid] if e["name"].startswith("presentation delay")]
        slow = sorted(writes, key=lambda e: -e["dur"])[:3]
        print(f"{lanes[tid]}: {len(writes)} ticks written, {first}; {len(notes)} late/repeated")
        for n in notes:
            print("   ", n)
        print("    D:", "; ".join(delays) or "-")
        print("    slowest writes:", ", ".join(f"{e['dur'] / 1000:.1f} ms at {(e['ts'] - t0) / 1e6:.2f} s" for e in slow))
    busy = collections.Counter(lanes.get(t, t) for t, evs in instants.items() for e in evs if e["name"] == "dropped-busy")
    if busy:
        print("dropped-busy marks:", ", ".join(f"{k} {v}" for k, v in busy.most_common()))


if __name__ == "__main__":
    main(sys.argv[1])
