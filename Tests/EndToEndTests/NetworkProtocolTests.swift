import Foundation
import FrameGraph
import Testing
import TestSupport

/// Each protocol the `stream` source reads, end to end against a real sender or server on 127.0.0.1
/// (started and stopped by the test): HLS (ffmpeg writing a live playlist, nginx serving it), MJPEG
/// multipart over HTTP, RTMP, MPEG-TS over UDP, RTP with an SDP file (both from ffmpeg), and RTSP
/// over UDP and inside TLS (rtsps, GStreamer's RTSP server). Each run lasts 2 s of a 30 fps stream
/// (60 frames): at least half must come through, and the file written holds what the stats count.
/// Tests run side by side (each its own sender, port and folder).
@Suite struct NetworkProtocolTests {
    typealias Fixtures = NetworkFixtures

    /// Runs `stream url=URL … -> encode path=out.mp4` for 2 s and checks what came out.
    func receive(_ name: String, _ url: String, options: String = "", extra: [String] = []) throws -> Fixtures.Run {
        let r = try Fixtures.run(name, ["run", "-e", "stream url=\(url) reconnect=false \(options) -> encode path=out.mp4", "--allow-network",
                                        "--duration", "2"] + extra, timeout: 40)
        #expect(r.result.status == 0, "\(name): \(r.result.stderr)")
        // 2 s at 30 fps: 60 pictures sent; a loaded machine may start late, so half of them at least.
        #expect((r.stats["framesIn"] as? Int ?? 0) >= 30, "\(name): \(r.stats["framesIn"] ?? "-") frames in; \(r.connection)")
        #expect(r.count("stalls") == 0 && r.count("drops") == 0, "\(name): \(r.connection)")
        #expect(try Fixtures.frameCount(r.dir.appendingPathComponent("out.mp4").path) == r.framesOut, "\(name)")
        return r
    }

    @Test(.enabled(if: ffmpegPath != nil && Fixtures.hasNginx, "needs ffmpeg and nginx-light (scripts/install-deps.sh)"))
    func hlsPlaylistServedByNginx() throws {
        let clip = try Fixtures.tsClip("hls-source.ts", seconds: 4)
        let tree = TestEnvironment.scratch("network-hls-tree")
        let keys = TestEnvironment.scratch("network-hls-keys")
        // A live playlist of 1 s segments, the oldest deleted, each segment renamed into place when complete.
        let sender = try Fixtures.FFmpegSender(["-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_list_size", "4",
                                                "-hls_flags", "delete_segments+temp_file", tree.appendingPathComponent("live.m3u8").path])
        let server = try DeployServer(tree: tree.path, keys: keys.path)
        defer { server.stop(); _ = sender }
        let playlist = tree.appendingPathComponent("live.m3u8").path
        let ready = Fixtures.waitFor(seconds: 15) {
            ((try? String(contentsOfFile: playlist, encoding: .utf8)) ?? "").components(separatedBy: "#EXTINF").count >= 3
        }
        try #require(ready, "ffmpeg wrote no playlist with two segments")
        let r = try receive("hls", server.http + "live.m3u8")
        // A segment arrives whole, but its frames are paced by their timestamps: none is dropped for
        // coming faster than the output clock (stamped by arrival, 29 of each 30 were).
        #expect((r.stats["droppedRate"] as? Int ?? -1) <= 2, "\(r.stats["droppedRate"] ?? "-")")
    }

    @Test(.enabled(if: ffmpegPath != nil && Fixtures.hasNginx, "needs ffmpeg and nginx-light (scripts/install-deps.sh)"))
    func anHLSTimestampJumpDoesNotParkTheSource() throws {
        // Two 2 s segments, the second's timestamps an hour later (a discontinuity). Paced by
        // timestamp as they stood, the second segment's first frame would be due in an hour (the
        // source parked, the run killed by the timeout); the pacing starts again from its arrival
        // instead, and the playlist plays to its end.
        let ffmpeg = try #require(ffmpegPath)
        let tree = TestEnvironment.scratch("network-hls-jump-tree")
        let keys = TestEnvironment.scratch("network-hls-jump-keys")
        for (name, offset) in [("a.ts", "0"), ("b.ts", "3600")] {
            let r = try runCommand(ffmpeg, ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=30:d=2", "-c:v", "libx264",
                                            "-preset", "ultrafast", "-g", "15", "-bf", "0", "-pix_fmt", "yuv420p", "-output_ts_offset", offset,
                                            "-f", "mpegts", tree.appendingPathComponent(name).path], timeout: 60)
            try #require(r.status == 0, "\(r.stderr)")
        }
        try """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXTINF:2.0,
        a.ts
        #EXT-X-DISCONTINUITY
        #EXTINF:2.0,
        b.ts
        #EXT-X-ENDLIST

        """.write(to: tree.appendingPathComponent("jump.m3u8"), atomically: true, encoding: .utf8)
        let server = try DeployServer(tree: tree.path, keys: keys.path)
        defer { server.stop() }
        let r = try Fixtures.run("hls-jump", ["run", "-e", "stream url=\(server.http)jump.m3u8 reconnect=false -> encode path=out.mp4",
                                              "--allow-network", "--duration", "20"], timeout: 40)
        // The end of the playlist reached (with reconnect=false the end of a stream ends the run, status 1).
        #expect(r.result.status == 1 && r.result.stderr.contains("the server ended the stream"), "\(r.result.stderr)")
        // Of the 120 frames, those read while the stream was probed are not kept (fflags=nobuffer, for
        // a live camera's latency: about the first second); more than the first segment's 60 came.
        #expect((r.stats["framesIn"] as? Int ?? 0) > 60, "\(r.stats["framesIn"] ?? "-") in, dropped for rate \(r.stats["droppedRate"] ?? "-")")
        #expect(r.stats["droppedRate"] as? Int == 0, "\(r.stats["droppedRate"] ?? "-")")
        #expect(try Fixtures.frameCount(r.dir.appendingPathComponent("out.mp4").path) == r.framesOut)
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func mjpegMultipartOverHTTP() throws {
        let clip = try Fixtures.tsClip("mjpeg-source.ts", seconds: 4)
        let port = Fixtures.freePort()
        let sender = try Fixtures.FFmpegSender(["-re", "-stream_loop", "-1", "-i", clip, "-c:v", "mjpeg", "-q:v", "5", "-pix_fmt", "yuvj420p",
                                                "-f", "mpjpeg", "-listen", "1", "http://127.0.0.1:\(port)/cam.mjpg"])
        defer { _ = sender }
        usleep(500_000)
        _ = try receive("mjpeg", "http://127.0.0.1:\(port)/cam.mjpg")
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func rtmpFromFFmpegsListener() throws {
        let clip = try Fixtures.tsClip("rtmp-source.ts", seconds: 4)
        let port = Fixtures.freePort()
        let sender = try Fixtures.FFmpegSender(["-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "flv", "-listen", "1",
                                                "rtmp://127.0.0.1:\(port)/live/cam"])
        defer { _ = sender }
        usleep(500_000)
        _ = try receive("rtmp", "rtmp://127.0.0.1:\(port)/live/cam")
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func mpegTSOverUDP() throws {
        let clip = try Fixtures.tsClip("udp-source.ts", seconds: 4)
        let port = Fixtures.freePort()
        // UDP has no connection: the sender sends from the start, the source joins at the next keyframe.
        let sender = try Fixtures.FFmpegSender(["-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"])
        defer { _ = sender }
        _ = try receive("udp", "udp://127.0.0.1:\(port)")
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func rtpWithAnSDPFile() throws {
        let clip = try Fixtures.tsClip("rtp-source.ts", seconds: 4)
        let port = Fixtures.freePort()
        let sdp = TestEnvironment.scratch("network-rtp-sdp").appendingPathComponent("cam.sdp").path
        let sender = try Fixtures.FFmpegSender(["-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(port)", "-sdp_file", sdp])
        defer { _ = sender }
        try #require(Fixtures.waitFor(seconds: 10) { ((try? String(contentsOfFile: sdp, encoding: .utf8)) ?? "").contains("m=video \(port)") },
                     "ffmpeg wrote no SDP file")
        _ = try receive("rtp", "rtp://127.0.0.1:\(port)", options: "sdp=\(sdp)")
    }

    @Test(.enabled(if: Fixtures.hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func rtspOverUDP() throws {
        // The server refuses RTP over TCP: the default transport cannot read it, UDP does.
        let server = try Fixtures.Server.rtsp(extra: ["--only-udp"])
        let tcp = try Fixtures.run("rtsp-tcp-refused", ["run", "-e", "stream url=rtsp://127.0.0.1:\(server.port)/cam reconnect=false open-timeout=3 -> null",
                                                        "--allow-network", "--duration", "2"], timeout: 40)
        #expect(tcp.result.status == 2, "\(tcp.result.stderr)")
        _ = try receive("rtsp-udp", "rtsp://127.0.0.1:\(server.port)/cam", extra: ["--stream-transport", "udp"])
    }

    @Test(.enabled(if: Fixtures.hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func rtspsInsideTLS() throws {
        // GStreamer's RTSP server with a throwaway self-signed certificate (FFmpeg's TLS client does
        // not verify certificates unless told to).
        let server = try Fixtures.Server.rtsp(extra: ["--tls"])
        #expect(server.urls.first == "rtsps://127.0.0.1:\(server.port)/cam", "\(server.urls)")
        _ = try receive("rtsps", "rtsps://127.0.0.1:\(server.port)/cam")
    }
}
