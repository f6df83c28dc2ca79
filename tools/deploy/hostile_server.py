#!/usr/bin/env python3
"""A hostile HTTP server on 127.0.0.1 for FrameGraph's download tests (stdlib only).

It prints one line, {"port": N}, then serves until stdin closes (the test ends it). Paths:

  /trickle/...        status 200, a 10 MB Content-Length, then one body byte every 0.5 s
  /endless-header/... a status line, then a header line every 0.3 s, forever
  /huge/...           status 200, Content-Length 10 GB, then bytes as fast as the client reads
  /silent/...         accepts the connection and never answers

Never listens on another address: test traffic stays on 127.0.0.1.
"""
import json
import socket
import sys
import threading
import time


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
        try:
            conn.close()
        except OSError:
            pass


def main():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    print(json.dumps({"port": server.getsockname()[1]}), flush=True)

    def accept():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()  # until the test closes our stdin (or exits)


if __name__ == "__main__":
    main()
