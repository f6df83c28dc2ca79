#!/usr/bin/python3
"""A local RTSP server for FrameGraph's network-source tests (GStreamer's RTSP server through
python3-gi and gir1.2-gst-rtsp-server-1.0, from Debian).

Serves rtsp://127.0.0.1:PORT/cam: a live H.264 picture (GStreamer's moving test pattern with a
running clock, SIZE at 30 fps) that goes on for ever, to every client. Prints one JSON line
{"port": PORT, "url": …} once it listens; ends when stdin closes or on SIGTERM.

    /usr/bin/python3 tools/streams/rtsp_server.py [--port N] [--size 320x240] [--user U --password P]
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


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
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    Gst.init(None)
    port = args.port or free_port()
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        f"( videotestsrc is-live=true pattern=ball ! video/x-raw,width={width},height={height},framerate=30/1 "
        "! timeoverlay ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 bframes=0 "
        "! video/x-h264,profile=baseline ! rtph264pay name=pay0 pt=96 config-interval=1 )")
    factory.set_shared(True)
    if args.user:
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", args.user)
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password or ""), token)
        server.set_auth(auth)
        permissions = GstRtspServer.RTSPPermissions()
        permissions.add_permission_for_role(args.user, "media.factory.access", True)
        permissions.add_permission_for_role(args.user, "media.factory.construct", True)
        factory.set_permissions(permissions)
    server.get_mount_points().add_factory("/cam", factory)
    if server.attach(None) == 0:
        print(json.dumps({"error": f"cannot listen on 127.0.0.1:{port}"}), flush=True)
        return 1
    loop = GLib.MainLoop()

    def stop(*_):
        GLib.idle_add(loop.quit)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    print(json.dumps({"port": port, "url": f"rtsp://127.0.0.1:{port}/cam"}), flush=True)
    loop.run()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
