#!/usr/bin/env python3
"""Acceptance test of framegraph-batch on a real two-node Ray cluster on this machine.

    tools/cluster/test_cluster.sh        (sets up .venv-ray, then runs this with its Python)

1. Starts a Ray head and a second worker node on 127.0.0.1 (two `ray start` processes, one CPU each,
   session files in a temporary folder, free ports, token authentication with a token of its own).
2. Makes 12 short clips (4 s, 640x480) from ../shared/media/webcam (or samples/media/portrait.mp4).
3. Runs framegraph-batch with pipelines/portrait-segment.fg against the cluster (--address) and,
   while it runs, SIGKILLs the Ray worker process of a task running on the second node (one whose
   framegraph child is running), and checks that the framegraph child died with it.
4. Checks: every output exists exactly once (no temporary files left), plays (ffprobe decodes it) and
   has its input's frame count; the summary's totals equal the sums over the stats files; the killed
   task was retried (attempts > 1 in the summary) and framegraph ran once per attempt; a second
   invocation does nothing (all skipped, framegraph not run, no file added or changed).
5. Stops the cluster whatever happens: every process whose command line names this test's own Ray
   folder, and their children, are killed by process id (not `ray stop`, which would also stop any
   other Ray on the machine).
Exit 0 on success; 1 with a message naming the failed check.
"""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from fgtools.raycluster import (
    BATCH, CLIPS, CLIP_SECONDS, FRAMEGRAPH, Failed, PIPELINE, RAY, REPO, add_node, descendants,
    frame_count, listing, make_clips, processes, ray_env, run, start_head, tear_down, raise_interrupt)


def log(msg):
    print("test_cluster: " + msg, flush=True)


def main():
    for tool in ("ffmpeg", "ffprobe"):
        if not shutil.which(tool):
            raise Failed("%s is not installed" % tool)
    if not os.access(FRAMEGRAPH, os.X_OK):
        raise Failed("%s is missing: build it first (swift build -c release)" % os.path.relpath(FRAMEGRAPH, REPO))
    if not os.path.isfile(RAY):
        raise Failed("Ray is not installed in this Python's venv (run tools/cluster/setup.sh)")
    work = tempfile.mkdtemp(prefix="fg-cluster-test-")
    ray_dir = os.path.join(work, "ray")  # short: Ray's socket paths must stay under 107 bytes
    os.makedirs(ray_dir)
    ok = False
    batch = None
    try:
        # --- the cluster -------------------------------------------------------------------------
        env = ray_env(work)
        t0 = time.monotonic()
        address = start_head(ray_dir, env, cpus=1)
        head_raylets = {pid for pid, (_, cmd) in processes().items() if ray_dir in cmd and "/raylet/raylet " in cmd}
        add_node(address, ray_dir, env)
        second = {pid for pid, (_, cmd) in processes().items()
                  if ray_dir in cmd and "/raylet/raylet " in cmd} - head_raylets
        if len(head_raylets) != 1 or len(second) != 1:
            raise Failed("expected one raylet per node, found head %s, second %s" % (sorted(head_raylets), sorted(second)))
        second_raylet = second.pop()
        log("cluster at %s: head node and a second node (raylet pid %d), 1 CPU each, started in %.1f s"
            % (address, second_raylet, time.monotonic() - t0))

        # --- the clips ---------------------------------------------------------------------------
        clips_dir = os.path.join(work, "clips")
        out_dir = os.path.join(work, "out")
        os.makedirs(clips_dir)
        t0 = time.monotonic()
        clips = make_clips(clips_dir)
        expected = {os.path.splitext(os.path.basename(c))[0]: frame_count(c) for c in clips}
        log("%d clips of %d s made in %.1f s (%d frames in all)"
            % (len(clips), CLIP_SECONDS, time.monotonic() - t0, sum(expected.values())))

        # framegraph through a wrapper that logs each invocation, so the test can count runs
        runs_log = os.path.join(work, "framegraph-runs.log")
        wrapper = os.path.join(work, "framegraph")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\necho "$$ $1 $*" >> "%s"\nexec "%s" "$@"\n' % (runs_log, FRAMEGRAPH))
        os.chmod(wrapper, 0o755)

        cmd = [sys.executable, BATCH, PIPELINE, clips_dir, "--output-dir", out_dir, "--address", address,
               "--retries", "3", "--framegraph", wrapper, "--progress-interval", "2"]

        def framegraph_runs():
            try:
                with open(runs_log) as f:
                    return [l for l in f if l.split()[1:2] == ["run"]]
            except OSError:
                return []

        # --- first invocation, with a worker killed mid-task -------------------------------------
        t0 = time.monotonic()
        batch = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        killed = None
        marks = os.path.join(out_dir, ".attempts")
        deadline = time.monotonic() + 240
        while batch.poll() is None:
            if time.monotonic() > deadline:
                batch.kill()
                raise Failed("framegraph-batch did not finish in 240 s")
            if killed is None:
                table = processes()
                for marker in glob.glob(os.path.join(marks, "*.running")):
                    try:
                        with open(marker) as f:
                            info = json.load(f)
                    except (OSError, ValueError):
                        continue
                    pid = info.get("pid")
                    if pid not in table or table[pid][0] != second_raylet:
                        continue  # not (or no longer) a worker of the second node
                    children = [c for c, (pp, cmdline) in table.items() if pp == pid]
                    fg = descendants(children, table)
                    if not any(FRAMEGRAPH in table[c][1] for c in fg if c in table):
                        continue  # framegraph not started yet
                    name = os.path.basename(marker)[:-len(".running")]
                    os.kill(pid, signal.SIGKILL)
                    killed = {"name": name, "pid": pid, "attempt": info.get("attempt"), "children": sorted(fg),
                              "at": time.monotonic() - t0}
                    log("killed Ray worker pid %d (second node) at %.1f s while it ran %s (attempt %s; its framegraph: pids %s)"
                        % (pid, killed["at"], name, info.get("attempt"), sorted(fg)))
                    break
            time.sleep(0.01)
        output = batch.stdout.read()
        first_seconds = time.monotonic() - t0
        print(output, end="", flush=True)
        if batch.returncode != 0:
            raise Failed("framegraph-batch exited with status %d" % batch.returncode)
        if killed is None:
            raise Failed("no task was seen running on the second node: nothing was killed")
        alive = [c for c in killed["children"] if c in processes()]
        if alive:
            raise Failed("the killed worker's framegraph processes %s outlived it" % alive)

        # --- checks --------------------------------------------------------------------------------
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
        names = sorted(expected)
        want = {n + ".mp4" for n in names} | {n + ".stats.json" for n in names} | {"summary.json"}
        top = set(os.listdir(out_dir))
        extra = sorted(top - want - {".attempts"})
        missing = sorted(want - top)
        if missing or extra:
            raise Failed("output folder: missing %s, unexpected %s" % (missing, extra))
        partials = [p for p in listing(out_dir) if ".partial-" in p]
        if partials:
            raise Failed("temporary files left: %s" % partials)
        for n in names:
            got = frame_count(os.path.join(out_dir, n + ".mp4"))
            if got != expected[n]:
                raise Failed("%s.mp4 has %d frames, its input %d" % (n, got, expected[n]))
        log("12 outputs, each once, each decodes with its input's frame count")

        stats = {n: json.load(open(os.path.join(out_dir, n + ".stats.json"))) for n in names}
        t = summary["totals"]
        sums = {"frames": sum(s["framesOut"] for s in stats.values()),
                "framesIn": sum(s["framesIn"] for s in stats.values()),
                "dropped": sum(sum(s.get(k, 0) for k in ("droppedAtSource", "droppedCorrupt", "droppedRate",
                                                         "droppedBusy", "droppedLate")) for s in stats.values())}
        for key, value in sums.items():
            if t[key] != value:
                raise Failed("summary totals.%s = %s, the stats files sum to %s" % (key, t[key], value))
        cpu = round(sum(s["cpuSeconds"] for s in stats.values()), 3)
        if abs(t["cpuSeconds"] - cpu) > 0.01:
            raise Failed("summary totals.cpuSeconds = %s, the stats files sum to %s" % (t["cpuSeconds"], cpu))
        if (t["inputs"], t["ok"], t["failed"], t["skipped"]) != (CLIPS, CLIPS, 0, 0):
            raise Failed("summary totals: %s" % t)
        per_input = {e["name"]: e for e in summary["inputs"]}
        for n in names:
            if per_input[n]["frames"] != stats[n]["framesOut"] or per_input[n]["status"] != "ok":
                raise Failed("summary entry of %s disagrees with its stats: %s" % (n, per_input[n]))
        log("summary totals equal the stats files: %d frames in, %d out, %d dropped, %.2f CPU s"
            % (sums["framesIn"], sums["frames"], sums["dropped"], cpu))

        victim = per_input[killed["name"]]
        if victim["attempts"] < 2:
            raise Failed("the killed task %s was not retried: attempts %d" % (killed["name"], victim["attempts"]))
        retried = {n: e["attempts"] for n, e in per_input.items() if e["attempts"] > 1}
        attempts = sum(e["attempts"] for e in per_input.values())
        runs = framegraph_runs()
        if len(runs) != attempts:
            raise Failed("framegraph ran %d times, the summary records %d attempts" % (len(runs), attempts))
        log("killed task %s retried: attempts %d, errors %s; retried inputs %s; framegraph runs %d = attempts"
            % (killed["name"], victim["attempts"], victim["errors"], retried, len(runs)))

        # --- second invocation: nothing to do ------------------------------------------------------
        before = listing(out_dir)
        runs_before = len(open(runs_log).read().splitlines())
        t1 = time.monotonic()
        second_run = run(cmd, env=env, check=False)
        print(second_run.stdout, end="", flush=True)
        if second_run.returncode != 0:
            raise Failed("second invocation exited with status %d" % second_run.returncode)
        after = listing(out_dir)
        with open(os.path.join(out_dir, "summary.json")) as f:
            t2 = json.load(f)["totals"]
        changed = sorted(p for p in set(before) | set(after) if p != "summary.json" and before.get(p) != after.get(p))
        if changed:
            raise Failed("second invocation changed or added files: %s" % changed)
        if len(open(runs_log).read().splitlines()) != runs_before:
            raise Failed("second invocation ran framegraph")
        if (t2["skipped"], t2["ok"], t2["failed"], t2["frames"]) != (CLIPS, 0, 0, 0):
            raise Failed("second invocation's totals: %s" % t2)
        log("second invocation: all %d skipped, framegraph not run, no file added or changed (%.1f s)"
            % (CLIPS, time.monotonic() - t1))
        log("first invocation took %.1f s: %.1f clips/min, %.1f frames/s on 2 nodes sharing this machine's %d cores"
            % (first_seconds, t["clipsPerMinute"], t["framesPerSecond"], os.cpu_count()))
        ok = True
    finally:
        if batch is not None and batch.poll() is None:
            batch.kill()
            batch.wait()
        tear_down(ray_dir, work, ok, say=log)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        sys.exit(main())
    except Failed as e:
        log("FAILED: %s" % e)
        sys.exit(1)
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
