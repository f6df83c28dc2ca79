#!/usr/bin/env python3
"""Throughput of framegraph-batch on a local Ray cluster with 1 and 2 worker nodes, and Ray's
per-task overhead against running the framegraph CLI directly in a loop over the same clips.

    tools/bench/cluster_throughput.sh [--rounds 3] [--clips 12] [--seconds 4]

The cluster is a head node with no CPUs for tasks plus 1, then 2, worker nodes of 1 CPU each, all
on this machine (`ray start` processes on 127.0.0.1), so both worker nodes share its cores: the
2-node figure says how well the batch fills one machine, not how it scales over machines.

Phase 1 (head + 1 worker node), rounds interleaved: the CLI in a loop (one at a time), then
framegraph-batch (one task at a time). Phase 2 (a second worker node added): the CLI two at a time,
then framegraph-batch (two tasks at a time). Per-task overhead = (batch wall - direct wall) / clips
at the same parallelism; the batch's wall is from the first submission to the last result (its
summary's wallSeconds); the command's own start-up (connecting to the cluster) is shown apart.
Results: a table on stdout and out/bench/cluster_throughput.json.
"""

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from fgtools import raycluster as tc  # cluster and clip helpers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def direct(clips, out_dir, parallel):
    """framegraph run on every clip, `parallel` at a time; returns wall seconds."""
    os.makedirs(out_dir, exist_ok=True)
    work = queue.Queue()
    for c in clips:
        work.put(c)
    errors = []

    def worker():
        while True:
            try:
                c = work.get_nowait()
            except queue.Empty:
                return
            name = os.path.splitext(os.path.basename(c))[0]
            p = subprocess.run([tc.FRAMEGRAPH, "run", tc.PIPELINE, "--input", c, "--output",
                                os.path.join(out_dir, name + ".mp4"), "--stats", os.path.join(out_dir, name + ".stats.json"),
                                "--mode", "offline", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                errors.append(p.stderr.decode()[-300:])

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    if errors:
        raise tc.Failed("framegraph failed: %s" % errors[0])
    return wall


def batch(clips_dir, out_dir, address, env):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, tc.BATCH, tc.PIPELINE, clips_dir, "--output-dir", out_dir, "--address", address,
                        "--progress-interval", "60"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    command = time.monotonic() - t0
    if p.returncode != 0:
        raise tc.Failed("framegraph-batch failed:\n" + p.stdout[-2000:])
    with open(os.path.join(out_dir, "summary.json")) as f:
        s = json.load(f)
    task_seconds = sum(e["seconds"] for e in s["inputs"])
    return {"wall": s["totals"]["wallSeconds"], "command": command, "frames": s["totals"]["frames"],
            "taskSeconds": task_seconds, "cluster": s["cluster"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clips", type=int, default=12)
    ap.add_argument("--seconds", type=int, default=4, help="length of each clip")
    args = ap.parse_args()
    tc.CLIPS, tc.CLIP_SECONDS = args.clips, args.seconds
    if not os.access(tc.FRAMEGRAPH, os.X_OK):
        raise tc.Failed("build framegraph first (.build/release/framegraph is missing)")
    work = tempfile.mkdtemp(prefix="fg-cluster-bench-")
    ray_dir = os.path.join(work, "ray")
    os.makedirs(ray_dir)
    results = {"machine": "%d cores (os.cpu_count), all nodes on this one machine" % os.cpu_count(),
               "clips": args.clips, "clipSeconds": args.seconds, "rounds": args.rounds,
               "pipeline": "pipelines/portrait-segment.fg", "runs": []}
    try:
        clips_dir = os.path.join(work, "clips")
        os.makedirs(clips_dir)
        clips = tc.make_clips(clips_dir)
        frames = sum(tc.frame_count(c) for c in clips)
        results["frames"] = frames
        env = tc.ray_env(work)
        address = tc.start_head(ray_dir, env, cpus=0)

        def add_worker():
            tc.add_node(address, ray_dir, env)

        n = 0
        for nodes in (1, 2):
            add_worker()
            time.sleep(2)
            for r in range(args.rounds):
                n += 1
                d = direct(clips, os.path.join(work, "direct%d" % n), nodes)
                b = batch(clips_dir, os.path.join(work, "batch%d" % n), address, env)
                results["runs"].append({"workerNodes": nodes, "round": r + 1, "directWall": round(d, 3),
                                        "batchWall": b["wall"], "batchCommand": round(b["command"], 3),
                                        "taskSeconds": round(b["taskSeconds"], 3), "cluster": b["cluster"]})
                shutil.rmtree(os.path.join(work, "direct%d" % n))
                shutil.rmtree(os.path.join(work, "batch%d" % n))
                print("worker nodes %d, round %d: direct %.2f s, batch %.2f s (command %.2f s, %s)"
                      % (nodes, r + 1, d, b["wall"], b["command"], b["cluster"]), file=sys.stderr, flush=True)
    finally:
        tc.stop_cluster(ray_dir)
        shutil.rmtree(work, ignore_errors=True)

    print("framegraph-batch throughput, %d clips x %d s (%d frames, 640x480), %s; medians of %d rounds"
          % (args.clips, args.seconds, results["frames"], results["machine"], args.rounds))
    print("%-16s %-20s %9s %10s %8s %14s %14s" % ("worker nodes", "run", "wall s", "clips/min", "fps",
                                                   "overhead/task", "command s"))
    summary = []
    for nodes in (1, 2):
        runs = [r for r in results["runs"] if r["workerNodes"] == nodes]
        dw = statistics.median(r["directWall"] for r in runs)
        bw = statistics.median(r["batchWall"] for r in runs)
        bc = statistics.median(r["batchCommand"] for r in runs)
        ts = statistics.median(r["taskSeconds"] for r in runs)
        overhead = statistics.median((r["batchWall"] - r["directWall"]) / args.clips for r in runs)
        label = "%d (1 CPU each)" % nodes
        print("%-16s %-20s %9.2f %10.1f %8.1f %14s %14s" % (label, "CLI loop, %d at once" % nodes, dw,
                                                            args.clips / dw * 60, results["frames"] / dw, "-", "-"))
        print("%-16s %-20s %9.2f %10.1f %8.1f %11.0f ms %14.2f" % (label, "framegraph-batch", bw, args.clips / bw * 60,
                                                                  results["frames"] / bw, overhead * 1000, bc))
        summary.append({"workerNodes": nodes, "directWall": dw, "batchWall": bw, "batchCommand": bc,
                        "taskSecondsSum": ts, "clipsPerMinute": round(args.clips / bw * 60, 1),
                        "framesPerSecond": round(results["frames"] / bw, 1),
                        "directClipsPerMinute": round(args.clips / dw * 60, 1),
                        "directFramesPerSecond": round(results["frames"] / dw, 1),
                        "overheadPerTaskMs": round(overhead * 1000, 1)})
    results["summary"] = summary
    print("overhead/task: (batch wall - CLI loop wall) / clips at the same parallelism; command s: the whole "
          "framegraph-batch command, connecting to the cluster included. Both worker nodes share this machine's "
          "%d cores." % os.cpu_count())
    out = os.path.join(REPO, "out", "bench")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "cluster_throughput.json"), "w") as f:
        json.dump(results, f, indent=2)
    print("results: out/bench/cluster_throughput.json")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tc.Failed as e:
        print("cluster_throughput: FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
