#!/usr/bin/env python3
"""framegraph-batch: run one FrameGraph pipeline over many video files on a Ray cluster.

    tools/cluster/framegraph-batch PIPELINE.fg INPUT... --output-dir DIR [options]

One Ray task per input. A task runs the framegraph CLI in a scratch folder of its own
(DIR/.scratch/NAME), with every output named after the input:
    framegraph run PIPELINE --input IN --output NAME.mp4 [--results NAME.jsonl] --stats NAME.stats.json --mode offline --quiet
and, when the run succeeds, moves what it wrote into DIR (DIR/NAME.mp4, DIR/NAME.jsonl when the
pipeline finds something, DIR/NAME.stats.json, and anything else, such as a second sink's out/x.png,
below DIR/NAME.files/), then records in DIR/NAME.done.json what produced them: the input's size and
SHA-256 and the settings (the pipeline file's text, every --set, the output extension, the
framegraph binary's --version and SHA-256). Running the command again reuses an input whose record
matches; a changed input or setting processes it again (the log says why); --force processes every
input. Two inputs with one name in different folders are told apart by a suffix (NAME-1a2b3c4d).
A task whose framegraph exits with an error, or whose worker process is lost, is retried up to
--retries times. Progress goes to stderr; a summary (JSON, written atomically, saying per input
whether it was reused or processed and what made its files) and a table at the end. docs/SCALE.md
has the details.
"""

import argparse
import ctypes
import glob
import hashlib
import json
import os
import re
import shlex
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
SCRATCH = ".scratch"    # DIR/.scratch/NAME: the working folder of NAME's attempt (kept after a failure, for a look)
RECORD = ".done.json"   # DIR/NAME.done.json: what made NAME's files (written last, when they are all in place)
FILES = ".files"        # DIR/NAME.files/: what else the pipeline wrote for NAME (other sinks, image sequences)
VIDEO_EXTENSIONS = {".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v", ".mpg", ".mpeg", ".ts", ".mts",
                    ".m2ts", ".flv", ".wmv", ".3gp", ".ogv", ".mxf", ".y4m", ".gif"}
DROP_KEYS = ("droppedAtSource", "droppedCorrupt", "droppedRate", "droppedBusy", "droppedLate")
# Node types whose output is results (framegraph check says "→ results" for them too).
RESULT_PRODUCERS = {"detect-faces", "face-landmarks", "metaltensor-faces", "label", "classify"}
SINKS_WITH_PATHS = ("encode", "png", "results")
SEQUENCE = re.compile(r"%0?\d*d")  # an image sequence's frame number (frames/%05d.png)
# A file's stat is trusted to stand for its hashed content only when its last change (ctime) was at
# least this long before the hash was taken: a change within the same timestamp tick as the hash
# would not show in the stat (git's "racy" rule).
RACY_SECONDS = 2.0
RECORD_FORMAT = 1


class UserError(Exception):
    """A problem with the command line or the environment: one line, no traceback."""


# ----------------------------------------------------------------------------------------------
# What runs on the workers (and the driver's checks of what is done). Plain functions of this
# module; Ray ships them with the task.

class FramegraphFailed(Exception):
    """framegraph ended with an error that another attempt may not see (status 1, a signal): retried.
    A refusal (status 2: bad input or options) is returned instead, so that it is not retried."""


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def finished_stats(stats_path):
    """The stats at stats_path, when they describe a run that ended normally; else None."""
    stats = read_json(stats_path)
    if not isinstance(stats, dict) or stats.get("failure") is not None or stats.get("interrupted"):
        return None
    return stats


def write_atomically(path, text):
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
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


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)


def stat_fingerprint(st):
    """What changes whenever a file's content does: size, mtime, ctime (which no one can set back) and inode."""
    return {"size": st.st_size, "mtimeNs": st.st_mtime_ns, "ctimeNs": st.st_ctime_ns, "inode": st.st_ino}


def hash_input(path):
    """(identity, fingerprint, trusted): the file's {size, sha256}; its stat fingerprint, equal before
    and after the read (FramegraphFailed if the file changed meanwhile); and whether that fingerprint
    may later stand for the content without reading the file again (RACY_SECONDS)."""
    before = stat_fingerprint(os.stat(path))
    digest = sha256_file(path)
    after = stat_fingerprint(os.stat(path))
    if before != after:
        raise FramegraphFailed("%s changed while it was being read" % path)
    trusted = time.time() - after["ctimeNs"] / 1e9 >= RACY_SECONDS
    return {"size": after["size"], "sha256": digest}, after, trusted


def record_path(job):
    return os.path.join(job["outputDir"], job["name"] + RECORD)


def own_file(name, rel):
    """Whether rel (relative to DIR) is one of NAME's files, so that it may be replaced or deleted."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return False
    return rel.startswith(name + ".")


def settings_change(old, new):
    """What differs between two settings records, in words."""
    old = old if isinstance(old, dict) else {}
    said = []
    if old.get("pipelineSha256") != new.get("pipelineSha256"):
        said.append("the pipeline's text changed")
    if old.get("sets") != new.get("sets"):
        said.append("--set %s → %s" % (" ".join(old.get("sets") or []) or "(none)", " ".join(new.get("sets") or []) or "(none)"))
    if old.get("outputExt") != new.get("outputExt"):
        said.append("output extension %s → %s" % (old.get("outputExt"), new.get("outputExt")))
    fo, fn = old.get("framegraph") or {}, new.get("framegraph") or {}
    if fo.get("version") != fn.get("version"):
        said.append("framegraph %s → %s" % (fo.get("version"), fn.get("version")))
    elif fo.get("sha256") != fn.get("sha256"):
        said.append("another framegraph binary (SHA-256 %s… → %s…)" % ((fo.get("sha256") or "?")[:12], (fn.get("sha256") or "?")[:12]))
    for key in sorted(set(old) | set(new)):
        if key not in ("pipelineSha256", "sets", "outputExt", "framegraph") and old.get(key) != new.get(key):
            said.append("%s %s → %s" % (key, old.get(key), new.get(key)))
    return "settings changed: " + ("; ".join(said) if said else "an earlier record format")


def why_not_done(job, record):
    """(why, fingerprint): None when the record says NAME's files are all in place and were made from
    this input's content with these settings, else the reason in words ("new" when nothing was made
    before); fingerprint, when the input was hashed again and found unchanged, is a trusted stat
    fingerprint to store in the record (so the next run need not read it)."""
    out_dir, name = job["outputDir"], job["name"]
    if not isinstance(record, dict):
        earlier = [f for f in (job.get("output"), job["stats"]) if f and os.path.exists(os.path.join(out_dir, f))]
        if earlier:
            return "no record of what made %s (an older framegraph-batch, or made by hand)" % earlier[0], None
        return "new", None
    if record.get("settingsKey") != job["settingsKey"]:
        return settings_change(record.get("settings"), job["settings"]), None
    sizes = record.get("files") or {}
    for rel in sorted(sizes):
        try:
            size = os.stat(os.path.join(out_dir, rel)).st_size
        except OSError:
            return "%s is missing" % rel, None
        if size != sizes[rel]:
            return "%s changed since it was made (%d bytes, made %d)" % (rel, size, sizes[rel]), None
    if finished_stats(os.path.join(out_dir, job["stats"])) is None:
        return "its stats record no finished run", None
    identity = record.get("inputIdentity") or {}
    try:
        st = os.stat(job["input"])
    except OSError as e:
        return "cannot read the input: %s" % (e.strerror or e), None
    if record.get("inputStat") == stat_fingerprint(st):
        return None, None
    if st.st_size != identity.get("size"):
        return "the input changed (%d bytes, made from %s)" % (st.st_size, identity.get("size")), None
    try:
        now, fingerprint, trusted = hash_input(job["input"])
    except (OSError, FramegraphFailed) as e:
        return "cannot read the input: %s" % e, None
    if now["sha256"] != identity.get("sha256"):
        return "the input changed (its SHA-256 differs)", None
    return None, (fingerprint if trusted else None)


def _die_with_parent():
    # The framegraph child is killed when the worker running this task dies (a lost task), so a
    # retry never races an orphan. Linux: prctl(PR_SET_PDEATHSIG, SIGKILL).
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except OSError:
        pass


class OutputProblem(Exception):
    """The run ended normally but its files cannot be placed as promised (not retried)."""


def collect_outputs(job):
    """{path in the scratch folder: path in DIR} for every file the run wrote. The files framegraph
    was told to write keep their names; any other file the pipeline wrote (a second sink, relative to
    the working folder) goes below NAME.files/ with the path it was written at."""
    scratch, name = job["scratch"], job["name"]
    written = []
    for root, dirs, files in os.walk(scratch):
        dirs.sort()
        for f in sorted(files):
            written.append(os.path.relpath(os.path.join(root, f), scratch).replace(os.sep, "/"))
    mapping = {}
    for rel in written:
        if rel.startswith(name + FILES + "/"):  # an image sequence framegraph was told to write there
            mapping[rel] = rel
        elif rel in (job.get("output"), job["stats"], job.get("results")):
            mapping[rel] = rel
        else:
            mapping[rel] = name + FILES + "/" + rel
    if len(set(mapping.values())) != len(mapping):
        raise OutputProblem("two files of the run would both be %s" % sorted(mapping.values()))
    for want in (job["stats"], job.get("results")):
        if want and want not in mapping:
            raise OutputProblem("framegraph ended normally but did not write %s" % want)
    output = job.get("output")
    if output and SEQUENCE.search(output):
        if not any(v.startswith(name + FILES + "/") for v in mapping.values()):
            raise OutputProblem("framegraph ended normally but wrote no frame of %s" % output)
    elif output and output not in mapping:
        raise OutputProblem("framegraph ended normally but did not write %s" % output)
    return mapping


def commit(job, mapping, record):
    """Moves the run's files into DIR (renames: the scratch folder is inside DIR), deletes the files of
    NAME's earlier record that this run did not write again, and writes the new record last. Killed
    in between, NAME has no record and is processed again."""
    out_dir, name = job["outputDir"], job["name"]
    old = read_json(record_path(job))
    try:
        os.unlink(record_path(job))
    except FileNotFoundError:
        pass
    for src, dst in sorted(mapping.items()):
        target = os.path.join(out_dir, dst)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.replace(os.path.join(job["scratch"], src), target)
    stale = [rel for rel in ((old or {}).get("files") or {}) if rel not in record["files"] and own_file(name, rel)]
    for rel in stale:
        try:
            os.unlink(os.path.join(out_dir, rel))
        except OSError:
            pass
    files_dir = os.path.join(out_dir, name + FILES)
    if os.path.isdir(files_dir):
        for root, dirs, files in os.walk(files_dir, topdown=False):  # folders the stale files leave empty
            if not dirs and not files:
                try:
                    os.rmdir(root)
                except OSError:
                    pass
    write_atomically(record_path(job), json.dumps(record, indent=2) + "\n")
    shutil.rmtree(job["scratch"], ignore_errors=True)


def run_one(job):
    """One input, one attempt. Returns a result dict; raises FramegraphFailed (retried) on errors."""
    import ray  # on the worker

    name, out_dir = job["name"], job["outputDir"]
    marks = os.path.join(out_dir, ATTEMPTS)
    os.makedirs(marks, exist_ok=True)
    if not job.get("force"):
        record = read_json(record_path(job))
        if isinstance(record, dict) and why_not_done(job, record)[0] is None:
            # finished meanwhile (another batch, or a retry of a task lost after its commit)
            return {"name": name, "record": record, "seconds": 0.0, "node": None, "alreadyDone": True}
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
    errors_file = os.path.join(marks, name + ".errors")

    def fail(message, retry):
        with open(errors_file, "a") as f:
            f.write(json.dumps({"attempt": attempt, "error": message}) + "\n")
        if retry:
            raise FramegraphFailed(message)
        return {"name": name, "refused": message, "seconds": seconds, "node": node, "attempt": attempt}

    seconds = 0.0
    scratch = job["scratch"]
    try:
        # A fresh working folder: what an earlier attempt left (a killed one's temporary files) goes.
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
        try:
            identity, fingerprint, trusted = hash_input(job["input"])
        except OSError as e:
            return fail("attempt %d: cannot read the input: %s" % (attempt, e.strerror or e), retry=False)
        except FramegraphFailed as e:
            return fail("attempt %d: %s" % (attempt, e), retry=True)
        cmd = [job["framegraph"], "run", job["pipeline"], "--input", job["input"], "--stats", job["stats"],
               "--mode", "offline", "--quiet"]
        if job.get("output"):
            cmd += ["--output", job["output"]]
        if job.get("results"):
            cmd += ["--results", job["results"]]
        for s in job["sets"]:
            cmd += ["--set", s]
        env = dict(os.environ)
        if job.get("libPath"):
            env["LD_LIBRARY_PATH"] = job["libPath"] + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        if job.get("modelsPath"):  # --ship: the staged models, now that the working folder is the scratch one
            models = [job["modelsPath"], os.path.join(job["modelsPath"], "cache")]
            env["FRAMEGRAPH_MODELS"] = ":".join(models + ([env["FRAMEGRAPH_MODELS"]] if env.get("FRAMEGRAPH_MODELS") else []))
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        seconds = time.monotonic() - start
        stats = finished_stats(os.path.join(scratch, job["stats"]))
        if proc.returncode == 0 and stats is not None:
            try:
                if stat_fingerprint(os.stat(job["input"])) != fingerprint:
                    return fail("attempt %d: the input changed while it was processed" % attempt, retry=True)
            except OSError as e:
                return fail("attempt %d: the input went away while it was processed: %s" % (attempt, e.strerror or e), retry=True)
            try:
                mapping = collect_outputs(job)
            except OutputProblem as e:
                return fail("attempt %d: %s" % (attempt, e), retry=False)
            earlier = []
            try:
                with open(errors_file) as f:
                    earlier = [json.loads(line)["error"] for line in f if line.strip()]
            except (OSError, ValueError, KeyError):
                pass
            files = {dst: os.stat(os.path.join(scratch, src)).st_size for src, dst in mapping.items()}
            record = {
                "format": RECORD_FORMAT, "name": name, "input": job["input"],
                "inputIdentity": identity, "inputStat": fingerprint if trusted else None,
                "settingsKey": job["settingsKey"], "settings": job["settings"],
                "files": dict(sorted(files.items())), "output": job.get("output"), "results": job.get("results"),
                "stats": job["stats"],
                "made": {"finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": socket.gethostname(), "node": node,
                         "attempt": attempt, "seconds": round(seconds, 3), "earlierErrors": earlier},
            }
            commit(job, mapping, record)
            return {"name": name, "record": record, "stats": stats, "seconds": seconds, "node": node, "attempt": attempt}
    finally:
        try:
            os.unlink(running)
        except OSError:
            pass
    lines = [l for l in proc.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
    if proc.returncode < 0:
        reason = "framegraph killed by signal %d" % -proc.returncode
    elif proc.returncode == 0:
        reason = "framegraph exit status 0 but its stats record no finished run"
    else:
        reason = "framegraph exit status %d" % proc.returncode
    return fail("attempt %d: %s%s" % (attempt, reason, (": " + lines[-1]) if lines else ""), retry=proc.returncode != 2)


# ----------------------------------------------------------------------------------------------
# The driver.

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="framegraph-batch",
        description="Run a FrameGraph pipeline over many video files, one Ray task per file.",
        epilog="Details: docs/SCALE.md")
    p.add_argument("pipeline", help="the pipeline file (.fg)")
    p.add_argument("inputs", nargs="+", help="input files, globs (quote them for recursive **), or folders")
    p.add_argument("--output-dir", required=True,
                   help="where NAME.mp4, NAME.jsonl (a pipeline that finds things), NAME.stats.json and NAME.done.json go")
    p.add_argument("--address", help="an existing Ray cluster (host:port or 'auto'); default: start a local one")
    p.add_argument("--retries", type=int, default=3, help="retries of a failed or lost task (default 3)")
    p.add_argument("--cpus-per-task", type=float,
                   help="CPUs Ray reserves per task (default: the largest threads= in the pipeline, else 1)")
    p.add_argument("--framegraph", default=DEFAULT_FRAMEGRAPH,
                   help="the framegraph binary, at the same path on every node (default: this repository's .build/release/framegraph)")
    p.add_argument("--set", action="append", default=[], metavar="NODE.KEY=VALUE", help="a node option (repeatable)")
    p.add_argument("--output-ext",
                   help="the outputs' extension (default: that of the pipeline's first encode/png sink, else .mp4)")
    p.add_argument("--force", action="store_true",
                   help="process every input, even one whose record says it was made from the same input with the same settings")
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


def input_names(inputs):
    """NAME of each input: its file name without the extension; inputs whose names are the same
    (ignoring case, as some shared file systems do) each get "-" and the first 8 hex digits of the
    SHA-256 of the input's absolute path (a/clip.mp4 → clip-1a2b3c4d), the same in every run."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in inputs]
    count = {}
    for s in stems:
        count[s.casefold()] = count.get(s.casefold(), 0) + 1
    names = [s if count[s.casefold()] == 1 else "%s-%s" % (s, hashlib.sha256(p.encode()).hexdigest()[:8])
             for p, s in zip(inputs, stems)]
    seen = {}
    for p, n in zip(inputs, names):
        if n.casefold() in seen:  # an input literally named like another's suffixed name
            raise UserError("two inputs would both be named %s: %s and %s (rename one, or run them separately)"
                            % (n, seen[n.casefold()], p))
        seen[n.casefold()] = p
    return names


DECLARATION = re.compile(r"\s*([A-Za-z_][\w-]*)\s*=\s*([A-Za-z_][\w-]*)(.*)$", re.S)


def pipeline_nodes(text, sets):
    """The pipeline's declarations in file order, [(name, type, {key: value})], with --set applied.
    A light reading of the format of docs/PIPELINES.md (framegraph check has the last word): enough
    to find the sinks, the nodes that produce results, and threads=."""
    nodes = []
    for line in text.lstrip("\ufeff").splitlines():
        m = DECLARATION.match(line)
        if not m:
            continue
        lex = shlex.shlex(m.group(3), posix=True)
        lex.whitespace_split = True
        lex.commenters = "#"
        try:
            words = list(lex)
        except ValueError:  # an unclosed quote: framegraph check says where
            words = []
        nodes.append((m.group(1), m.group(2), dict(w.split("=", 1) for w in words if "=" in w)))
    options = {n: o for n, _, o in nodes}
    for s in sets:
        m = re.match(r"([^.=]+)\.([^=]+)=(.*)$", s, re.S)
        if m and m.group(1) in options:
            options[m.group(1)][m.group(2)] = m.group(3)
    return nodes


def pipeline_threads(nodes):
    """The largest explicit threads= of the pipeline's nodes (with --set applied); None if none."""
    values = []
    for _, _, opts in nodes:
        try:
            values.append(int(opts.get("threads", "")))
        except ValueError:
            pass
    values = [v for v in values if v > 0]
    return max(values) if values else None


def pipeline_outputs(nodes):
    """(path of the first encode/png sink, whether results are produced). The first encode/png sink
    is replaced by --output and every results sink by --results; any other sink writes its own path,
    relative to the task's scratch folder, so an absolute path or one that climbs out (..) would be
    written by every input: refused."""
    first = next((n for n in nodes if n[1] in ("encode", "png")), None)
    results = any(t in RESULT_PRODUCERS or t == "results" for _, t, _ in nodes)
    for name, kind, opts in nodes:
        if kind not in SINKS_WITH_PATHS or (first and name == first[0]) or kind == "results":
            continue
        path = opts.get("path", "")
        if os.path.isabs(path) or ".." in path.replace("\\", "/").split("/"):
            raise UserError("the pipeline's %s (%s) writes %s: every input would write that same file; "
                            "give it a relative path (each input's copy then lands in DIR/NAME.files/)" % (name, kind, path))
    return (first[2].get("path") if first else None), results


def framegraph_identity(framegraph):
    """The binary's --version line and its SHA-256."""
    try:
        p = subprocess.run([framegraph, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UserError("cannot run %s --version: %s" % (framegraph, e))
    version = (p.stdout.strip().splitlines() or [""])[-1]
    if p.returncode != 0 or not version:
        raise UserError("%s --version failed (status %d): %s" % (framegraph, p.returncode, p.stderr.strip()[-200:]))
    return {"version": version, "sha256": sha256_file(framegraph)}


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
    def __init__(self, total, reused, interval):
        self.tty = sys.stderr.isatty()
        self.total, self.reused = total, reused
        self.interval = interval if interval else (1.0 if self.tty else 5.0)
        self.last = 0.0
        self.start = time.monotonic()

    def show(self, done, failed, running, frames, force=False):
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        elapsed = now - self.start
        queued = self.total - self.reused - done - failed - running
        line = ("framegraph-batch: %5.1f s  %d/%d done, %d running, %d queued, %d failed, %d reused  %d frames  %.1f fps"
                % (elapsed, done, self.total, running, max(queued, 0), failed, self.reused, frames,
                   frames / elapsed if elapsed > 0 else 0.0))
        if self.tty:
            sys.stderr.write("\r\033[K" + line + ("\n" if force else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def say(line):
    sys.stderr.write("framegraph-batch: " + line + "\n")
    sys.stderr.flush()


def entry_from_stats(entry, stats):
    entry["frames"] = int(stats.get("framesOut", 0))
    entry["framesIn"] = int(stats.get("framesIn", 0))
    entry["fps"] = stats.get("achievedFps")
    entry["dropped"] = int(sum(int(stats.get(k, 0) or 0) for k in DROP_KEYS))
    entry["cpuSeconds"] = stats.get("cpuSeconds")
    entry["elapsedSeconds"] = stats.get("elapsedSeconds")


def entry_from_record(entry, record):
    """What made the input's files, from its record: when, where, in how long, from which input."""
    entry["made"] = dict(record.get("made") or {}, input=record.get("input"), inputSha256=(record.get("inputIdentity") or {}).get("sha256"))
    entry["files"] = sorted(record.get("files") or {})


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
    out.write("total: %d inputs, %d ok, %d failed, %d reused; %d frames in %.1f s: %.1f clips/min, %.1f frames/s (%s)\n"
              % (t["inputs"], t["ok"], t["failed"], t["reused"], t["frames"], t["wallSeconds"],
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
    ext = args.output_ext
    if ext is not None:
        ext = ext if ext.startswith(".") else "." + ext
        if len(ext) < 2 or "/" in ext or ext.lower() in (".json", ".jsonl", ".stats.json", ".done.json", FILES):
            raise UserError("--output-ext %s: give a video or image extension (.mp4, .mkv, .png, …)" % args.output_ext)
    inputs = expand_inputs(args.inputs)
    if not inputs:
        raise UserError("no inputs")
    pipeline = os.path.abspath(args.pipeline)
    framegraph = os.path.abspath(args.framegraph)
    out_dir = os.path.abspath(args.output_dir)
    summary_path = os.path.abspath(args.summary) if args.summary else os.path.join(out_dir, "summary.json")

    with open(pipeline, "rb") as f:
        pipeline_bytes = f.read()
    nodes = pipeline_nodes(pipeline_bytes.decode("utf-8", "replace"), args.set)
    sink_path, produces_results = pipeline_outputs(nodes)
    if sink_path is not None:
        sink_stem, sink_ext = os.path.splitext(os.path.basename(sink_path))
        ext = ext or sink_ext or ".mp4"
        sequence = SEQUENCE.search(sink_stem)
    else:
        ext, sequence = None, None
    # What makes an input's files what they are, besides the input: compared with each input's
    # record (DIR/NAME.done.json) to tell whether its files can be reused.
    settings = {"pipelineSha256": hashlib.sha256(pipeline_bytes).hexdigest(), "sets": list(args.set),
                "outputExt": ext, "mode": "offline", "framegraph": framegraph_identity(framegraph)}
    settings_key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()

    jobs = []
    for inp, name in zip(inputs, input_names(inputs)):
        if sink_path is None:
            output = None
        elif sequence:  # an image sequence: its frames in NAME.files/, named and numbered as the pipeline has them
            output = name + FILES + "/" + sink_stem + ext
        else:
            output = name + ext
        jobs.append({"name": name, "input": inp, "output": output, "results": None, "stats": name + ".stats.json",
                     "outputDir": out_dir, "scratch": os.path.join(out_dir, SCRATCH, name), "pipeline": pipeline,
                     "framegraph": framegraph, "sets": list(args.set), "settings": settings,
                     "settingsKey": settings_key, "force": args.force})

    cpus = args.cpus_per_task or pipeline_threads(nodes) or 1
    os.makedirs(out_dir, exist_ok=True)
    entries = {}
    todo = []
    reasons = {}
    for job in jobs:
        entry = {"input": job["input"], "name": job["name"],
                 "output": os.path.join(out_dir, job["output"]) if job["output"] else None, "results": None,
                 "stats": os.path.join(out_dir, job["stats"]), "record": record_path(job),
                 "status": None, "reused": False, "why": None, "errors": [], "attempts": 0, "seconds": None, "node": None}
        entries[job["name"]] = entry
        record = read_json(record_path(job))
        if args.force:
            why, fingerprint = "--force", None
        else:
            why, fingerprint = why_not_done(job, record)
        if why is None:
            if fingerprint is not None:  # hashed again (the stat had changed: a touch, a copy): store the new stat
                record["inputStat"] = fingerprint
                write_atomically(record_path(job), json.dumps(record, indent=2) + "\n")
            entry["status"] = "reused"
            entry["reused"] = True
            entry["results"] = os.path.join(out_dir, record["results"]) if record.get("results") else None
            entry_from_record(entry, record)
            entry_from_stats(entry, read_json(os.path.join(out_dir, job["stats"])) or {})
        else:
            entry["why"] = why
            todo.append(job)
            if why != "new":
                reasons.setdefault(why, []).append(job["name"])
    reused = len(jobs) - len(todo)
    if reused:
        say("reusing %d of %d inputs: made from the same input content with the same settings (--force processes them again)"
            % (reused, len(jobs)))
    for why, names in reasons.items():
        say("processing %d input%s again (%s): %s" % (len(names), "" if len(names) == 1 else "s",
                                                     ", ".join(names[:5]) + (", …" if len(names) > 5 else ""), why))

    summary = {"pipeline": args.pipeline, "outputDir": args.output_dir, "sets": args.set,
               "settings": settings, "settingsKey": settings_key, "force": args.force,
               "address": args.address, "cpusPerTask": cpus, "retries": args.retries, "cluster": "nothing to do",
               "inputs": [entries[j["name"]] for j in jobs]}
    start = time.monotonic()
    progress = Progress(len(jobs), reused, args.progress_interval)
    frames_done = [0]
    done = failed = 0
    interrupted = False
    if todo:
        # The pipeline and options are checked here (framegraph check), not 10,000 times on the
        # workers; with nothing to do, framegraph is not run at all. An error that names the input is
        # that input's (its task fails alone): the next input is tried, up to three. Its listing says
        # whether a node produces results (→ results), so that --results is given.
        for job in todo[:3]:
            check = subprocess.run([framegraph, "check", pipeline, "--input", job["input"]]
                                   + (["--output", os.path.join(out_dir, job["output"])] if job["output"] else [])
                                   + sum((["--set", s] for s in args.set), []),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if check.returncode == 0:
                if re.search(r"(→|->) results\b", check.stdout):
                    produces_results = True
                break
            lines = [l for l in check.stderr.splitlines() if l.strip()]
            message = lines[-1] if lines else "framegraph check failed (status %d)" % check.returncode
            if job["input"] not in message:
                raise UserError(message)
        if produces_results:
            for job in todo:
                job["results"] = job["name"] + ".jsonl"
                entries[job["name"]]["results"] = os.path.join(out_dir, job["results"])
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
                job["modelsPath"] = "models"
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
        nodes_alive = [n for n in ray.nodes() if n.get("Alive")]
        total_cpus = ray.cluster_resources().get("CPU", 0)
        summary["cluster"] = "%d node%s, %g CPUs" % (len(nodes_alive), "" if len(nodes_alive) == 1 else "s", total_cpus)
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
                info = read_json(os.path.join(marks, n)) or {}
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
                        stats = result.get("stats") or read_json(os.path.join(out_dir, job["stats"])) or {}
                        entry_from_stats(entry, stats)
                        entry_from_record(entry, result["record"])
                        entry["results"] = (os.path.join(out_dir, result["record"]["results"])
                                            if result["record"].get("results") else None)
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
                        # status 1 still writes stats (failure set); they stay in the scratch folder
                        stats = read_json(os.path.join(job["scratch"], job["stats"]))
                        if isinstance(stats, dict):
                            entry_from_stats(entry, stats)
                            frames_done[0] += entry["frames"]
                        entry["scratch"] = job["scratch"]
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
        try:
            os.rmdir(os.path.join(out_dir, SCRATCH))  # empty unless an input failed (its folder is kept)
        except OSError:
            pass

    if not todo:
        wall = 0.0
    processed = [e for e in summary["inputs"] if e["status"] in ("ok", "failed") and "frames" in e]
    frames = sum(e["frames"] for e in processed)
    ok = sum(1 for e in summary["inputs"] if e["status"] == "ok")
    summary["totals"] = {
        "inputs": len(jobs), "ok": ok, "failed": failed, "reused": reused,
        "frames": frames,
        "framesIn": sum(e["framesIn"] for e in processed),
        "dropped": sum(e["dropped"] for e in processed),
        "cpuSeconds": round(sum(e.get("cpuSeconds") or 0 for e in processed), 3),
        "framesReused": sum(e.get("frames", 0) for e in summary["inputs"] if e["status"] == "reused"),
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
    # With --ship, Ray runs the task in the unpacked working_dir: the binary, pipeline, libraries and
    # models are relative to it (the task itself then works in its scratch folder).
    job = dict(job)
    for key in ("framegraph", "pipeline", "libPath", "modelsPath"):
        job[key] = os.path.abspath(job[key])
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
