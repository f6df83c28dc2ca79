#!/usr/bin/env python3
"""framegraph-streams: many live streams, one framegraph process each, supervised by Ray actors.

    tools/cluster/framegraph-streams STREAMS.json --output-dir DIR [--address ADDR] [--duration S]

STREAMS.json:
    {"streams": [
      {"name": "door", "pipeline": "pipelines/face-detect.fg", "camera": "/dev/video0", "results": true,
       "resources": {"cam-door": 1}},
      {"name": "lobby", "pipeline": "pipelines/portrait-segment.fg", "input": "lobby.mp4", "loop": true,
       "segment": 600, "cpus": 0.5, "set": ["matte.mode=blur"], "args": ["--latency", "40"],
       "serve": "0.0.0.0:8081", "serveTokenFile": "/etc/framegraph/serve-token"}
    ]}

"serve": "[ADDRESS:]PORT" runs each of the stream's segments with --serve on that port (its own per
stream; listed at the start and in each status); beyond 127.0.0.1 give "serveTokenFile".

One actor per stream (Ray places it on a node with `cpus` free, default 1, and the custom
`resources` given, e.g. the camera's host; it is restarted by Ray if its process dies). The actor runs `framegraph run PIPELINE --camera DEV|--input FILE [--loop]
--mode live` in segments of `segment` seconds (default: one segment until stopped), each to
DIR/NAME/NAME-00001.mp4 with its stats (and results with "results": true) beside it; when
framegraph ends with an error or is killed it is started again after a back-off (1 s, doubling, at
most 30 s; reset after a segment that ran 60 s), up to `max-failures` failures in a row (default
10). The driver prints each stream's state every few seconds; Ctrl-C or --duration stops every
stream (SIGTERM: framegraph finalizes its files) and writes DIR/streams-summary.json.
Relative paths in STREAMS.json are relative to the working directory; the framegraph binary and the
paths must be the same on every node (docs/SCALE.md).
"""

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

from framegraph_batch import (DEFAULT_FRAMEGRAPH, DROP_KEYS, UserError, _die_with_parent,  # beside this file
                              check_address, read_json as read_stats, write_atomically)

HERE = os.path.dirname(os.path.abspath(__file__))

BACKOFF_START, BACKOFF_MAX, STABLE_SECONDS = 1.0, 30.0, 60.0


class Supervisor:
    """One stream: runs framegraph segment after segment, restarting it on failure. A Ray actor."""

    def __init__(self, spec, out_dir, framegraph, cwd):
        self.spec, self.framegraph, self.cwd = spec, framegraph, cwd
        self.name = spec["name"]
        self.folder = os.path.join(out_dir, self.name)
        os.makedirs(self.folder, exist_ok=True)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.proc = None
        self.state = "starting"
        self.runs = []  # one entry per framegraph run (segment), newest last, at most 200 kept
        self.failures_in_a_row = 0
        self.restarts = 0
        self.totals = {"segments": 0, "frames": 0, "framesIn": 0, "dropped": 0, "duplicated": 0, "cpuSeconds": 0.0,
                       "seconds": 0.0}
        self.actor_restarts = 0
        # Ray restarts an actor whose process died (max_restarts): the new one carries on from the
        # state the old one saved after each run of this invocation (spec["run"]).
        self.state_path = os.path.join(self.folder, ".supervisor-state.json")
        saved = read_stats(self.state_path)
        if isinstance(saved, dict) and saved.get("run") == spec.get("run"):
            self.runs, self.totals = saved["runs"], saved["totals"]
            self.restarts, self.failures_in_a_row = saved["restarts"], saved["failuresInARow"]
            self.actor_restarts = saved["actorRestarts"] + 1
        self._save()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _save(self):
        write_atomically(self.state_path, json.dumps({
            "run": self.spec.get("run"), "runs": self.runs, "totals": self.totals, "restarts": self.restarts,
            "failuresInARow": self.failures_in_a_row, "actorRestarts": self.actor_restarts}))

    def _next_index(self):
        # Segments already on disk (an earlier actor of this stream, before Ray restarted it) are kept.
        found = [0]
        for f in glob.glob(os.path.join(glob.escape(self.folder), self.name + "-*.stats.json")):
            tail = os.path.basename(f)[len(self.name) + 1:-len(".stats.json")]
            if tail.isdigit():
                found.append(int(tail))
        return max(found) + 1

    def _command(self, index):
        base = os.path.join(self.folder, "%s-%05d" % (self.name, index))
        s = self.spec
        cmd = [self.framegraph, "run", s["pipeline"], "--mode", "live", "--quiet",
               "--output", base + s.get("ext", ".mp4"), "--stats", base + ".stats.json"]
        if s.get("camera"):
            cmd += ["--camera", s["camera"]]
        else:
            cmd += ["--input", s["input"]] + (["--loop"] if s.get("loop") else [])
        if s.get("results"):
            cmd += ["--results", base + ".jsonl"]
        if s.get("segment"):
            cmd += ["--duration", str(s["segment"])]
        for o in s.get("set", []):
            cmd += ["--set", o]
        if s.get("serve"):
            # Every segment serves on the stream's own fixed port (docs/MONITORING.md).
            cmd += ["--serve", str(s["serve"])]
            if s.get("serveTokenFile"):
                cmd += ["--serve-token-file", s["serveTokenFile"]]
        return cmd + list(s.get("args", [])), base

    def _loop(self):
        backoff = BACKOFF_START
        max_failures = int(self.spec.get("max-failures", 10))
        while not self.stopping.is_set():
            index = self._next_index()
            cmd, base = self._command(index)
            for stale in glob.glob(os.path.join(glob.escape(self.folder), ".%s-%05d.*.partial-*" % (self.name, index))):
                try:
                    os.unlink(stale)
                except OSError:
                    pass
            start = time.monotonic()
            with self.lock:
                if self.stopping.is_set():
                    break
                self.state = "running"
                self.proc = subprocess.Popen(cmd, cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
            _, err = self.proc.communicate()
            rc = self.proc.returncode
            seconds = time.monotonic() - start
            stats = read_stats(base + ".stats.json") if rc >= 0 else None
            # framegraph's notice of where it serves is not an error's detail.
            lines = [l for l in err.decode("utf-8", "replace").splitlines()
                     if l.strip() and not l.startswith("framegraph: serving http")]
            run = {"segment": index, "exit": rc, "seconds": round(seconds, 2), "pid": self.proc.pid,
                   # A run stopped before its first frame has stats (framesOut 0) but no output file.
                   "output": base + self.spec.get("ext", ".mp4")
                   if stats and os.path.exists(base + self.spec.get("ext", ".mp4")) else None,
                   "stats": base + ".stats.json" if stats else None}
            stopped = self.stopping.is_set()
            # Stopped on purpose: framegraph finalized and exited 130, or our SIGTERM reached it before it
            # had installed its handler (a segment that had just started): neither is an error.
            ok = rc == 0 or (stopped and rc in (130, -signal.SIGTERM))
            if stats:
                run.update(frames=int(stats.get("framesOut", 0)), framesIn=int(stats.get("framesIn", 0)),
                           dropped=int(sum(int(stats.get(k, 0) or 0) for k in DROP_KEYS)),
                           duplicated=int(stats.get("duplicated", 0)), cpuSeconds=stats.get("cpuSeconds", 0.0),
                           latencyP50=(stats.get("endToEnd") or {}).get("p50"),
                           latencyP99=(stats.get("endToEnd") or {}).get("p99"))
            if not ok:
                run["error"] = ("killed by signal %d" % -rc if rc < 0 else "exit status %d" % rc) + \
                    ((": " + lines[-1]) if lines else "")
            with self.lock:
                self.proc = None
                self.runs = (self.runs + [run])[-200:]
                if stats:
                    t = self.totals
                    t["segments"] += 1
                    t["frames"] += run["frames"]
                    t["framesIn"] += run["framesIn"]
                    t["dropped"] += run["dropped"]
                    t["duplicated"] += run["duplicated"]
                    t["cpuSeconds"] = round(t["cpuSeconds"] + (run["cpuSeconds"] or 0.0), 3)
                    t["seconds"] = round(t["seconds"] + seconds, 2)
                if not ok and not stopped:
                    self.failures_in_a_row += 1
                    self.restarts += 1
                self._save()
                if stopped:
                    break
                if ok:
                    self.failures_in_a_row = 0
                    backoff = BACKOFF_START
                    continue
                if seconds >= STABLE_SECONDS:
                    backoff = BACKOFF_START
                if self.failures_in_a_row >= max_failures:
                    self.state = "failed"
                    return
                self.state = "waiting %.0f s to restart" % backoff
            if self.stopping.wait(backoff):
                break
            backoff = min(backoff * 2, BACKOFF_MAX)
        with self.lock:
            self.state = "stopped"

    def status(self):
        with self.lock:
            return {"name": self.name, "state": self.state, "pid": self.proc.pid if self.proc else None,
                "serve": serve_url(self.spec),
                    "restarts": self.restarts, "actorRestarts": self.actor_restarts, "failuresInARow": self.failures_in_a_row,
                    "totals": dict(self.totals), "lastRun": self.runs[-1] if self.runs else None,
                    "errors": [r["error"] for r in self.runs if "error" in r][-10:]}

    def stop(self, timeout=20.0):
        """SIGTERM to framegraph (it finalizes its files), then wait; the stream's final status."""
        with self.lock:
            self.stopping.set()
            if self.proc and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
        self.thread.join(timeout)
        with self.lock:
            if self.proc and self.proc.poll() is None:
                self.proc.kill()
        self.thread.join(5)
        result = self.status()
        with self.lock:
            result["runs"] = list(self.runs)
        return result


def serve_url(spec):
    """The address a stream's dashboard and metrics are served at ("serve": "[ADDRESS:]PORT"), or None."""
    serve = spec.get("serve")
    if not serve:
        return None
    text = str(serve)
    host, _, port = text.rpartition(":")
    return "http://%s:%s/" % (host or "127.0.0.1", port)


def load_streams(path):
    try:
        with open(path) as f:
            config = json.load(f)
    except OSError as e:
        raise UserError("%s: %s" % (path, e.strerror))
    except ValueError as e:
        raise UserError("%s: not JSON: %s" % (path, e))
    streams = config.get("streams") if isinstance(config, dict) else None
    if not isinstance(streams, list) or not streams:
        raise UserError('%s: expected {"streams": [{"name": …, "pipeline": …, "camera"|"input": …}, …]}' % path)
    names = set()
    for i, s in enumerate(streams):
        where = "%s: stream %d" % (path, i + 1)
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not s["name"]:
            raise UserError("%s: needs a name" % where)
        if not all(c.isalnum() or c in "-_." for c in s["name"]) or s["name"].startswith("."):
            raise UserError("%s: name %r: letters, digits, - _ . only" % (where, s["name"]))
        if s["name"] in names:
            raise UserError("%s: the name %s is used twice" % (where, s["name"]))
        names.add(s["name"])
        if not s.get("pipeline") or not os.path.isfile(s["pipeline"]):
            raise UserError("%s (%s): pipeline not found: %s" % (where, s["name"], s.get("pipeline")))
        if bool(s.get("camera")) == bool(s.get("input")):
            raise UserError("%s (%s): give either camera or input" % (where, s["name"]))
        s["pipeline"] = os.path.abspath(s["pipeline"])
        if s.get("resources") is not None and not (isinstance(s["resources"], dict) and all(
                isinstance(v, (int, float)) for v in s["resources"].values())):
            raise UserError('%s (%s): resources: expected {"NAME": amount, …}' % (where, s["name"]))
        if s.get("serve") is not None:
            host, _, port = str(s["serve"]).rpartition(":")
            if not port.isdigit() or not 0 < int(port) < 65536:
                raise UserError("%s (%s): serve: expected \"[ADDRESS:]PORT\" with a fixed port (each stream its own)" % (where, s["name"]))
            if s.get("serveTokenFile"):
                s["serveTokenFile"] = os.path.abspath(s["serveTokenFile"])
        if s.get("input"):
            if not os.path.isfile(s["input"]):
                raise UserError("%s (%s): input not found: %s" % (where, s["name"], s["input"]))
            s["input"] = os.path.abspath(s["input"])
    return streams


def main(argv):
    ap = argparse.ArgumentParser(prog="framegraph-streams",
                                 description="Many live streams, one framegraph process each, supervised by Ray actors.",
                                 epilog="Details: docs/SCALE.md")
    ap.add_argument("streams", help="STREAMS.json")
    ap.add_argument("--output-dir", required=True)
    ap.add_argument("--address", help="an existing Ray cluster; default: start a local one")
    ap.add_argument("--duration", type=float, help="stop every stream after this many seconds (default: Ctrl-C)")
    ap.add_argument("--framegraph", default=DEFAULT_FRAMEGRAPH)
    ap.add_argument("--status-interval", type=float, default=5.0)
    args = ap.parse_args(argv)
    streams = load_streams(args.streams)
    run_id = "%d-%d" % (time.time() * 1000, os.getpid())
    for s in streams:
        s["run"] = run_id
    if not os.access(args.framegraph, os.X_OK):
        raise UserError("framegraph binary not found: %s" % args.framegraph)
    out_dir = os.path.abspath(args.output_dir)
    os.makedirs(out_dir, exist_ok=True)
    if args.address:
        check_address(args.address)
    import logging
    import ray
    try:
        if args.address:
            ray.init(address=args.address, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(num_cpus=os.cpu_count(), include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    except Exception as e:
        raise UserError("cannot connect to the Ray cluster: %s" % (str(e).splitlines()[0] if str(e) else type(e).__name__))

    # max_task_retries: a status() or stop() call sent while Ray restarts the actor waits for the new one.
    actor_class = ray.remote(max_restarts=-1, max_task_retries=3)(Supervisor)
    framegraph = os.path.abspath(args.framegraph)
    # "resources" pins a stream to the node that has its camera: ray start --resources '{"cam-door": 1}'
    actors = {s["name"]: actor_class.options(num_cpus=float(s.get("cpus", 1)), resources=s.get("resources") or {},
                                             name="framegraph-stream-" + s["name"])
              .remote(s, out_dir, framegraph, os.getcwd()) for s in streams}
    for s in streams:
        if serve_url(s):
            sys.stderr.write("framegraph-streams: %s serves %s (metrics at /metrics)\n" % (s["name"], serve_url(s)))
    ports = [str(s["serve"]).rpartition(":")[2] for s in streams if s.get("serve")]
    if len(ports) != len(set(ports)) and not args.address:
        raise UserError("two streams serve on the same port: give each its own")
    start = time.monotonic()
    tty = sys.stderr.isatty()
    final = {}
    try:
        while args.duration is None or time.monotonic() - start < args.duration:
            time.sleep(min(args.status_interval, max(0.1, (args.duration or 1e9) - (time.monotonic() - start))))
            refs = {name: a.status.remote() for name, a in actors.items()}
            statuses = []
            for name, ref in refs.items():
                try:
                    statuses.append(ray.get(ref, timeout=30))
                except Exception:
                    statuses.append({"name": name, "state": "restarting (actor lost)", "totals": {"frames": 0}, "restarts": 0})
            line = "  ".join("%s: %s, %d frames, %d restarts" % (s["name"], s["state"], s["totals"]["frames"], s["restarts"])
                             for s in statuses)
            sys.stderr.write(("\r\033[K" if tty else "") + "framegraph-streams: %5.0f s  %s%s"
                             % (time.monotonic() - start, line, "" if tty else "\n"))
            sys.stderr.flush()
    except KeyboardInterrupt:
        pass
    finally:
        if tty:
            sys.stderr.write("\n")
        for name, actor in actors.items():
            try:
                final[name] = ray.get(actor.stop.remote(), timeout=60)
            except Exception as e:
                final[name] = {"name": name, "state": "lost", "errors": [str(e).splitlines()[0]]}
        summary = {"outputDir": args.output_dir, "wallSeconds": round(time.monotonic() - start, 2),
                   "streams": [final[s["name"]] for s in streams]}
        write_atomically(os.path.join(out_dir, "streams-summary.json"), json.dumps(summary, indent=2) + "\n")
        for s in summary["streams"]:
            t = s.get("totals", {})
            print("%-16s %-10s segments %3d  frames %6d  dropped %4d  restarts %2d%s"
                  % (s["name"], s["state"], t.get("segments", 0), t.get("frames", 0), t.get("dropped", 0),
                     s.get("restarts", 0), ("  last error: " + s["errors"][-1]) if s.get("errors") else ""))
        print("summary: %s" % os.path.join(args.output_dir, "streams-summary.json"))
        ray.shutdown()
    return 0 if all(s["state"] == "stopped" for s in summary["streams"]) else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UserError as e:
        sys.stderr.write("framegraph-streams: %s\n" % e)
        sys.exit(2)
