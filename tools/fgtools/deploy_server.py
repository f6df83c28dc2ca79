#!/usr/bin/env python3
"""A real nginx on 127.0.0.1 for the model deployment tests: HTTPS with a throwaway CA, plain HTTP,
a static deploy tree, and locations that fail in known ways.

    python3 tools/deploy/test_server.py serve --tree TREE --keys KEYS --token TOKEN
            [--work DIR] [--slow-rate BYTES_PER_S] [--cut-after BYTES]
            [--alias NAME=FOLDER ...] [--nginx PATH] [--ignore-stdin]

`serve` makes a CA and a server certificate (openssl CLI, EC P-256), writes an nginx config into the
work folder, starts nginx in the foreground (one process, no user switch) and waits until HTTPS
answers. Then it prints exactly one JSON line on stdout:

    {"https": "https://127.0.0.1:PORT/", "http": "http://127.0.0.1:PORT2/", "ca": "WORK/ca.pem", "pid": NGINX_PID, "work": "WORK"}

and stays until its stdin reaches end of file (or it gets SIGTERM/SIGINT/SIGHUP); then it stops
nginx (SIGQUIT, SIGKILL after 3 s), deletes the work folder if it made it, and exits 0. If nginx dies
on its own it exits 1 with the last lines of error.log on stderr. Problems with the command line or
the machine (no nginx, no openssl, a missing folder) give one line on stderr and exit status 2.

Locations (the same on the HTTPS and the HTTP port):
    /               the TREE folder: exact bytes, Content-Length, Range requests (206)
    /slow/          the TREE, sent at --slow-rate bytes per second (default 262144)
    /fail/          every request answers 500
    /cut/           the TREE, but each response body stops after about --cut-after bytes (default
                    16384) and the connection is closed: the client sees fewer bytes than
                    Content-Length (curl exit 18). Smaller files come whole.
    /keys/ID        the file KEYS/ID, only with `Authorization: Bearer TOKEN` (else 401; 404 if absent)
    /alt/NAME/      the FOLDER of each --alias NAME=FOLDER (e.g. a stale deployment)
    /-/ready        204, what the harness polls while nginx starts

From Python (tests, benchmarks):

    from fgtools import deploy_server     # installed by tools/setup-python.sh
    with deploy_server.start("tree", keys="keys", token="s3cret") as server:
        server.https, server.http, server.ca        # base URLs and the CA file to trust
        server.url("/slow/model.bin")               # https://127.0.0.1:PORT/slow/model.bin

tools/deploy/README.md has the details; tools/deploy/test_server_selftest.sh checks all of it with curl.
"""

import argparse
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

DEFAULT_SLOW_RATE = 262144   # bytes per second on /slow/
DEFAULT_CUT_AFTER = 16384    # bytes the /cut/ upstream sends at full speed before it stalls
CUT_READ_TIMEOUT = "500ms"   # how long /cut/ waits for the stalled upstream before it drops the client
START_TIMEOUT = 10.0         # seconds to wait for HTTPS to answer after nginx is started
STOP_GRACE = 3.0             # seconds between SIGQUIT and SIGKILL when stopping nginx
PORT_ATTEMPTS = 3            # a free port can be taken by someone else before nginx binds it: retry

# Where nginx is looked for when it is not on PATH (Debian puts it in /usr/sbin, which a normal
# user's PATH often lacks; Homebrew in /opt/homebrew/bin or /usr/local/bin).
NGINX_EXTRA_DIRS = ("/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/opt/homebrew/bin")

# A bearer token as RFC 6750 defines it (b64token). Other characters would need quoting in the
# nginx config and in HTTP headers, so they are refused.
TOKEN_RE = re.compile(r"^[A-Za-z0-9._~+/=-]+$")
ALIAS_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


class SetupError(Exception):
    """A problem with the arguments or the machine, found before nginx runs: one line, exit status 2."""


class ServerError(Exception):
    """nginx did not start, or stopped on its own: exit status 1, with the end of error.log."""


# ----------------------------------------------------------------------------------------------
# Checks and small helpers

def find_program(name, explicit=None, extra_dirs=()):
    """The path of a program: `explicit` if given, else PATH, else the extra folders."""
    if explicit:
        path = shutil.which(explicit)
        if not path:
            raise SetupError(f"{explicit}: not found or not executable")
        return path
    path = shutil.which(name) or shutil.which(name, path=os.pathsep.join(extra_dirs))
    if not path:
        raise SetupError(f"{name} not found (install it, or put it on PATH)")
    return path


def config_path(path, what):
    """An absolute path that can be written inside double quotes in nginx.conf.

    nginx expands `$name` in root/alias and gives `\\` and `"` a meaning inside quotes, so paths
    with those characters (or control characters) are refused rather than escaped."""
    path = os.path.abspath(path)
    if any(c in path for c in '"\\$') or any(ord(c) < 32 for c in path):
        raise SetupError(f"{what} {path!r}: the path has a character nginx.conf cannot take (\" \\ $ or a control character)")
    return path


def existing_folder(path, what):
    if not os.path.isdir(path):
        raise SetupError(f"{what} {path!r} is not a folder")
    return config_path(path, what)


def free_ports(count):
    """`count` distinct TCP ports on 127.0.0.1 that were free a moment ago (bound to port 0 by the
    kernel, then released). Someone may take one before nginx binds it: start() retries then."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)  # kept open until all are picked, so the ports differ
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def describe_exit(returncode):
    """'status N' or 'killed by SIGNAME' for a Popen returncode."""
    if returncode is not None and returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"status {returncode}"


def tail(path, lines=20):
    """The last lines of a text file ('' if it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# ----------------------------------------------------------------------------------------------
# 1. The throwaway TLS CA and the server certificate (openssl CLI)

# One small openssl config for both `req` calls, so that nothing depends on the system's
# openssl.cnf. The subjects are given with -subj; the extensions are named with -extensions/-extfile.
OPENSSL_CNF = """\
[req]
distinguished_name = dn
prompt = no
[dn]
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


def make_certificates(work, openssl):
    """Write into `work`: ca.key/ca.pem (a self-signed CA valid for 2 days) and server.key/server.pem
    (signed by it, for IP 127.0.0.1 and DNS localhost). Returns the paths as a dict."""
    paths = {name: os.path.join(work, name)
             for name in ("openssl.cnf", "ca.key", "ca.pem", "server.key", "server.csr", "server.pem")}
    with open(paths["openssl.cnf"], "w") as f:
        f.write(OPENSSL_CNF)

    def run(*args):
        result = subprocess.run([openssl, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            last = result.stdout.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(no output)"]
            raise SetupError(f"openssl {args[0]} failed: {last[0]}")

    def ec_key(path):  # EC P-256: generated in milliseconds, unlike RSA
        run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path)
        os.chmod(path, 0o600)

    ec_key(paths["ca.key"])
    run("req", "-x509", "-new", "-config", paths["openssl.cnf"], "-extensions", "ca_ext",
        "-key", paths["ca.key"], "-subj", "/CN=FrameGraph deploy tests throwaway CA",
        "-sha256", "-days", "2", "-out", paths["ca.pem"])
    ec_key(paths["server.key"])
    run("req", "-new", "-config", paths["openssl.cnf"], "-key", paths["server.key"],
        "-subj", "/CN=localhost", "-out", paths["server.csr"])
    run("x509", "-req", "-in", paths["server.csr"], "-CA", paths["ca.pem"], "-CAkey", paths["ca.key"],
        "-set_serial", "0x" + secrets.token_hex(16), "-sha256", "-days", "2",
        "-extfile", paths["openssl.cnf"], "-extensions", "server_ext", "-out", paths["server.pem"])
    return paths


# ----------------------------------------------------------------------------------------------
# 2. The nginx config

def nginx_config(work, tree, keys, token, aliases, ports, slow_rate, cut_after, certs):
    """nginx.conf for one process that keeps everything (pid, logs, temp files) inside `work`.

    ports: (https, http, cut_upstream). aliases: [(name, folder)]. All paths absolute and checked
    by config_path(); the token matches TOKEN_RE, so nothing here needs escaping."""
    https_port, http_port, cut_port = ports
    tmp = os.path.join(work, "tmp")

    alias_locations = "".join(
        f'        location /alt/{name}/ {{ alias "{folder}/"; }}\n' for name, folder in aliases)

    return f"""\
# Written by tools/deploy/test_server.py for one test run; throwaway.
daemon off;            # stay in the foreground: the harness owns the process
master_process off;    # one process, no worker processes, no user switch (works as root and not)
pid "{work}/nginx.pid";
lock_file "{work}/nginx.lock";
error_log "{work}/error.log" warn;

events {{
    worker_connections 1024;
}}

http {{
    # Everything nginx may write stays in the work folder. (As root, nginx makes these folders
    # owned by "nobody", its default user, although in this one-process mode it never switches.)
    client_body_temp_path "{tmp}/client_body";
    proxy_temp_path "{tmp}/proxy";
    fastcgi_temp_path "{tmp}/fastcgi";
    uwsgi_temp_path "{tmp}/uwsgi";
    scgi_temp_path "{tmp}/scgi";

    # The token is never logged; the Range header is, for tests that check resumes.
    log_format deploy '$remote_addr:$server_port [$time_iso8601] "$request" $status '
                      '$body_bytes_sent range="$http_range" $request_time';
    access_log "{work}/access.log" deploy;

    types {{ }}                              # no MIME guessing: every file is
    default_type application/octet-stream;  # application/octet-stream, sent as is (no gzip)
    sendfile on;
    server_tokens off;
    autoindex off;                          # a folder URL gives 403, never a listing
    keepalive_timeout 10s;

    # The upstream of /cut/: the TREE again, but after the first {cut_after} bytes of each
    # response (headers included) it sends 1 byte per second. /cut/ below stops waiting after
    # {CUT_READ_TIMEOUT} and drops its client in the middle of the body.
    server {{
        listen 127.0.0.1:{cut_port};
        location / {{
            alias "{tree}/";
            limit_rate_after {cut_after};
            limit_rate 1;
        }}
    }}

    # The server the tests talk to: the same locations on the HTTPS and the plain HTTP port.
    server {{
        listen 127.0.0.1:{https_port} ssl;
        listen 127.0.0.1:{http_port};
        ssl_certificate "{certs['server.pem']}";
        ssl_certificate_key "{certs['server.key']}";
        ssl_protocols TLSv1.2 TLSv1.3;

        # What the harness polls to know that nginx is up (not logged).
        location = /-/ready {{
            access_log off;
            return 204;
        }}

        # The deploy tree: exact bytes, Content-Length, ETag, Range (206).
        location / {{
            alias "{tree}/";
        }}

        # The same tree, throttled.
        location /slow/ {{
            alias "{tree}/";
            limit_rate {slow_rate};
        }}

        # Always a server error.
        location /fail/ {{
            return 500;
        }}

        # The same tree through the stalling upstream above. With proxy_buffering off nginx has
        # already sent the headers (Content-Length of the whole file) and the first bytes when the
        # upstream read times out; it then closes the client connection, short of Content-Length.
        location /cut/ {{
            proxy_pass http://127.0.0.1:{cut_port}/;
            proxy_buffering off;
            proxy_read_timeout {CUT_READ_TIMEOUT};
        }}

        # The key service: KEYS/ID, only for `Authorization: Bearer TOKEN` (exact, case-sensitive).
        location /keys/ {{
            alias "{keys}/";
            if ($http_authorization != "Bearer {token}") {{
                add_header WWW-Authenticate 'Bearer realm="keys"' always;
                return 401;
            }}
        }}

        # --alias NAME=FOLDER: more static trees.
{alias_locations}    }}
}}
"""


# ----------------------------------------------------------------------------------------------
# 3. The running server

class Server:
    """One running nginx. Attributes: https, http (base URLs ending in '/'), ca (the CA file to
    trust), pid, work (the work folder), token, error_log, access_log. Use stop(), or `with`."""

    def __init__(self, process, work, owns_work, https_port, http_port, ca, token):
        self.process = process
        self.pid = process.pid
        self.work = work
        self.owns_work = owns_work      # made by start(): deleted by stop()
        self.https = f"https://127.0.0.1:{https_port}/"
        self.http = f"http://127.0.0.1:{http_port}/"
        self.ca = ca
        self.token = token
        self.error_log = os.path.join(work, "error.log")
        self.access_log = os.path.join(work, "access.log")

    def url(self, path="/", scheme="https"):
        """The full URL of `path` (e.g. '/cut/model.bin') on the HTTPS or the HTTP port."""
        base = self.https if scheme == "https" else self.http
        return base + path.lstrip("/")

    def info(self):
        """What `serve` prints: the dict of its JSON line."""
        return {"https": self.https, "http": self.http, "ca": self.ca, "pid": self.pid, "work": self.work}

    @property
    def alive(self):
        return self.process.poll() is None

    def error_tail(self, lines=20):
        return tail(self.error_log, lines)

    def stop(self):
        """Stop nginx (SIGQUIT, then SIGKILL after STOP_GRACE seconds) and delete the work folder
        if start() made it. Safe to call twice, and after nginx died on its own."""
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGQUIT)
                self.process.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.owns_work:
            shutil.rmtree(self.work, ignore_errors=True)
            self.owns_work = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _kill_with_parent():
    """Runs in the nginx child before exec (Linux): nginx gets SIGKILL if the harness dies, even by
    SIGKILL, so that no nginx outlives a crashed test."""
    try:
        import ctypes
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:
        pass


def _wait_until_ready(process, port, ca, timeout):
    """Poll the HTTPS port with a TLS connection verified against `ca` until an HTTP status line
    comes back. Raises ServerError if nginx exits first or nothing answers within `timeout`."""
    context = ssl.create_default_context(cafile=ca)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise ServerError(f"nginx exited while starting ({describe_exit(process.returncode)})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.sendall(b"HEAD /-/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    if tls.recv(16).startswith(b"HTTP/1."):
                        return
        except ssl.SSLCertVerificationError as e:
            raise ServerError(f"nginx answers, but its certificate does not verify against {ca}: {e}")
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise ServerError(f"HTTPS on 127.0.0.1:{port} did not answer within {timeout:g} s")
        time.sleep(0.05)


def start(tree, keys=None, token=None, work=None, slow_rate=DEFAULT_SLOW_RATE,
          cut_after=DEFAULT_CUT_AFTER, aliases=(), nginx=None, openssl=None, timeout=START_TIMEOUT):
    """Start the test nginx and return a running Server once HTTPS answers.

    tree: the folder served at /, /slow/ and /cut/. keys: the folder of /keys/ (None: an empty one
    in the work folder). token: the bearer token of /keys/ (None: a random one, see .token).
    work: the work folder (made if missing, kept); None: a fresh temporary folder, deleted by stop().
    aliases: (NAME, FOLDER) pairs or "NAME=FOLDER" strings, served at /alt/NAME/.
    nginx, openssl: the programs (default: found on PATH). Raises SetupError or ServerError."""
    # Check everything before touching the disk.
    nginx = find_program("nginx", nginx, NGINX_EXTRA_DIRS)
    openssl = find_program("openssl", openssl)
    tree = existing_folder(tree, "--tree")
    if keys is not None:
        keys = existing_folder(keys, "--keys")
    if token is None:
        token = secrets.token_urlsafe(24)
    if not TOKEN_RE.match(token):
        raise SetupError("--token: use only letters, digits and . _ ~ + / = - (an RFC 6750 bearer token)")
    if int(slow_rate) <= 0 or int(cut_after) <= 0:
        raise SetupError("--slow-rate and --cut-after must be positive")
    alias_pairs, seen = [], set()
    for alias in aliases:
        name, sep, folder = alias.partition("=") if isinstance(alias, str) else (alias[0], "=", alias[1])
        if not sep or not ALIAS_NAME_RE.match(name):
            raise SetupError(f"--alias {alias!r}: expected NAME=FOLDER, NAME made of letters, digits, . _ -")
        if name in seen:
            raise SetupError(f"--alias {name}: given twice")
        seen.add(name)
        alias_pairs.append((name, existing_folder(folder, f"--alias {name}")))

    # The work folder.
    owns_work = work is None
    if owns_work:
        work = tempfile.mkdtemp(prefix="framegraph-deploy-nginx-")
    else:
        if os.path.exists(work) and not os.path.isdir(work):
            raise SetupError(f"--work {work!r} exists and is not a folder")
        os.makedirs(work, exist_ok=True)
    try:
        work = config_path(os.path.realpath(work), "--work")
        if keys is None:
            keys = os.path.join(work, "keys")
            os.makedirs(keys, exist_ok=True)
        os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
        certs = make_certificates(work, openssl)
        conf = os.path.join(work, "nginx.conf")

        for attempt in range(1, PORT_ATTEMPTS + 1):
            ports = free_ports(3)
            with open(conf, "w") as f:
                f.write(nginx_config(work, tree, keys, token, alias_pairs, ports,
                                     int(slow_rate), int(cut_after), certs))
            for log in ("error.log", "access.log"):  # this attempt's lines only
                open(os.path.join(work, log), "w").close()
            with open(os.path.join(work, "nginx.out"), "wb") as out:
                # stdout/stderr go to a file: the harness's own stdout carries the JSON line only.
                # A session of its own: a Ctrl-C in the terminal reaches the harness, not nginx.
                process = subprocess.Popen(
                    [nginx, "-p", work + "/", "-c", conf, "-e", os.path.join(work, "error.log")],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, close_fds=True,
                    start_new_session=True,
                    preexec_fn=_kill_with_parent if sys.platform.startswith("linux") else None)
            try:
                _wait_until_ready(process, ports[0], certs["ca.pem"], timeout)
            except ServerError as e:
                if process.poll() is None:
                    process.kill()
                process.wait()
                log = tail(os.path.join(work, "error.log")) or tail(os.path.join(work, "nginx.out"))
                if "Address already in use" in log and attempt < PORT_ATTEMPTS:
                    continue  # a port was taken between free_ports() and nginx: pick others
                raise ServerError(f"{e}\n{log}".rstrip())
            return Server(process, work, owns_work, ports[0], ports[1], certs["ca.pem"], token)
    except BaseException:
        if owns_work:
            shutil.rmtree(work, ignore_errors=True)
        raise


# ----------------------------------------------------------------------------------------------
# 4. The command line

def serve(args):
    """`serve`: start, print the JSON line, wait for EOF on stdin or a signal, stop. Exit status."""
    stop_signal = []

    def on_signal(signum, _frame):
        stop_signal.append(signum)

    # Installed before nginx starts, so that a signal during the start still stops it cleanly.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)

    server = start(args.tree, keys=args.keys, token=args.token, work=args.work,
                   slow_rate=args.slow_rate, cut_after=args.cut_after, aliases=args.alias or (),
                   nginx=args.nginx)
    try:
        sys.stdout.write(json.dumps(server.info()) + "\n")
        sys.stdout.flush()

        watch_stdin = not args.ignore_stdin
        while not stop_signal:
            if not server.alive:
                print(f"test_server: nginx (pid {server.pid}) exited on its own "
                      f"({describe_exit(server.process.returncode)}); last lines of {server.error_log}:\n"
                      f"{server.error_tail() or '(empty)'}", file=sys.stderr)
                return 1
            if watch_stdin:
                try:
                    readable, _, _ = select.select([sys.stdin.fileno()], [], [], 0.2)
                    # Whatever is written to stdin is ignored; only its end matters.
                    if readable and not os.read(sys.stdin.fileno(), 65536):
                        break  # EOF
                except InterruptedError:
                    pass
                except (OSError, ValueError):
                    break  # stdin closed or unusable: same as EOF
            else:
                time.sleep(0.2)
        return 0
    finally:
        server.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="A real nginx on 127.0.0.1 for the model deployment tests (see tools/deploy/README.md).")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("serve", help="start nginx, print one JSON line, run until stdin ends or a signal")
    p.add_argument("--tree", required=True, help="folder served at /, /slow/ and /cut/")
    p.add_argument("--keys", required=True, help="folder served at /keys/ (with the token)")
    p.add_argument("--token", required=True, help="bearer token that /keys/ requires")
    p.add_argument("--work", help="work folder (kept); default: a temporary one, deleted on exit")
    p.add_argument("--slow-rate", type=int, default=DEFAULT_SLOW_RATE,
                   help=f"bytes per second on /slow/ (default {DEFAULT_SLOW_RATE})")
    p.add_argument("--cut-after", type=int, default=DEFAULT_CUT_AFTER,
                   help=f"about how many bytes a /cut/ response carries before the cut (default {DEFAULT_CUT_AFTER})")
    p.add_argument("--alias", action="append", metavar="NAME=FOLDER",
                   help="also serve FOLDER at /alt/NAME/ (repeatable)")
    p.add_argument("--nginx", help="the nginx program (default: nginx on PATH or in /usr/sbin)")
    p.add_argument("--ignore-stdin", action="store_true",
                   help="run until a signal only (for `serve ... &` in a script, where stdin is /dev/null)")
    args = parser.parse_args(argv)

    try:
        return serve(args)
    except SetupError as e:
        print(f"test_server: {e}", file=sys.stderr)
        return 2
    except ServerError as e:
        print(f"test_server: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
