#!/usr/bin/env python3
"""Test of framegraph-streams: two live streams supervised by Ray actors on a local Ray cluster.

    tools/cluster/test_streams.sh

Starts a one-node Ray cluster (2 CPUs, its own folder, ports and token), runs two looping file
streams with pipelines/portrait-segment.fg in live mode in 3 s segments for 14 s, and meanwhile
SIGKILLs stream a's framegraph process (the supervisor must restart it after its back-off) and then
stream b's actor process (Ray restarts the actor; the new one carries on, and the old one's
framegraph must die with it). Checks: both streams end "stopped"; a recorded the kill and a restart;
b recorded an actor restart; every segment with stats decodes and has the stats' frame count; each
stream's totals equal the sums over its stats files; no framegraph process is left. Each stream also
serves on its own port ("serve"): the tool lists both addresses, and while the streams run each port
answers /metrics with its own run's figures and /picture.jpg with a JPEG. The cluster is stopped at
the end, whatever happens.
"""

import glob
import json
import os
import signal
import subprocess
import sys
import socket
import tempfile
import time
import urllib.error
import urllib.request

from fgtools import raycluster as tc

HERE = os.path.dirname(os.path.abspath(__file__))
STREAMS = os.path.join(HERE, "framegraph_streams.py")


def log(msg):
    print("test_streams: " + msg, flush=True)


def framegraph_of(stream_dir):
    """pid → ppid of framegraph processes writing into stream_dir."""
    return {pid: ppid for pid, (ppid, cmd) in tc.processes().items()
            if cmd.startswith(tc.FRAMEGRAPH + " ") and (stream_dir + "/") in cmd}


def free_ports(n):
    """n ports free on 127.0.0.1 now (bound together, then released)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def fetch(url, timeout=3):
    """(status, bytes) of a GET, or (None, b"") when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (OSError, urllib.error.URLError):
        return None, b""


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def main():
    if not os.access(tc.FRAMEGRAPH, os.X_OK):
        raise tc.Failed("build framegraph first (.build/release/framegraph is missing)")
    webcam = sorted(glob.glob(os.path.join(tc.REPO, "..", "shared", "media", "webcam", "*.mkv")))
    inputs = webcam[:2] if len(webcam) >= 2 else [os.path.join(tc.REPO, "samples", "media", "portrait.mp4")] * 2
    if not all(os.path.isfile(i) for i in inputs):
        raise tc.Failed("no input clips (../shared/media/webcam or samples/media/portrait.mp4)")
    work = tempfile.mkdtemp(prefix="fg-streams-test-")
    ray_dir = os.path.join(work, "ray")
    os.makedirs(ray_dir)
    ok = False
    proc = None
    try:
        env = tc.ray_env(work)
        address = tc.start_head(ray_dir, env, cpus=2)
        out = os.path.join(work, "out")
        config = os.path.join(work, "streams.json")
        ports = free_ports(2)
        served, attempts = {}, {}  # stream name → what its port answered (when all was right; the last try)
        with open(config, "w") as f:
            json.dump({"streams": [
                {"name": n, "pipeline": tc.PIPELINE, "input": i, "loop": True, "segment": 3, "cpus": 0.5,
                 "serve": "127.0.0.1:%d" % port}
                for n, i, port in zip(("a", "b"), inputs, ports)]}, f)
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, STREAMS, config, "--output-dir", out, "--address", address,
                                 "--duration", "14", "--status-interval", "1"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        serve_checked = 0.0
        a_dir, b_dir = os.path.join(out, "a"), os.path.join(out, "b")
        killed_fg = killed_actor = None
        b_children = []
        while proc.poll() is None:
            now = time.monotonic() - t0
            if time.monotonic() - t0 > 90:
                proc.kill()
                raise tc.Failed("framegraph-streams did not end in 90 s")
            if killed_fg is None and now > 4:
                fg = framegraph_of(a_dir)
                if fg:
                    killed_fg = min(fg)
                    os.kill(killed_fg, signal.SIGKILL)
                    log("%.1f s: killed stream a's framegraph (pid %d)" % (now, killed_fg))
            if killed_fg is not None and killed_actor is None and now > 7:
                fg = framegraph_of(b_dir)
                if fg:
                    b_children = sorted(fg)
                    killed_actor = fg[b_children[0]]
                    os.kill(killed_actor, signal.SIGKILL)
                    log("%.1f s: killed stream b's actor process (pid %d; its framegraph: %s)"
                           % (now, killed_actor, b_children))
            if len(served) < 2 and now > 2 and now - serve_checked > 0.5:
                serve_checked = now
                for name, port in zip(("a", "b"), ports):
                    if name in served:
                        continue
                    base = "http://127.0.0.1:%d" % port
                    status, body = fetch(base + "/metrics")
                    frames = metric(body.decode("utf-8", "replace"), "framegraph_frames_in_total") if status == 200 else None
                    if frames is None or frames <= 0:
                        continue
                    picture_status, jpeg = fetch(base + "/picture.jpg", timeout=6)
                    pid_ok = any(("--serve 127.0.0.1:%d" % port) in cmd for _, cmd in tc.processes().values()
                                 if cmd.startswith(tc.FRAMEGRAPH + " ") and (os.path.join(out, name) + "/") in cmd)
                    attempts[name] = "/metrics frames in %d, /picture.jpg %s%s, its own framegraph %s" % (
                        frames, picture_status, " (a JPEG)" if jpeg[:2] == b"\xff\xd8" else "", "serves it" if pid_ok else "not found")
                    if picture_status == 200 and jpeg[:2] == b"\xff\xd8" and pid_ok:
                        served[name] = attempts[name]
                        log("%.1f s: stream %s on port %d: %s" % (now, name, port, served[name]))
            time.sleep(0.05)
        output = proc.stdout.read()
        print(output, end="")
        if killed_fg is None or killed_actor is None:
            raise tc.Failed("could not find the processes to kill")
        time.sleep(0.5)
        if any(c in tc.processes() for c in b_children):
            raise tc.Failed("the killed actor's framegraph %s outlived it" % b_children)
        if proc.returncode != 0:
            raise tc.Failed("framegraph-streams exited with status %d" % proc.returncode)
        for name, port in zip(("a", "b"), ports):
            listing = "framegraph-streams: %s serves http://127.0.0.1:%d/" % (name, port)
            if listing not in output:
                raise tc.Failed("the tool did not list %s's address (%s)" % (name, listing))
            if name not in served:
                raise tc.Failed("stream %s's port %d was not served as it should: %s"
                                % (name, port, attempts.get(name, "no answer with frames from /metrics")))
        log("both streams served on their own ports")
        with open(os.path.join(out, "streams-summary.json")) as f:
            summary = {s["name"]: s for s in json.load(f)["streams"]}
        for name in ("a", "b"):
            s = summary[name]
            if s["state"] != "stopped":
                raise tc.Failed("stream %s ended %s" % (name, s["state"]))
            stats = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, name, name + "-*.stats.json")))]
            if len(stats) < 3:
                raise tc.Failed("stream %s: only %d segments" % (name, len(stats)))
            for p in sorted(glob.glob(os.path.join(out, name, name + "-*.stats.json"))):
                video = p[:-len(".stats.json")] + ".mp4"
                want = json.load(open(p))["framesOut"]
                if want == 0 and not os.path.exists(video):
                    continue  # stopped before its first frame (a segment just begun when the run ended)
                got = tc.frame_count(video)
                if got != want:
                    raise tc.Failed("%s has %d frames, its stats say %d" % (video, got, want))
            frames = sum(x["framesOut"] for x in stats)
            if s["totals"]["frames"] != frames or s["totals"]["segments"] != len(stats):
                raise tc.Failed("stream %s: totals %s, the stats files: %d segments, %d frames"
                                % (name, s["totals"], len(stats), frames))
            log("stream %s: %d segments, %d frames (= its stats files), restarts %d, actor restarts %d, errors %s"
                   % (name, len(stats), frames, s["restarts"], s["actorRestarts"], s["errors"]))
        a = summary["a"]
        if a["restarts"] < 1 or not any("signal 9" in e for e in a["errors"]):
            raise tc.Failed("stream a: the killed framegraph was not recorded and restarted: %s" % a)
        if summary["b"]["actorRestarts"] < 1:
            raise tc.Failed("stream b: the actor restart was not recorded: %s" % summary["b"])
        left = framegraph_of(out)
        if left:
            raise tc.Failed("framegraph processes left running: %s" % sorted(left))
        log("passed in %.1f s" % (time.monotonic() - t0))
        ok = True
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        tc.tear_down(ray_dir, work, ok, say=log)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, tc.raise_interrupt)
    try:
        sys.exit(main())
    except tc.Failed as e:
        log("FAILED: %s" % e)
        sys.exit(1)
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
