#!/usr/bin/env python3
"""Hostile video servers on 127.0.0.1 for FrameGraph's network-source tests. Each path misbehaves in
one way; a client must stay bounded in time and memory, count it, and say so in one line.

    python3 tools/streams/hostile_stream_server.py [GOOD.ts]

Prints {"port": N} once listening; ends when stdin closes. Paths:
  /slow            HTTP 200, then one byte a second (slow-loris)
  /endless-header  a header line every 10 ms, never an end of the headers
  /huge            MJPEG multipart whose part claims 10 GB (Content-Length), then random bytes, fast
  /garbage         HTTP 200 video/mp2t, then random bytes, fast
  /good-then-garbage, /good-then-slow, /good-then-huge
                   GOOD.ts (an MPEG-TS file) at about its rate for 2 s, then the misbehaviour
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from loopback_server import close_quietly, serve  # noqa: E402

GOOD = sys.argv[1] if len(sys.argv) > 1 else None


def send_good(conn, seconds=2.0):
    """Sends GOOD.ts at about 2 Mbit/s for `seconds` (enough for its pictures to arrive live)."""
    if not GOOD:
        return
    with open(GOOD, "rb") as f:
        data = f.read()
    rate = 256 * 1024  # bytes per second
    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < seconds:
        chunk = data[sent % len(data):sent % len(data) + 188 * 20]
        if not chunk:
            chunk = data[:188 * 20]
        conn.sendall(chunk)
        sent += len(chunk)
        ahead = sent / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)


def garbage(conn, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        conn.sendall(os.urandom(64 * 1024))


def slow(conn, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        conn.sendall(b"\x47")
        time.sleep(1)


def huge(conn):
    conn.sendall(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: 10737418240\r\n\r\n\xff\xd8")
    garbage(conn)


def handle(conn):
    try:
        conn.settimeout(120)
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ")[1].decode("latin-1") if b" " in request else "/"
        ts = b"HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nConnection: close\r\n\r\n"
        if path == "/slow":
            conn.sendall(ts)
            slow(conn)
        elif path == "/endless-header":
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            for i in range(100000):
                conn.sendall(b"X-Filler-%d: %s\r\n" % (i, b"a" * 100))
                time.sleep(0.01)
        elif path == "/huge":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: multipart/x-mixed-replace;boundary=frame\r\nConnection: close\r\n\r\n")
            huge(conn)
        elif path == "/garbage":
            conn.sendall(ts)
            garbage(conn)
        elif path.startswith("/good-then-"):
            conn.sendall(ts)
            send_good(conn)
            what = path[len("/good-then-"):]
            if what == "garbage":
                garbage(conn)
            elif what == "slow":
                slow(conn)
            elif what == "huge":
                # An MPEG-TS PES that claims far more than it brings, then random bytes.
                garbage(conn)
        else:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
    finally:
        close_quietly(conn)


def main():
    serve(handle, backlog=16)
    os._exit(0)


if __name__ == "__main__":
    main()
