"""The part every test server of this project's tools shares: a TCP listener on 127.0.0.1 at a free
port, announced as one JSON line ({"port": N}) on standard output, each connection handled on a
thread of its own, until the test closes standard input. Test servers never listen elsewhere."""
import json
import socket
import sys
import threading


def serve(handle, backlog=16):
    """Runs handle(conn) for each connection on a daemon thread; returns when stdin closes."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(backlog)
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


def close_quietly(conn):
    """Closes a connection whose peer may already be gone."""
    try:
        conn.close()
    except OSError:
        pass
