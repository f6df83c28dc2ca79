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
5. Resume keys on the input and the settings (two 1 s clips, portrait-segment.fg copied to the work
   folder): a run with nothing changed reuses both; another --set, then a changed pipeline text,
   processes both again (the log says why) and --force does; each input's NAME.done.json records the
   settings that made it.
6. Outputs per input: face-detect.fg over two clips named clip.mp4 in two folders (1 s and 0.5 s):
   each gets its own NAME-<8 hex of its path's SHA-256>.mp4, .jsonl (one line per frame),
   .stats.json and .done.json in --output-dir, each with its own input's frame count; nothing lands
   in the batch's working directory and no scratch folder is left.
7. Stops the cluster whatever happens: every process whose command line names this test's own Ray
   folder, and their children, are killed by process id (not `ray stop`, which would also stop any
   other Ray on the machine).
Exit 0 on success; 1 with a message naming the failed check.
"""

import glob
import hashlib
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
        want = ({n + ".mp4" for n in names} | {n + ".stats.json" for n in names} | {n + ".done.json" for n in names}
                | {"summary.json"})
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
        if (t["inputs"], t["ok"], t["failed"], t["reused"]) != (CLIPS, CLIPS, 0, 0):
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
        runs_before = len(framegraph_runs())
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
        if len(framegraph_runs()) != runs_before:
            raise Failed("second invocation ran framegraph")
        if (t2["reused"], t2["ok"], t2["failed"], t2["frames"]) != (CLIPS, 0, 0, 0):
            raise Failed("second invocation's totals: %s" % t2)
        log("second invocation: all %d skipped (reused), framegraph not run, no file added or changed (%.1f s)"
            % (CLIPS, time.monotonic() - t1))
        log("first invocation took %.1f s: %.1f clips/min, %.1f frames/s on 2 nodes sharing this machine's %d cores"
            % (first_seconds, t["clipsPerMinute"], t["framesPerSecond"], os.cpu_count()))

        def batch_again(pipeline, inputs, out, *extra):
            """framegraph-batch run from an empty working directory that must stay empty: (output, summary, runs)."""
            cwd = tempfile.mkdtemp(prefix="cwd-", dir=work)
            before_runs = len(framegraph_runs())
            p = subprocess.run([sys.executable, BATCH, pipeline] + inputs
                               + ["--output-dir", out, "--address", address, "--framegraph", wrapper, "--progress-interval", "60"]
                               + list(extra), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=240)
            if p.returncode != 0:
                raise Failed("framegraph-batch %s exited with status %d:\n%s" % (" ".join(extra), p.returncode, p.stdout[-3000:]))
            if os.listdir(cwd):
                raise Failed("framegraph-batch wrote into its working directory: %s" % sorted(os.listdir(cwd)))
            os.rmdir(cwd)
            if os.path.exists(os.path.join(out, ".scratch")):
                raise Failed("scratch folder left after a successful batch: %s" % listing(os.path.join(out, ".scratch")))
            with open(os.path.join(out, "summary.json")) as f:
                return p.stdout, json.load(f), len(framegraph_runs()) - before_runs

        def cut(src, dst, start, seconds):
            run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", str(start), "-i", src, "-t", str(seconds), "-an",
                 "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-threads", "2", dst])

        # --- resume keys on the input's content and on the settings -----------------------------------
        portrait = os.path.join(REPO, "samples", "media", "portrait.mp4")
        small = os.path.join(work, "small")
        os.makedirs(small)
        cut(portrait, os.path.join(small, "s1.mp4"), 0, 1)
        cut(portrait, os.path.join(small, "s2.mp4"), 3, 1)
        segment = os.path.join(work, "segment.fg")  # a copy whose text this test changes
        shutil.copyfile(PIPELINE, segment)
        resumed = os.path.join(work, "resumed")
        short = ["--set", "source.duration=0.5"]

        def expect(step, result, status, text=None):
            output, summary, runs = result
            got = sorted(e["status"] for e in summary["inputs"])
            if got != [status, status] or runs != (0 if status == "reused" else 2):
                raise Failed("%s: statuses %s with framegraph run %d times, expected both %s" % (step, got, runs, status))
            if any(e["reused"] != (status == "reused") for e in summary["inputs"]):
                raise Failed("%s: the summary's reused flags disagree: %s" % (step, [e["reused"] for e in summary["inputs"]]))
            if text and text not in output:
                raise Failed("%s: the log does not say '%s':\n%s" % (step, text, output[-2000:]))
            log("%s: both %s (framegraph ran %d times)%s" % (step, status, runs, (": '" + text + "'") if text else ""))

        result = batch_again(segment, [small], resumed)
        expect("resume, first run", result, "ok")
        result = batch_again(segment, [small], resumed)
        expect("resume, nothing changed", result, "reused", "reusing 2 of 2 inputs")
        result = batch_again(segment, [small], resumed, *short)
        expect("resume, another --set", result, "ok", "settings changed: --set (none) → source.duration=0.5")
        for e in result[1]["inputs"]:
            frames = frame_count(e["output"])
            if frames != e["frames"] or frames >= 30:
                raise Failed("%s after --set source.duration=0.5: %d frames (stats %d, the input 30)" % (e["name"], frames, e["frames"]))
            record = json.load(open(e["record"]))
            if record["settings"]["sets"] != ["source.duration=0.5"] or record["inputIdentity"]["sha256"] != hashlib.sha256(
                    open(e["input"], "rb").read()).hexdigest():
                raise Failed("%s's record does not name its settings and input: %s" % (e["name"], record))
        result = batch_again(segment, [small], resumed, *short)
        expect("resume, same --set again", result, "reused")
        with open(segment) as f:
            text = f.read()
        with open(segment, "w") as f:
            f.write(text.replace("mode=colour", "mode=blur"))
        result = batch_again(segment, [small], resumed, *short)
        expect("resume, pipeline changed", result, "ok", "the pipeline's text changed")
        result = batch_again(segment, [small], resumed, *short, "--force")
        expect("resume, --force", result, "ok", "(s1, s2): --force")
        result = batch_again(segment, [small], resumed, *short)
        expect("resume, after --force", result, "reused")

        # --- outputs per input, results included; one name in two folders ------------------------------
        for folder, start, seconds in (("a", 0, 1), ("b", 2, 0.5)):
            os.makedirs(os.path.join(work, folder))
            cut(portrait, os.path.join(work, folder, "clip.mp4"), start, seconds)
        inputs = [os.path.join(work, "a", "clip.mp4"), os.path.join(work, "b", "clip.mp4")]
        faces = os.path.join(work, "faces")
        result = batch_again(os.path.join(REPO, "pipelines", "face-detect.fg"), inputs, faces)
        expect("face-detect", result, "ok")
        names = {p: "clip-" + hashlib.sha256(os.path.abspath(p).encode()).hexdigest()[:8] for p in inputs}
        want = {n + suffix for n in names.values() for suffix in (".mp4", ".jsonl", ".stats.json", ".done.json")}
        top = set(os.listdir(faces)) - {".attempts"}
        if top != want | {"summary.json"}:
            raise Failed("face-detect output folder: missing %s, unexpected %s"
                         % (sorted(want - top), sorted(top - want - {"summary.json"})))
        for p, n in names.items():
            stats = json.load(open(os.path.join(faces, n + ".stats.json")))
            frames, expected_frames = frame_count(os.path.join(faces, n + ".mp4")), frame_count(p)
            with open(os.path.join(faces, n + ".jsonl")) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            if frames != expected_frames or stats["framesOut"] != frames or len(lines) != frames:
                raise Failed("%s (%s): %d frames, its input %d, stats %d, results lines %d"
                             % (n, p, frames, expected_frames, stats["framesOut"], len(lines)))
            if not any(line.get("detections") for line in lines):
                raise Failed("%s.jsonl found no face in portrait.mp4" % n)
            log("face-detect %s -> %s.mp4, %s.jsonl: %d frames, %d results lines, its own input's"
                % (os.path.relpath(p, work), n, n, frames, len(lines)))
        log("same-named inputs do not collide: %s" % ", ".join(sorted(names.values())))
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
