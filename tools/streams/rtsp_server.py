#!/usr/bin/python3
"""A local RTSP server for FrameGraph's network-source tests (GStreamer's RTSP server through
python3-gi and gir1.2-gst-rtsp-server-1.0, from Debian).

Serves rtsp://127.0.0.1:PORT/cam: a live H.264 picture (GStreamer's moving test pattern with a
running clock, SIZE at 30 fps) that goes on for ever, to every client, over TCP (interleaved) or
UDP as the client asks. Prints one JSON line {"port": PORT, "url": …} once it listens; ends when
stdin closes or on SIGTERM.

    /usr/bin/python3 tools/streams/rtsp_server.py [--port N] [--size 320x240] [--user U --password P]
                                                  [--mounts cam,cam2] [--tls] [--only-udp]

--mounts serves each name as its own stream (each mount a different test pattern). --tls serves
rtsps:// instead (RTSP inside TLS, GStreamer's RTSPAuth with a throwaway self-signed certificate made
by the openssl command line in a temporary folder, deleted at the end); the URL printed is then
rtsps://…. --only-udp refuses the media over TCP (a client must ask for RTP over UDP).
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gio, GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402

PATTERNS = ["ball", "smpte", "snow", "pinwheel", "spokes", "gradient"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--size", default="320x240")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--mounts", default="cam")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--only-udp", action="store_true")
    args = parser.parse_args()
    mounts = [m for m in args.mounts.split(",") if m]
    width, height = (int(v) for v in args.size.split("x"))
    Gst.init(None)
    port = args.port or free_port()
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(port))
    auth = None
    role = "anonymous"
    if args.user or args.tls:
        auth = GstRtspServer.RTSPAuth()
    if args.user:
        role = args.user
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", args.user)
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password or ""), token)
    elif auth:
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", role)
        auth.set_default_token(token)
    workdir = None
    if args.tls:
        workdir = tempfile.mkdtemp(prefix="framegraph-rtsps-")
        key, cert = os.path.join(workdir, "key.pem"), os.path.join(workdir, "cert.pem")
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                               "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], capture_output=True)
        if made.returncode != 0:
            print(json.dumps({"error": "openssl could not make a certificate: " + made.stderr.decode(errors="replace")[-200:]}), flush=True)
            return 1
        with open(cert) as c, open(key) as k:
            auth.set_tls_certificate(Gio.TlsCertificate.new_from_pem(c.read() + k.read(), -1))
    if auth:
        server.set_auth(auth)
    for i, mount in enumerate(mounts):
        factory = GstRtspServer.RTSPMediaFactory()
        pattern = PATTERNS[i % len(PATTERNS)]
        factory.set_launch(
            f"( videotestsrc is-live=true pattern={pattern} ! video/x-raw,width={width},height={height},framerate=30/1 "
            "! timeoverlay ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 bframes=0 "
            "! video/x-h264,profile=baseline ! rtph264pay name=pay0 pt=96 config-interval=1 )")
        factory.set_shared(True)
        if args.only_udp:
            factory.set_protocols(GstRtsp.RTSPLowerTrans.UDP)
        if auth:
            permissions = GstRtspServer.RTSPPermissions()
            permissions.add_permission_for_role(role, "media.factory.access", True)
            permissions.add_permission_for_role(role, "media.factory.construct", True)
            factory.set_permissions(permissions)
        server.get_mount_points().add_factory("/" + mount, factory)
    if server.attach(None) == 0:
        print(json.dumps({"error": f"cannot listen on 127.0.0.1:{port}"}), flush=True)
        return 1
    loop = GLib.MainLoop()

    def stop(*_):
        GLib.idle_add(loop.quit)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    scheme = "rtsps" if args.tls else "rtsp"
    print(json.dumps({"port": port, "url": f"{scheme}://127.0.0.1:{port}/{mounts[0]}",
                      "urls": [f"{scheme}://127.0.0.1:{port}/{m}" for m in mounts]}), flush=True)
    loop.run()
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
