#!/usr/bin/env python3
"""A hostile HTTP server on 127.0.0.1 for FrameGraph's download tests (stdlib only).

It prints one line, {"port": N}, then serves until stdin closes (the test ends it). Paths:

  /trickle/...        status 200, a 10 MB Content-Length, then one body byte every 0.5 s
  /endless-header/... a status line, then a header line every 0.3 s, forever
  /huge/...           status 200, Content-Length 10 GB, then bytes as fast as the client reads
  /silent/...         accepts the connection and never answers

Never listens on another address: test traffic stays on 127.0.0.1.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from loopback_server import close_quietly, serve  # noqa: E402


def handle(conn):
    try:
        conn.settimeout(60)
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ", 2)[1].decode("latin-1") if request.count(b" ") >= 2 else "/"
        if path.startswith("/trickle/"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\nContent-Type: application/octet-stream\r\n\r\n")
            while True:
                conn.sendall(b"x")
                time.sleep(0.5)
        elif path.startswith("/endless-header/"):
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            n = 0
            while True:
                conn.sendall(b"X-Filler-%d: %s\r\n" % (n, b"a" * 64))
                n += 1
                time.sleep(0.3)
        elif path.startswith("/huge/"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n")
            block = b"\0" * 65536
            while True:
                conn.sendall(block)
        elif path.startswith("/silent/"):
            time.sleep(3600)
        else:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
    finally:
        close_quietly(conn)


def main():
    serve(handle, backlog=64)


if __name__ == "__main__":
    main()
