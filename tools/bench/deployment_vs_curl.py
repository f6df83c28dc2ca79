#!/usr/bin/env python3
"""Benchmark of FrameGraph's model deployment against curl, both sides printed from one interleaved run.

    .venv-tools/bin/python tools/bench/deployment_vs_curl.py [--rounds 5] [--pin] [--keep]

Needs a Python with fgtools installed (.venv-tools: tools/setup-python.sh), the built CLI (.build/release/framegraph), curl, nginx and openssl, and
models/cache/efficientnet_lite0.onnx (about 18.5 MB). Run from anywhere; it works in a temporary
folder (deleted at the end unless --keep) and starts one nginx through tools/deploy/test_server.py:
the plain deploy tree at /, the encrypted one at /alt/enc/ (the same static location type), the key
service at /keys/. Both sides talk to the same nginx over the same HTTPS (TLS 1.2/1.3, HTTP/1.1,
the harness's throwaway CA).

Part 1, download throughput (rounds interleaved A B A B ...):
  A  curl --cacert CA -s -o /dev/null URL          (URL: the archive file in the tree)
  A' curl --cacert CA -s -o FILE URL && sha256sum FILE   (the same work as a pull: to disk, hashed)
  B  framegraph models pull FlowerModels --machine-config M --quiet, with an empty cache each round
     (the cache folder is deleted before the round). B does more than A: it fetches index.json and
     index.json.sig, verifies the Ed25519 signature, writes the archive to a partial file while
     hashing it with SHA-256 as the bytes arrive, reads the archive's own manifest and renames it
     into place; curl writes to /dev/null.
  Printed: per round and median, MB/s of each over the archive's byte count (MB = 10^6 bytes, wall
  time of the whole command, process start included) and the ratio framegraph/curl. The archive
  request of each side is checked in nginx's access.log (status 200, every byte sent); nginx's own
  request time for it is printed too, and, for scale, the wall time of `framegraph models list`
  with the same config (the CLI's start-up, no network), measured in the same rounds.

Part 2, model load of an ENCRYPTED archive of the same model (team key; same rounds):
  local  framegraph run pipelines/label-video.fg --set labels.model=models/cache/efficientnet_lite0.onnx
  cold   the same with labels.model=collection:FlowerModels/FlowerClassifier and an empty cache:
         downloads the collection, fetches the team key from the key service, decrypts in memory,
         compiles and runs
  warm   the same again, cache and key store kept
  (each with --duration 0.2 --quiet --output OUT.mp4 --set log.path=OUT.jsonl --stats S.json;
  --duration counts wall seconds, so what differs between the three is the start-up.)
  Printed: per round and median wall seconds of each, warm - local and cold - warm, the
  `modelSource` of the node `labels` from the stats JSON of each kind of run (and the frames it
  processed), and the requests each kind of run made in the first round (from access.log).

The first line says which machine, CPU and pinning were used. --pin runs both sides (curl and
framegraph) under `taskset -c 0`; nginx is not pinned either way. Without --pin nothing is pinned
by this script (an affinity inherited from the caller is shown in the header).
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from fgtools import deploy_server as test_server  # the nginx harness (tools/deploy/test_server.py's code)
from fgtools.hostinfo import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

FRAMEGRAPH = os.path.join(REPO, ".build", "release", "framegraph")
MODEL = "models/cache/efficientnet_lite0.onnx"   # relative to REPO, as a pipeline option
PIPELINE = "pipelines/label-video.fg"
COLLECTION, ENTRY = "FlowerModels", "FlowerClassifier"
TOKEN = "bench-token.deploy_vs~curl"


class Failed(Exception):
    pass


def run(cmd, pin=False, cwd=REPO):
    """Run a command (pinned to CPU 0 with --pin); returns (wall seconds, stdout). Fails loudly."""
    full = (["taskset", "-c", "0"] if pin else []) + cmd
    t0 = time.perf_counter()
    p = subprocess.run(full, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise Failed(f"exit status {p.returncode}: {' '.join(full)}\n{p.stdout}{p.stderr}")
    return wall, p.stdout


def fg(*args):
    """A setup step with the CLI (not timed)."""
    return run([FRAMEGRAPH, *args])[1]


def first_line(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return p.stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def header(pin):
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    nginx = first_line([shutil.which("nginx") or "/usr/sbin/nginx", "-v"]).replace("nginx version: ", "")
    curl = " ".join(first_line(["curl", "--version"]).split()[:2])
    cpus = ",".join(map(str, affinity)) or "?"
    inherited = (f"this process's inherited affinity, CPU(s) {cpus} of {os.cpu_count()}, applies to nginx and, unless --pin, to both sides"
                 if affinity and len(affinity) < (os.cpu_count() or 0) else "no inherited affinity")
    pinning = ("--pin: curl and framegraph under taskset -c 0, nginx not" if pin else "no --pin")
    return (f"machine: {platform.node()}, {cpu_name()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
            f"pinning: {pinning}; {inherited}; {nginx}, {curl}")


class AccessLog:
    """Reads the lines nginx appended to access.log since the last call."""

    LINE = re.compile(r'"(\S+) (\S+) [^"]*" (\d+) (\d+) range="[^"]*" ([\d.]+)')

    def __init__(self, path):
        self.path, self.offset = path, 0

    def new(self):
        try:
            with open(self.path) as f:
                f.seek(self.offset)
                text = f.read()
                self.offset = f.tell()
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            m = self.LINE.search(line)
            if m:
                out.append((m.group(2), int(m.group(3)), int(m.group(4)), float(m.group(5))))
        return out


def check_archive_sent(requests, archive_path, size, who):
    """The archive was requested once, answered 200 and sent whole; returns nginx's request time."""
    hits = [r for r in requests if r[0].endswith(archive_path)]
    if len(hits) != 1 or hits[0][1] != 200 or hits[0][2] != size:
        raise Failed(f"{who}: expected one 200 for {archive_path} with {size} bytes in access.log, saw {hits or requests}")
    return hits[0][3]


def archive_path_in(tree):
    found = [os.path.relpath(os.path.join(d, f), tree) for d, _, files in os.walk(tree)
             for f in files if f.endswith(".fgarchive")]
    if len(found) != 1:
        raise Failed(f"expected one archive in {tree}, found {found}")
    return found[0]


def publish(tree, archive, signer):
    os.makedirs(tree)
    fg("deploy", "collection", tree, COLLECTION, "--sign", signer)
    fg("deploy", "deployment", tree, COLLECTION, "spring", f"{ENTRY}={archive}", "--sign", signer)
    return archive_path_in(tree)


def write_config(path, server, public_key, ca, cache, key_service=None):
    config = {"format": "framegraph-machine-1", "server": server, "publisherKey": public_key,
              "caFile": ca, "cacheDir": cache}
    if key_service:
        config["keyService"] = key_service
    with open(path, "w") as f:
        json.dump(config, f, indent=2)


def fmt_row(cells, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--pin", action="store_true", help="run curl and framegraph under taskset -c 0")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    for path, what in ((FRAMEGRAPH, "the built CLI (swift build -c release)"), (os.path.join(REPO, MODEL), "the model (the setup makes it)")):
        if not os.path.exists(path):
            sys.exit(f"{path}: missing: {what}")
    if not shutil.which("curl"):
        sys.exit("curl not found")
    if a.pin and not shutil.which("taskset"):
        sys.exit("--pin needs taskset")

    print(header(a.pin), flush=True)
    work = tempfile.mkdtemp(prefix="fg-deploy-bench-")
    server = None
    try:
        # ---- publishing (not timed)
        signer, team = os.path.join(work, "publisher.fgsign"), os.path.join(work, "team.fgkey")
        fg("deploy", "key", "new", "-o", signer)
        with open(signer) as f:
            public_key = json.load(f)["publicKey"]
        fg("model", "key", "new", "-o", team)
        with open(team) as f:
            key_id = json.load(f)["id"]
        keys = os.path.join(work, "keys")
        os.makedirs(keys)
        shutil.copyfile(team, os.path.join(keys, key_id))

        plain, enc = os.path.join(work, "plain.fgarchive"), os.path.join(work, "enc.fgarchive")
        fg("model", "archive", MODEL, "--name", ENTRY, "--version", "1", "-o", plain)
        fg("model", "archive", MODEL, "--name", ENTRY, "--version", "1", "--encrypt", team, "-o", enc)
        plain_tree, enc_tree = os.path.join(work, "tree"), os.path.join(work, "tree-enc")
        plain_rel = publish(plain_tree, plain, signer)
        publish(enc_tree, enc, signer)
        size = os.path.getsize(os.path.join(plain_tree, plain_rel))

        server = test_server.start(plain_tree, keys=keys, token=TOKEN, work=os.path.join(work, "nginx"),
                                   aliases=[("enc", enc_tree)])
        key_service = {"url": server.https + "keys/", "token": TOKEN}
        pull_cache, run_cache = os.path.join(work, "cache-pull"), os.path.join(work, "cache-run")
        pull_config, run_config = os.path.join(work, "machine-pull.json"), os.path.join(work, "machine-run.json")
        write_config(pull_config, server.https, public_key, server.ca, pull_cache, key_service)
        write_config(run_config, server.url("/alt/enc/"), public_key, server.ca, run_cache, key_service)
        url = server.https + plain_rel
        log = AccessLog(server.access_log)

        print(f"archive: {plain_rel} ({size} bytes, {size / 1e6:.2f} MB; encrypted one {os.path.getsize(enc)} bytes), "
              f"nginx {server.https}, {a.rounds} rounds", flush=True)

        out = os.path.join(work, "out")
        os.makedirs(out)

        def label_run(kind, model):
            stats = os.path.join(out, f"{kind}.json")
            wall, _ = run([FRAMEGRAPH, "run", PIPELINE, "--machine-config", run_config, "--set", f"labels.model={model}",
                           "--duration", "0.2", "--quiet", "--output", os.path.join(out, f"{kind}.mp4"),
                           "--set", f"log.path={os.path.join(out, kind + '.jsonl')}", "--stats", stats], pin=a.pin)
            with open(stats) as f:
                nodes = json.load(f).get("nodes", [])
            node = next((n for n in nodes if n.get("name") == "labels"), {})
            return wall, node.get("modelSource"), node.get("processed")

        curl_rates, fg_rates, ratios, file_rates, file_ratios = [], [], [], [], []
        curl_file = os.path.join(work, "curl-download.fgarchive")
        loads = {"local": [], "cold": [], "warm": []}
        sources, frames, pull_requests, run_requests = {}, {}, None, {}
        nginx_times, starts = {"curl": [], "framegraph": []}, []
        print("\nround  curl MB/s  curl+file+sha MB/s  framegraph MB/s  fg/curl  fg/(curl+file+sha)  |  local s  cold s  warm s", flush=True)
        for r in range(1, a.rounds + 1):
            # A: curl
            log.new()
            t_curl, _ = run(["curl", "--cacert", server.ca, "-s", "-o", "/dev/null", url], pin=a.pin)
            nginx_times["curl"].append(check_archive_sent(log.new(), plain_rel, size, "curl"))
            # A': curl to a file, then sha256sum of it: the same work as a pull (download to disk, hash)
            if os.path.exists(curl_file):
                os.unlink(curl_file)
            t_file, _ = run(["sh", "-c", 'curl --cacert "$1" -s -o "$2" "$3" && sha256sum "$2" >/dev/null', "sh", server.ca, curl_file, url],
                            pin=a.pin)
            log.new()
            # B: framegraph models pull, empty cache
            shutil.rmtree(pull_cache, ignore_errors=True)
            t_fg, _ = run([FRAMEGRAPH, "models", "pull", COLLECTION, "--machine-config", pull_config, "--quiet"], pin=a.pin)
            requests = log.new()
            nginx_times["framegraph"].append(check_archive_sent(requests, plain_rel, size, "framegraph models pull"))
            pull_requests = pull_requests or requests
            # the CLI's own start-up with the same machine config and no network, for scale
            starts.append(run([FRAMEGRAPH, "models", "list", "--machine-config", pull_config], pin=a.pin)[0])
            # Part 2 in the same round: local file, then cold (empty cache and key store), then warm.
            row = {}
            for kind in ("local", "cold", "warm"):
                if kind == "cold":
                    shutil.rmtree(run_cache, ignore_errors=True)
                model = MODEL if kind == "local" else f"collection:{COLLECTION}/{ENTRY}"
                row[kind], sources[kind], frames[kind] = label_run(kind, model)
                loads[kind].append(row[kind])
                run_requests.setdefault(kind, log.new())
            c_rate, f_rate, cf_rate = size / 1e6 / t_curl, size / 1e6 / t_fg, size / 1e6 / t_file
            curl_rates.append(c_rate)
            fg_rates.append(f_rate)
            file_rates.append(cf_rate)
            ratios.append(f_rate / c_rate)
            file_ratios.append(f_rate / cf_rate)
            print(f"{r:5d}  {c_rate:9.1f}  {cf_rate:18.1f}  {f_rate:15.1f}  {f_rate / c_rate:7.2f}  {f_rate / cf_rate:18.2f}  |  "
                  f"{row['local']:7.3f}  {row['cold']:6.3f}  {row['warm']:6.3f}", flush=True)

        med = statistics.median
        print(f"{'median':>5}  {med(curl_rates):9.1f}  {med(file_rates):18.1f}  {med(fg_rates):15.1f}  {med(ratios):7.2f}  {med(file_ratios):18.2f}  |  "
              f"{med(loads['local']):7.3f}  {med(loads['cold']):6.3f}  {med(loads['warm']):6.3f}")

        print(f"\n1. download of the {size}-byte archive from the same nginx over the same TLS (wall time, process start included):")
        print(f"   curl {med(curl_rates):.1f} MB/s, framegraph models pull {med(fg_rates):.1f} MB/s: framegraph/curl {med(ratios):.2f} (median of per-round ratios)")
        print(f"   curl to a file + sha256sum {med(file_rates):.1f} MB/s: framegraph/(curl+file+sha) {med(file_ratios):.2f}")
        print("   framegraph's pull also fetches index.json + index.json.sig, verifies the Ed25519 signature, writes the")
        print("   archive to a partial file while hashing it with SHA-256, reads the archive's manifest and renames it")
        print("   into place; curl writes to /dev/null.")
        print(f"   nginx's request time for the archive (median): curl {med(nginx_times['curl']):.3f} s, "
              f"framegraph {med(nginx_times['framegraph']):.3f} s; wall: curl {size / 1e6 / med(curl_rates):.3f} s, "
              f"framegraph {size / 1e6 / med(fg_rates):.3f} s")
        print(f"   for scale, framegraph's start-up alone (`framegraph models list`, same config, no network): {med(starts):.3f} s median")
        if pull_requests:
            print("   requests of the first pull (nginx access.log: path, status, bytes sent, nginx's request time s):")
            for path, status, sent, t in pull_requests:
                print(f"     {path} {status} {sent} {t:.3f}")
        print("\n2. load of the encrypted archive (framegraph run, --duration 0.2, wall time, median):")
        print(f"   local file {med(loads['local']):.3f} s, warm cache {med(loads['warm']):.3f} s, cold cache {med(loads['cold']):.3f} s")
        print(f"   warm - local = {med(loads['warm']) - med(loads['local']):+.3f} s (median difference per round "
              f"{med([w - l for w, l in zip(loads['warm'], loads['local'])]):+.3f} s)")
        print(f"   cold - warm  = {med(loads['cold']) - med(loads['warm']):+.3f} s (median difference per round "
              f"{med([c - w for c, w in zip(loads['cold'], loads['warm'])]):+.3f} s)")
        print("   cold = download collection + fetch team key + decrypt in memory + compile + run; warm = cached archive, stored key")
        for kind in ("local", "cold", "warm"):
            print(f"   stats of the last {kind} run: labels.modelSource = {sources[kind]!r}, frames processed {frames[kind]}")
        print("   requests of the first round's runs (nginx access.log):")
        for kind in ("local", "cold", "warm"):
            reqs = run_requests.get(kind) or []
            print(f"     {kind}: " + (", ".join(f"{p} {st} {n}" for p, st, n, _ in reqs) or "none"))
    except (Failed, test_server.SetupError, test_server.ServerError) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        if server is not None and not server.alive:
            print(server.error_tail(), file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.stop()
        if a.keep:
            print(f"\nwork folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
