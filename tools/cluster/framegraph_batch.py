#!/usr/bin/env python3
"""framegraph-batch: run one FrameGraph pipeline over many video files on a Ray cluster.

    tools/cluster/framegraph-batch PIPELINE.fg INPUT... --output-dir DIR [options]

One Ray task per input; each task runs the framegraph CLI on its input
(`framegraph run PIPELINE --input IN --output DIR/NAME.mp4 --stats DIR/NAME.stats.json --mode offline --quiet`).
Inputs whose output and stats already exist (and whose stats record a finished run) are skipped,
so an interrupted batch is resumed by running the same command again. A task whose framegraph
exits with an error, or whose worker process is lost, is retried up to --retries times. Progress goes
to stderr; a summary (JSON, written atomically) and a table at the end. docs/SCALE.md has the details.
"""

import argparse
import ctypes
import glob
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_FRAMEGRAPH = os.path.join(REPO, ".build", "release", "framegraph")
ATTEMPTS = ".attempts"  # DIR/.attempts/NAME: attempt counter; NAME.running: the attempt in progress; NAME.errors
VIDEO_EXTENSIONS = {".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v", ".mpg", ".mpeg", ".ts", ".mts",
                    ".m2ts", ".flv", ".wmv", ".3gp", ".ogv", ".mxf", ".y4m", ".gif"}
DROP_KEYS = ("droppedAtSource", "droppedCorrupt", "droppedRate", "droppedBusy", "droppedLate")


class UserError(Exception):
    """A problem with the command line or the environment: one line, no traceback."""


# ----------------------------------------------------------------------------------------------
# What runs on the workers. Plain functions of this module; Ray ships them with the task.

class FramegraphFailed(Exception):
    """framegraph ended with an error that another attempt may not see (status 1, a signal): retried.
    A refusal (status 2: bad input or options) is returned instead, so that it is not retried."""


def read_stats(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def finished(output, stats_path):
    """The output and its stats exist and the stats describe a run that ended normally."""
    if not (os.path.isfile(output) and os.path.isfile(stats_path)):
        return None
    stats = read_stats(stats_path)
    if not isinstance(stats, dict) or stats.get("failure") is not None or stats.get("interrupted"):
        return None
    return stats


def write_atomically(path, text):
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _die_with_parent():
    # The framegraph child is killed when the worker running this task dies (a lost task), so a
    # retry never races an orphan. Linux: prctl(PR_SET_PDEATHSIG, SIGKILL).
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except OSError:
        pass


def run_one(job):
    """One input, one attempt. Returns a result dict; raises FramegraphFailed (retried) on errors."""
    import ray  # on the worker

    name, output, stats_path = job["name"], job["output"], job["stats"]
    marks = os.path.join(job["outputDir"], ATTEMPTS)
    os.makedirs(marks, exist_ok=True)
    done = finished(output, stats_path)
    if done is not None:  # finished meanwhile (another batch, or a retry after the rename)
        return {"name": name, "stats": done, "seconds": 0.0, "node": None, "alreadyDone": True}
    counter = os.path.join(marks, name)
    try:
        with open(counter) as f:
            attempt = int(f.read().strip() or 0) + 1
    except (OSError, ValueError):
        attempt = 1
    write_atomically(counter, "%d\n" % attempt)
    try:
        node = ray.get_runtime_context().get_node_id()
    except Exception:
        node = None
    running = os.path.join(marks, name + ".running")
    write_atomically(running, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "node": node,
                                          "attempt": attempt, "started": time.time()}) + "\n")
    # A previous attempt killed mid-run leaves framegraph's hidden temporary files (".NAME.partial-…").
    folder = os.path.dirname(output)
    for base in (os.path.basename(output), os.path.basename(stats_path)):
        for stale in glob.glob(os.path.join(glob.escape(folder), "." + glob.escape(base) + ".partial-*")):
            try:
                os.unlink(stale)
            except OSError:
                pass
    cmd = [job["framegraph"], "run", job["pipeline"], "--input", job["input"], "--output", output,
           "--stats", stats_path, "--mode", "offline", "--quiet"]
    for s in job["sets"]:
        cmd += ["--set", s]
    env = dict(os.environ)
    if job.get("libPath"):
        env["LD_LIBRARY_PATH"] = job["libPath"] + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=job.get("cwd") or None, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
    finally:
        try:
            os.unlink(running)
        except OSError:
            pass
    seconds = time.monotonic() - start
    stats = finished(output, stats_path)
    if proc.returncode == 0 and stats is not None:
        return {"name": name, "stats": stats, "seconds": seconds, "node": node, "attempt": attempt}
    lines = [l for l in proc.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
    if proc.returncode < 0:
        reason = "framegraph killed by signal %d" % -proc.returncode
    else:
        reason = "framegraph exit status %d" % proc.returncode
    message = "attempt %d: %s%s" % (attempt, reason, (": " + lines[-1]) if lines else "")
    with open(os.path.join(marks, name + ".errors"), "a") as f:
        f.write(json.dumps({"attempt": attempt, "error": message}) + "\n")
    if proc.returncode == 2:
        return {"name": name, "refused": message, "seconds": seconds, "node": node, "attempt": attempt}
    raise FramegraphFailed(message)


# ----------------------------------------------------------------------------------------------
# The driver.

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="framegraph-batch",
        description="Run a FrameGraph pipeline over many video files, one Ray task per file.",
        epilog="Details: docs/SCALE.md")
    p.add_argument("pipeline", help="the pipeline file (.fg)")
    p.add_argument("inputs", nargs="+", help="input files, globs (quote them for recursive **), or folders")
    p.add_argument("--output-dir", required=True, help="where NAME.mp4 and NAME.stats.json go")
    p.add_argument("--address", help="an existing Ray cluster (host:port or 'auto'); default: start a local one")
    p.add_argument("--retries", type=int, default=3, help="retries of a failed or lost task (default 3)")
    p.add_argument("--cpus-per-task", type=float,
                   help="CPUs Ray reserves per task (default: the largest threads= in the pipeline, else 1)")
    p.add_argument("--framegraph", default=DEFAULT_FRAMEGRAPH,
                   help="the framegraph binary, at the same path on every node (default: this repository's .build/release/framegraph)")
    p.add_argument("--set", action="append", default=[], metavar="NODE.KEY=VALUE", help="a node option (repeatable)")
    p.add_argument("--output-ext", default=".mp4", help="the outputs' extension (default .mp4)")
    p.add_argument("--summary", help="the summary JSON (default DIR/summary.json)")
    p.add_argument("--ship", action="store_true",
                   help="send the binary, its Swift runtime libraries, the pipeline and models/ to the workers "
                        "through Ray's runtime_env working_dir instead of a shared folder")
    p.add_argument("--local-cpus", type=int, help="CPUs of the local cluster started without --address (default: all)")
    p.add_argument("--progress-interval", type=float, help="seconds between progress lines (default 1 on a terminal, 5 otherwise)")
    return p.parse_args(argv)


def expand_inputs(args_inputs):
    files, seen = [], set()
    for arg in args_inputs:
        if os.path.isdir(arg):
            found = sorted(os.path.join(arg, n) for n in os.listdir(arg)
                           if os.path.splitext(n)[1].lower() in VIDEO_EXTENSIONS and os.path.isfile(os.path.join(arg, n)))
            if not found:
                raise UserError("no video files in the folder %s" % arg)
        elif os.path.isfile(arg):
            found = [arg]
        elif os.path.exists(arg):
            raise UserError("not a file or folder: %s" % arg)
        else:
            found = sorted(f for f in glob.glob(arg, recursive=True) if os.path.isfile(f))
            if not found:
                raise UserError(("no such file: %s" % arg) if not glob.has_magic(arg) else ("no file matches %s" % arg))
        for f in found:
            full = os.path.abspath(f)
            if full not in seen:
                seen.add(full)
                files.append(full)
    return files


def pipeline_threads(pipeline, sets):
    """The largest explicit threads= of the pipeline's nodes (with --set applied); None if none."""
    threads = {}
    with open(pipeline) as f:
        for line in f:
            line = line.split("#", 1)[0]
            m = re.match(r"\s*([A-Za-z_][\w-]*)\s*=\s*\S+(.*)$", line)
            if not m:
                continue
            t = re.search(r"(?:^|\s)threads=(\d+)", m.group(2))
            if t:
                threads[m.group(1)] = int(t.group(1))
    for s in sets:
        m = re.match(r"([^.=]+)\.threads=(\d+)$", s)
        if m:
            threads[m.group(1)] = int(m.group(2))
    values = [v for v in threads.values() if v > 0]
    return max(values) if values else None


def check_address(address):
    if address in ("auto", "local") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError("--address %s: expected HOST:PORT (or auto)" % address)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise UserError("cannot reach the Ray cluster at %s: %s" % (address, e.strerror or e))


def swift_runtime_libraries(binary):
    """Shared libraries of the binary outside the system's library folders (the Swift runtime)."""
    try:
        out = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    except OSError:
        return []
    libs = []
    for line in out.splitlines():
        m = re.search(r"=>\s+(/\S+)", line)
        if m and not re.match(r"/(usr/)?lib(64|32)?/", m.group(1)):
            libs.append(m.group(1))
    return libs


def stage_for_shipping(args, stage):
    """A folder for runtime_env working_dir: bin/framegraph, lib/ (Swift runtime), pipelines/, models/."""
    os.makedirs(os.path.join(stage, "bin"))
    os.makedirs(os.path.join(stage, "lib"))
    os.makedirs(os.path.join(stage, "pipelines"))
    shutil.copy2(args.framegraph, os.path.join(stage, "bin", "framegraph"))
    for lib in swift_runtime_libraries(args.framegraph):
        shutil.copy2(lib, os.path.join(stage, "lib", os.path.basename(lib)))
    shutil.copy2(args.pipeline, os.path.join(stage, "pipelines", os.path.basename(args.pipeline)))
    models = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.pipeline))), "models")
    if not os.path.isdir(models):
        models = os.path.join(REPO, "models")
    if os.path.isdir(models):
        shutil.copytree(models, os.path.join(stage, "models"),
                        ignore=shutil.ignore_patterns("*.whl", "*.partial*", "__pycache__", ".gitignore"))


def fmt_num(x, digits=1):
    return "-" if x is None else ("%.*f" % (digits, x))


class Progress:
    def __init__(self, total, skipped, interval):
        self.tty = sys.stderr.isatty()
        self.total, self.skipped = total, skipped
        self.interval = interval if interval else (1.0 if self.tty else 5.0)
        self.last = 0.0
        self.start = time.monotonic()

    def show(self, done, failed, running, frames, force=False):
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        elapsed = now - self.start
        queued = self.total - self.skipped - done - failed - running
        line = ("framegraph-batch: %5.1f s  %d/%d done, %d running, %d queued, %d failed, %d skipped  %d frames  %.1f fps"
                % (elapsed, done, self.total, running, max(queued, 0), failed, self.skipped, frames,
                   frames / elapsed if elapsed > 0 else 0.0))
        if self.tty:
            sys.stderr.write("\r\033[K" + line + ("\n" if force else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def entry_from_stats(entry, stats):
    entry["frames"] = int(stats.get("framesOut", 0))
    entry["framesIn"] = int(stats.get("framesIn", 0))
    entry["fps"] = stats.get("achievedFps")
    entry["dropped"] = int(sum(int(stats.get(k, 0) or 0) for k in DROP_KEYS))
    entry["cpuSeconds"] = stats.get("cpuSeconds")
    entry["elapsedSeconds"] = stats.get("elapsedSeconds")


def print_table(summary, out):
    rows = [("input", "status", "frames", "fps", "dropped", "attempts", "seconds", "error")]
    for e in summary["inputs"]:
        err = e["errors"][-1] if e["errors"] else ""
        rows.append((e["name"], e["status"], str(e.get("frames", "-")), fmt_num(e.get("fps")), str(e.get("dropped", "-")),
                     str(e["attempts"]), fmt_num(e.get("seconds"), 2), err[:60]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        out.write("  ".join(c.ljust(widths[i]) if i == 0 or i == 1 else c.rjust(widths[i])
                            for i, c in enumerate(r[:-1])) + ("  " + r[-1] if r[-1] else "") + "\n")
    t = summary["totals"]
    out.write("total: %d inputs, %d ok, %d failed, %d skipped; %d frames in %.1f s: %.1f clips/min, %.1f frames/s (%s)\n"
              % (t["inputs"], t["ok"], t["failed"], t["skipped"], t["frames"], t["wallSeconds"],
                 t["clipsPerMinute"], t["framesPerSecond"], summary["cluster"]))


def main(argv):
    args = parse_args(argv)
    if not os.path.isfile(args.pipeline):
        raise UserError("pipeline not found: %s" % args.pipeline)
    if not (os.path.isfile(args.framegraph) and os.access(args.framegraph, os.X_OK)):
        raise UserError("framegraph binary not found: %s (build it: swift build -c release)" % args.framegraph)
    if args.retries < 0:
        raise UserError("--retries must be 0 or more")
    if args.cpus_per_task is not None and args.cpus_per_task <= 0:
        raise UserError("--cpus-per-task must be more than 0")
    ext = args.output_ext if args.output_ext.startswith(".") else "." + args.output_ext
    inputs = expand_inputs(args.inputs)
    if not inputs:
        raise UserError("no inputs")
    pipeline = os.path.abspath(args.pipeline)
    framegraph = os.path.abspath(args.framegraph)
    out_dir = os.path.abspath(args.output_dir)
    summary_path = os.path.abspath(args.summary) if args.summary else os.path.join(out_dir, "summary.json")

    jobs, by_name = [], {}
    for inp in inputs:
        name = os.path.splitext(os.path.basename(inp))[0]
        if name in by_name:
            raise UserError("two inputs would write %s%s: %s and %s (rename one, or run them separately)"
                            % (name, ext, by_name[name], inp))
        by_name[name] = inp
        jobs.append({"name": name, "input": inp, "output": os.path.join(out_dir, name + ext),
                     "stats": os.path.join(out_dir, name + ".stats.json"), "outputDir": out_dir,
                     "pipeline": pipeline, "framegraph": framegraph, "sets": list(args.set)})

    cpus = args.cpus_per_task or pipeline_threads(pipeline, args.set) or 1
    os.makedirs(out_dir, exist_ok=True)
    entries = {}
    todo = []
    for job in jobs:
        entry = {"input": job["input"], "name": job["name"], "output": job["output"], "stats": job["stats"],
                 "status": None, "errors": [], "attempts": 0, "seconds": None, "node": None}
        entries[job["name"]] = entry
        stats = finished(job["output"], job["stats"])
        if stats is not None:
            entry["status"] = "skipped"
            entry_from_stats(entry, stats)
        else:
            todo.append(job)
    skipped = len(jobs) - len(todo)

    summary = {"pipeline": args.pipeline, "outputDir": args.output_dir, "sets": args.set,
               "address": args.address, "cpusPerTask": cpus, "retries": args.retries, "cluster": "nothing to do",
               "inputs": [entries[j["name"]] for j in jobs]}
    start = time.monotonic()
    progress = Progress(len(jobs), skipped, args.progress_interval)
    frames_done = [0]
    done = failed = 0
    interrupted = False
    if todo:
        # The pipeline and options are checked here (framegraph check), not 10,000 times on the
        # workers; with nothing to do, framegraph is not run at all. An error that names the input is
        # that input's (its task fails alone): the next input is tried, up to three.
        for job in todo[:3]:
            check = subprocess.run([framegraph, "check", pipeline, "--input", job["input"], "--output", job["output"]]
                                   + sum((["--set", s] for s in args.set), []),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if check.returncode == 0:
                break
            lines = [l for l in check.stderr.splitlines() if l.strip()]
            message = lines[-1] if lines else "framegraph check failed (status %d)" % check.returncode
            if job["input"] not in message:
                raise UserError(message)
        if args.address:
            check_address(args.address)
        import logging
        import ray
        from ray.exceptions import RayTaskError

        init = {"logging_level": logging.WARNING, "log_to_driver": False}
        stage = None
        if args.ship:
            stage = tempfile.mkdtemp(prefix="framegraph-batch-ship-")
            stage_for_shipping(args, stage)
            init["runtime_env"] = {"working_dir": stage}
            for job in jobs:  # relative to the unpacked working_dir on the worker (_shipped_run_one)
                job["framegraph"] = "bin/framegraph"
                job["pipeline"] = os.path.join("pipelines", os.path.basename(pipeline))
                job["libPath"] = "lib"
        try:
            if args.address:
                ray.init(address=args.address, **init)
            else:
                ray.init(num_cpus=args.local_cpus or os.cpu_count(), include_dashboard=False, **init)
        except Exception as e:  # ConnectionError, RuntimeError, ...
            raise UserError("cannot connect to the Ray cluster%s: %s"
                            % (" at " + args.address if args.address else "", str(e).splitlines()[0] if str(e) else type(e).__name__))
        finally:
            if stage:
                shutil.rmtree(stage, ignore_errors=True)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        total_cpus = ray.cluster_resources().get("CPU", 0)
        summary["cluster"] = "%d node%s, %g CPUs" % (len(nodes), "" if len(nodes) == 1 else "s", total_cpus)
        if cpus > total_cpus:
            raise UserError("--cpus-per-task %g is more than the cluster's %g CPUs: no task could be scheduled" % (cpus, total_cpus))

        marks = os.path.join(out_dir, ATTEMPTS)
        os.makedirs(marks, exist_ok=True)
        for job in todo:  # attempts are counted per invocation
            for suffix in ("", ".running", ".errors"):
                try:
                    os.unlink(os.path.join(marks, job["name"] + suffix))
                except OSError:
                    pass
        # max_retries covers lost workers (a killed process, a dead node); retry_exceptions the
        # FramegraphFailed a task raises when framegraph ends with an error.
        remote = ray.remote(num_cpus=cpus, max_retries=args.retries, retry_exceptions=True)(
            _shipped_run_one if args.ship else run_one)
        pending = {}
        for job in todo:
            pending[remote.remote(job)] = job
        start = time.monotonic()
        progress.start = start

        def attempts_of(name):
            try:
                with open(os.path.join(marks, name)) as f:
                    return int(f.read().strip() or 0)
            except (OSError, ValueError):
                return 0

        def recorded_errors(name):
            errs = []
            try:
                with open(os.path.join(marks, name + ".errors")) as f:
                    for line in f:
                        try:
                            errs.append(json.loads(line)["error"])
                        except (ValueError, KeyError):
                            pass
            except OSError:
                pass
            return errs

        host = socket.gethostname()

        def running_count():
            # Attempts in progress: their markers. A marker left by a killed worker on this host (its
            # process gone) is not counted; the retry overwrites it.
            count = 0
            try:
                names = [n for n in os.listdir(marks) if n.endswith(".running")]
            except OSError:
                return 0
            for n in names:
                if entries.get(n[:-len(".running")], {}).get("status") is not None:
                    continue
                info = read_stats(os.path.join(marks, n)) or {}
                if info.get("host") == host and isinstance(info.get("pid"), int) and not os.path.exists("/proc/%d" % info["pid"]):
                    continue
                count += 1
            return count

        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.5)
                for ref in ready:
                    job = pending.pop(ref)
                    entry = entries[job["name"]]
                    try:
                        result = ray.get(ref)
                        if "refused" in result:
                            raise FramegraphFailed(result["refused"])
                        entry["status"] = "ok"
                        entry_from_stats(entry, result["stats"])
                        entry["seconds"] = round(result["seconds"], 3)
                        entry["node"] = result.get("node")
                        frames_done[0] += entry["frames"]
                        done += 1
                    except Exception as e:  # RayTaskError (the task raised), WorkerCrashedError, ...
                        entry["status"] = "failed"
                        cause = e.cause if isinstance(e, RayTaskError) and getattr(e, "cause", None) else e
                        message = str(cause).strip().splitlines()[-1] if str(cause).strip() else type(cause).__name__
                        if type(cause).__name__ == "FramegraphFailed":
                            message = None  # already in the errors file
                        elif not isinstance(e, RayTaskError):
                            message = "%s: %s" % (type(e).__name__, message)
                        entry["_final"] = message
                        stats = read_stats(job["stats"])
                        if isinstance(stats, dict):  # status 1 still writes stats (failure set)
                            entry_from_stats(entry, stats)
                            frames_done[0] += entry["frames"]
                        failed += 1
                progress.show(done, failed, running_count(), frames_done[0])
        except KeyboardInterrupt:
            interrupted = True
            for ref in pending:
                try:
                    ray.cancel(ref, force=True)
                except Exception:
                    pass
            for job in pending.values():
                entries[job["name"]]["status"] = "failed"
                entries[job["name"]]["_final"] = "interrupted (Ctrl-C)"
                failed += 1
        wall = time.monotonic() - start
        progress.show(done, failed, 0, frames_done[0], force=True)
        for job in todo:
            entry = entries[job["name"]]
            entry["attempts"] = attempts_of(job["name"])
            errs = recorded_errors(job["name"])
            final = entry.pop("_final", None)
            lost = entry["attempts"] - len(errs) - (1 if entry["status"] == "ok" else 0)
            if lost > 0:
                errs.append("%d attempt%s lost (worker process died)" % (lost, "" if lost == 1 else "s"))
            if final:
                errs.append(final)
            entry["errors"] = errs
            try:
                os.unlink(os.path.join(marks, job["name"] + ".running"))
            except OSError:
                pass
        try:
            ray.shutdown()
        except Exception:
            pass

    if not todo:
        wall = 0.0
    processed = [e for e in summary["inputs"] if e["status"] in ("ok", "failed") and "frames" in e]
    frames = sum(e["frames"] for e in processed)
    ok = sum(1 for e in summary["inputs"] if e["status"] == "ok")
    summary["totals"] = {
        "inputs": len(jobs), "ok": ok, "failed": failed, "skipped": skipped,
        "frames": frames,
        "framesIn": sum(e["framesIn"] for e in processed),
        "dropped": sum(e["dropped"] for e in processed),
        "cpuSeconds": round(sum(e.get("cpuSeconds") or 0 for e in processed), 3),
        "framesSkipped": sum(e.get("frames", 0) for e in summary["inputs"] if e["status"] == "skipped"),
        "attempts": sum(e["attempts"] for e in summary["inputs"]),
        "wallSeconds": round(wall, 3),
        "clipsPerMinute": round(ok / wall * 60, 2) if wall > 0 else 0.0,
        "framesPerSecond": round(frames / wall, 1) if wall > 0 else 0.0,
    }
    os.makedirs(os.path.dirname(summary_path), exist_ok=True)
    write_atomically(summary_path, json.dumps(summary, indent=2) + "\n")
    print_table(summary, sys.stdout)
    sys.stdout.write("summary: %s\n" % (args.summary or os.path.join(args.output_dir, "summary.json")))
    if interrupted:
        return 130
    return 1 if failed else 0


def _shipped_run_one(job):
    # With --ship, Ray runs the task in the unpacked working_dir: the binary, pipeline and libraries
    # are relative to it.
    job = dict(job)
    job["framegraph"] = os.path.abspath(job["framegraph"])
    job["pipeline"] = os.path.abspath(job["pipeline"])
    job["libPath"] = os.path.abspath(job["libPath"])
    job["cwd"] = os.getcwd()
    return run_one(job)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UserError as e:
        sys.stderr.write("framegraph-batch: %s\n" % e)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.stderr.write("framegraph-batch: interrupted\n")
        sys.exit(130)
