"""A throwaway Ray cluster on this machine, and what the tests and benchmarks of framegraph-batch and
framegraph-streams need around it: clips cut from the webcam clips, frame counts, the processes of
this machine, and stopping exactly the cluster's own processes.

Used by tools/cluster/test_cluster.py, tools/cluster/test_streams.py and
tools/bench/cluster_throughput.py, each run with .venv-ray's Python (tools/cluster/setup.sh), whose
`ray` command is taken from beside that interpreter. CLIPS and CLIP_SECONDS may be set before
make_clips().
"""

import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
VENV_BIN = os.path.dirname(os.path.abspath(sys.executable))
RAY = os.path.join(VENV_BIN, "ray")
FRAMEGRAPH = os.path.join(REPO, ".build", "release", "framegraph")
PIPELINE = os.path.join(REPO, "pipelines", "portrait-segment.fg")
BATCH = os.path.join(REPO, "tools", "cluster", "framegraph_batch.py")
CLIPS = 12
CLIP_SECONDS = 4


class Failed(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_env(work):
    """The environment of a throwaway cluster: its own auth token (0600) in `work`, no usage stats."""
    token = os.path.join(work, "auth_token")
    with open(token, "w") as f:
        f.write(secrets.token_hex(32))
    os.chmod(token, 0o600)
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=token, RAY_USAGE_STATS_ENABLED="0",
               PYTHONDONTWRITEBYTECODE="1")
    env["PATH"] = VENV_BIN + os.pathsep + env.get("PATH", "")
    return env


def start_head(ray_dir, env, cpus):
    """`ray start --head` on 127.0.0.1 at a free port, session files in `ray_dir`; its address."""
    port = free_port()
    run([RAY, "start", "--head", "--port=%d" % port, "--num-cpus=%d" % cpus, "--node-ip-address=127.0.0.1",
         "--include-dashboard=false", "--dashboard-port=%d" % free_port(),
         "--dashboard-agent-listen-port=%d" % free_port(), "--temp-dir=%s" % ray_dir, "--disable-usage-stats"], env=env)
    return "127.0.0.1:%d" % port


def add_node(address, ray_dir, env, cpus=1):
    """A further node of the cluster at `address` on this machine."""
    run([RAY, "start", "--address=%s" % address, "--num-cpus=%d" % cpus, "--node-ip-address=127.0.0.1",
         "--dashboard-agent-listen-port=%d" % free_port(), "--temp-dir=%s" % ray_dir], env=env)


def processes():
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open("/proc/%s/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            out[int(p)] = (int(fields[1]), cmd)
        except (OSError, IndexError, ValueError):
            continue
    return out


def descendants(roots, table=None):
    table = table or processes()
    found = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _) in table.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def stop_cluster(ray_dir):
    """Kills this test's Ray processes (and their children) by id; returns how many."""
    killed = set()
    for _ in range(3):
        table = processes()
        roots = {pid for pid, (_, cmd) in table.items() if ray_dir in cmd and pid != os.getpid()}
        pids = descendants(roots, table) - {os.getpid()}
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.5)
    return len(killed)


def run(cmd, env=None, timeout=120, check=True):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise Failed("%s failed (status %d):\n%s" % (" ".join(cmd[:3]), p.returncode, p.stdout[-3000:]))
    return p


def frame_count(path):
    p = run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path], check=False)
    text = p.stdout.strip()
    if p.returncode != 0 or not text.isdigit():
        raise Failed("ffprobe cannot read %s: %s" % (path, text[-300:]))
    return int(text)


def make_clips(folder):
    webcam = sorted(glob.glob(os.path.join(REPO, "..", "shared", "media", "webcam", "*.mkv")))
    portrait = os.path.join(REPO, "samples", "media", "portrait.mp4")
    sources = []
    if len(webcam) >= CLIPS:
        sources = [(f, 0.0) for f in webcam[:CLIPS]]
    elif os.path.isfile(portrait):
        sources = [(portrait, (i * 0.5) % 6) for i in range(CLIPS)]
    else:
        raise Failed("no media to cut clips from: ../shared/media/webcam/*.mkv and samples/media/portrait.mp4 are missing")
    clips = []
    for i, (src, start) in enumerate(sources):
        name = "clip%02d-%s" % (i, os.path.splitext(os.path.basename(src))[0])
        out = os.path.join(folder, name + ".mp4")
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-stream_loop", "-1", "-ss", "%.2f" % start, "-i", src,
             "-t", str(CLIP_SECONDS), "-an", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
             "-threads", "2", out])
        clips.append(out)
    return clips


def listing(folder):
    """Every file under folder (hidden ones too): relative path → (size, mtime_ns)."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            path = os.path.join(root, f)
            st = os.stat(path)
            out[os.path.relpath(path, folder)] = (st.st_size, st.st_mtime_ns)
    return out


def tear_down(ray_dir, work, ok, say):
    """Stops the test's cluster, says whether any Ray process outlived it, and deletes the work
    folder (kept after a failure when KEEP=1)."""
    n = stop_cluster(ray_dir)
    leftover = [pid for pid, (_, cmd) in processes().items() if ray_dir in cmd]
    if leftover:
        say("WARNING: Ray processes still running: %s" % leftover)
    else:
        say("cluster stopped (%d processes killed)" % n)
    if ok or os.environ.get("KEEP") != "1":
        shutil.rmtree(work, ignore_errors=True)
    else:
        say("kept %s for inspection" % work)


def raise_interrupt(signum, frame):
    """A SIGTERM handler that ends the run as Ctrl-C would (so the cluster is stopped on the way out)."""
    raise KeyboardInterrupt
