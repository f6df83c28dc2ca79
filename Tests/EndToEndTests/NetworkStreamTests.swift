import Foundation
import FrameGraph
import Testing
import TestSupport

/// Network sources end to end, against real servers on 127.0.0.1 only: GStreamer's RTSP server
/// (tools/streams/rtsp_server.py, killed and restarted mid-run), ffmpeg's HTTP/MPEG-TS and SRT
/// listeners, and hostile servers (tools/streams/hostile_stream_server.py). Every run is bounded by
/// the source's own timeouts; the tests assert counts and lines, never speed. Tests run side by side
/// (each has its own server, port, clip and folder; they wait on the network far more than they compute).
@Suite struct NetworkStreamTests {
    typealias Server = NetworkFixtures.Server
    typealias Run = NetworkFixtures.Run
    static var hasRTSPServer: Bool { NetworkFixtures.hasRTSPServer }
    static var hasSRT: Bool { NetworkFixtures.hasSRT }
    static func freePort() -> Int { NetworkFixtures.freePort() }

    func run(_ name: String, _ arguments: [String], timeout: Double = 60, whileRunning: ((Process) -> Void)? = nil) throws -> Run {
        try NetworkFixtures.run(name, arguments, timeout: timeout, whileRunning: whileRunning)
    }

    func frameCount(_ path: String) throws -> Int { try NetworkFixtures.frameCount(path) }

    func tsClip(_ name: String, seconds: Int = 4, resize: Bool = false) throws -> String {
        try NetworkFixtures.tsClip(name, seconds: seconds, resize: resize)
    }

    // MARK: - Opt-in and redaction

    @Test func everyURLIsRefusedWithoutTheOptIn() throws {
        for url in ["rtsp://admin:hunter2@127.0.0.1:1/cam", "http://127.0.0.1:1/x.ts", "srt://127.0.0.1:1?passphrase=hunter2hunter2", "rtmp://127.0.0.1/live/x"] {
            let r = try run("refused", ["run", TestEnvironment.root.appendingPathComponent("pipelines/transcode.fg").path, "--input", url, "-o", "out.mp4"], timeout: 30)
            #expect(r.result.status != 0, "\(url): \(r.result.stderr)")
            #expect(r.result.stderr.contains("--allow-network"), "\(url): \(r.result.stderr)")
            #expect(r.result.stderr.split(separator: "\n").count == 1, "\(url): \(r.result.stderr)")
            #expect(!r.result.stderr.contains("hunter2") && !r.result.stdout.contains("hunter2"), "\(r.result.stderr)")
        }
        // The same in a pipeline file's stream node without network=allow, and for probe.
        let dir = TestEnvironment.scratch("network-refused")
        let pipeline = dir.appendingPathComponent("cam.fg")
        try "cam = stream url=rtsp://admin:hunter2@127.0.0.1:1/cam\nout = null\ncam -> out\n".write(to: pipeline, atomically: true, encoding: .utf8)
        let file = try runCommand(TestEnvironment.cli, ["run", pipeline.path], timeout: 30)
        #expect(file.status != 0 && file.stderr.contains("--allow-network") && !file.stderr.contains("hunter2"), "\(file.stderr)")
        let probe = try runCommand(TestEnvironment.cli, ["probe", "rtsp://admin:hunter2@127.0.0.1:1/cam"], timeout: 30)
        #expect(probe.status != 0 && probe.stderr.contains("--allow-network") && !probe.stderr.contains("hunter2"), "\(probe.stderr)")
    }

    @Test(.enabled(if: hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func credentialsNeverAppearInLinesStatsOrTrace() throws {
        let server = try Server.rtsp(extra: ["--user", "viewer", "--password", "s3cr3t-pw"])
        let dir = TestEnvironment.scratch("network-credentials-files")
        let trace = dir.appendingPathComponent("trace.json").path
        // Wrong password in the URL: one line, no password in it.
        let wrong = try run("credentials-wrong", ["run", "-e", "stream url=rtsp://viewer:wrong-pw@127.0.0.1:\(server.port)/cam open-timeout=5 -> null",
                                                  "--allow-network", "--duration", "2"], timeout: 40)
        #expect(wrong.result.status != 0, "\(wrong.result.stderr)")
        #expect(!wrong.result.stderr.contains("wrong-pw") && wrong.result.stderr.contains("rtsp://***@127.0.0.1"), "\(wrong.result.stderr)")
        // The right one from a file: the run works, and neither the output, the stats nor the trace holds it.
        let credentials = dir.appendingPathComponent("cam.credentials")
        try "viewer:s3cr3t-pw\n".write(to: credentials, atomically: true, encoding: .utf8)
        let r = try run("credentials", ["run", "-e", "stream url=rtsp://127.0.0.1:\(server.port)/cam -> encode path=out.mp4", "--allow-network",
                                        "--credentials", credentials.path, "--duration", "2", "--trace", trace], timeout: 40)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.framesOut > 0)
        let everything = r.result.stdout + r.result.stderr + String(describing: r.stats) + ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "")
        #expect(!everything.contains("s3cr3t-pw"))
    }

    // MARK: - Protocols end to end

    @Test(.enabled(if: hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func rtspReconnectsAfterTheServerIsKilledAndTheClockGoesOn() throws {
        let port = Self.freePort()
        let first = try Server.rtsp(port: port)
        let restarted = Protected<Server?>(nil)
        let r = try run("rtsp-reconnect", ["run", "-e", "stream url=rtsp://127.0.0.1:\(port)/cam timeout=1 backoff=0.2 backoff-max=1 -> encode path=out.mp4",
                                           "--allow-network", "--duration", "9"], timeout: 90) { _ in
            usleep(2_500_000)
            first.stop()  // killed mid-run
            usleep(1_500_000)
            restarted.withLock { $0 = try? Server.rtsp(port: port) }
        }
        #expect(restarted.withLock { $0 } != nil, "the RTSP server did not start again on port \(port)")
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.count("reconnects") >= 1, "\(r.connection)")
        #expect(r.count("stalls") + r.count("drops") >= 1, "\(r.connection)")
        #expect((r.connection["secondsWithoutSignal"] as? Double ?? 0) > 0.5, "\(r.connection)")
        #expect(r.result.stderr.contains("stream 'stream' lost") && r.result.stderr.contains("is back"), "\(r.result.stderr)")
        // The output kept its clock: one frame per tick, the gap filled with repeats.
        let out = r.dir.appendingPathComponent("out.mp4").path
        let duplicated = r.stats["duplicated"] as? Int ?? 0
        let elapsed = r.stats["elapsedSeconds"] as? Double ?? 0
        #expect(try frameCount(out) == r.framesOut)
        #expect(duplicated >= 20 && Double(r.framesOut) > elapsed * 30 * 0.8, "out \(r.framesOut), duplicated \(duplicated), \(elapsed) s")
    }

    @Test(.enabled(if: hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func reconnectFalseEndsTheRunOnLossWithAPlayableFile() throws {
        let server = try Server.rtsp()
        let r = try run("rtsp-no-reconnect", ["run", "-e", "stream url=rtsp://127.0.0.1:\(server.port)/cam timeout=1 -> encode path=out.mp4",
                                              "--allow-network", "--reconnect=false", "--duration", "30"], timeout: 60) { _ in
            usleep(2_000_000)
            server.stop()
        }
        #expect(r.result.status == 1, "\(r.result.stderr)")
        #expect(r.result.stderr.contains("lost the stream") && r.result.stderr.contains("--reconnect=false"), "\(r.result.stderr)")
        #expect(r.count("reconnects") == 0 && r.count("stalls") + r.count("drops") == 1, "\(r.connection)")
        let out = r.dir.appendingPathComponent("out.mp4").path
        let written = try frameCount(out)
        #expect(r.framesOut > 0 && written == r.framesOut)
    }

    @Test(.enabled(if: hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func noSignalFramesFillTheGapWhenAsked() throws {
        let port = Self.freePort()
        let server = try Server.rtsp(port: port)
        let r = try run("rtsp-no-signal", ["run", "-e", "stream url=rtsp://127.0.0.1:\(port)/cam timeout=1 backoff=5 -> encode path=out.mp4",
                                           "--allow-network", "--on-loss", "no-signal", "--duration", "4"], timeout: 60) { _ in
            usleep(2_000_000)
            server.stop()
        }
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.count("noSignalFrames") >= 20, "\(r.connection)")
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func httpMPEGTSFromFFmpegsListener() throws {
        let clip = try tsClip("http-8s.ts", seconds: 8)
        let port = Self.freePort()
        let sender = try NetworkFixtures.FFmpegSender(["-re", "-i", clip, "-c", "copy", "-f", "mpegts", "-listen", "1", "http://127.0.0.1:\(port)/x.ts"])
        defer { _ = sender }
        usleep(500_000)
        let r = try run("http-ts", ["run", "-e", "stream url=http://127.0.0.1:\(port)/x.ts reconnect=false -> encode path=out.mp4",
                                    "--allow-network", "--duration", "3"], timeout: 40)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect((r.stats["framesIn"] as? Int ?? 0) >= 45, "\(r.stats)")
        let out = r.dir.appendingPathComponent("out.mp4").path
        #expect(try frameCount(out) == r.framesOut)
    }

    @Test(.enabled(if: hasSRT, "needs ffmpeg built with SRT (Debian's is)"))
    func srtFromFFmpegsListener() throws {
        let clip = try tsClip("srt-8s.ts", seconds: 8)
        let port = Self.freePort()
        let sender = try NetworkFixtures.FFmpegSender(["-re", "-i", clip, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener"])
        defer { _ = sender }
        usleep(500_000)
        let r = try run("srt", ["run", "-e", "stream url=srt://127.0.0.1:\(port) reconnect=false -> null", "--allow-network", "--duration", "3"], timeout: 40)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect((r.stats["framesIn"] as? Int ?? 0) >= 45, "\(r.stats)")
    }

    @Test(.enabled(if: hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func probeShowsCodecSizeRateAndFirstFrame() throws {
        let server = try Server.rtsp()
        let r = try runCommand(TestEnvironment.cli, ["probe", "rtsp://127.0.0.1:\(server.port)/cam", "--allow-network", "--seconds", "1"], timeout: 40)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("h264 320×240") && r.stdout.contains("first frame:") && r.stdout.contains("container:      rtsp"), "\(r.stdout)")
    }

    @Test(.enabled(if: hasRTSPServer && ffprobePath != nil, "needs python3-gi, gir1.2-gst-rtsp-server-1.0 and ffprobe (scripts/install-deps.sh)"))
    func recordingCopiesTheCamerasOwnPacketsInSegments() throws {
        let server = try Server.rtsp()
        let r = try run("record", ["run", "-e", "stream url=rtsp://127.0.0.1:\(server.port)/cam record=cam1/raw.mkv record-segment-frames=30 -> null",
                                   "--allow-network", "--duration", "3"], timeout: 60)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        let folder = r.dir.appendingPathComponent("cam1")
        let lines = ((try? String(contentsOf: folder.appendingPathComponent("index.jsonl"), encoding: .utf8)) ?? "").split(separator: "\n")
        let index = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        // The server's keyframes come every 30 frames: each file starts at one, so each plays on its own.
        #expect(index.count >= 2, "\(lines)")
        for entry in index {
            let file = folder.appendingPathComponent(entry["file"] as? String ?? "?").path
            let probe = try runCommand(try #require(ffprobePath), ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                                  "-show_entries", "stream=codec_name,nb_read_frames", "-of", "csv=p=0", file], timeout: 60)
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,\(entry["frames"] as? Int ?? -1)", "\(file): \(probe.stdout) \(probe.stderr)")
        }
    }

    // MARK: - Hostile servers

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func hostileServersAreBoundedCountedAndOneLine() throws {
        let good = try tsClip("pattern-4s.ts", seconds: 4)
        let server = try Server("/usr/bin/env", ["python3", TestEnvironment.root.appendingPathComponent("tools/streams/hostile_stream_server.py").path, good])
        // Every case at once (the server serves each connection on its own thread; each run waits
        // on the network, not the CPU), then each checked.
        let cases: [(name: String, arguments: [String])] = [
            // Misbehaving from the first byte, reconnect=false: the connection fails within
            // open-timeout, one line, status 2 (the stream could not start: refused before the run).
            ("slow", []), ("endless-header", []), ("huge", []), ("garbage", []),
        ].map { path, _ in
            (path, ["run", "-e", "stream url=http://127.0.0.1:\(server.port)/\(path) open-timeout=1 timeout=1 reconnect=false -> null", "--allow-network", "--duration", "20"])
        } + [
            // With reconnect (the default) it is tried again until the run's duration has passed.
            ("garbage-retried", ["run", "-e", "stream url=http://127.0.0.1:\(server.port)/garbage open-timeout=0.5 backoff=0.2 backoff-max=0.4 -> null",
                                 "--allow-network", "--duration", "2"]),
        ] + ["good-then-garbage", "good-then-slow"].map { path in
            // Good, then misbehaving: counted as a stall or drop; reconnect=false ends the run after it.
            (path, ["run", "-e", "stream url=http://127.0.0.1:\(server.port)/\(path) timeout=1.5 reconnect=false -> encode path=out.mp4", "--allow-network", "--duration", "20"])
        }
        let results = Protected([String: Result<Run, any Error>]())
        DispatchQueue.concurrentPerform(iterations: cases.count) { i in
            let result = Result { try NetworkFixtures.run("hostile-\(cases[i].name)", cases[i].arguments, timeout: 40) }
            results.withLock { $0[cases[i].name] = result }
        }
        let runs = try results.withLock { all in try all.mapValues { try $0.get() } }
        for path in ["slow", "endless-header", "huge", "garbage"] {
            let r = try #require(runs[path])
            #expect(r.result.status == 2, "\(path): \(r.result.stderr)")
            #expect(r.result.stderr.split(separator: "\n").count == 1, "\(path): \(r.result.stderr)")
            #expect(r.result.stderr.contains("127.0.0.1:\(server.port)/\(path)"), "\(path): \(r.result.stderr)")
        }
        // Retried: then the last failure, status 2; a line said it was waiting.
        let retried = try #require(runs["garbage-retried"])
        #expect(retried.result.status == 2, "\(retried.result.stderr)")
        #expect(retried.result.stderr.contains("cannot connect yet") && retried.result.stderr.contains("no connection within the run's duration (2 s)"),
                "\(retried.result.stderr)")
        #expect(retried.result.stderr.split(separator: "\n").count == 2, "\(retried.result.stderr)")
        for path in ["good-then-garbage", "good-then-slow"] {
            let r = try #require(runs[path])
            #expect(r.result.status == 1, "\(path): \(r.result.stderr)")
            #expect(r.count("stalls") + r.count("drops") == 1, "\(path): \(r.connection)")
            #expect((r.stats["framesIn"] as? Int ?? 0) > 10, "\(path): \(r.stats)")
        }
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func aStreamThatChangesSizeIsScaledToItsFirstSize() throws {
        let clip = try tsClip("resize-6s.ts", seconds: 6, resize: true)
        let port = Self.freePort()
        let sender = try NetworkFixtures.FFmpegSender(["-re", "-i", clip, "-c", "copy", "-f", "mpegts", "-listen", "1", "http://127.0.0.1:\(port)/x.ts"])
        defer { _ = sender }
        usleep(500_000)
        let r = try run("resize", ["run", "-e", "stream url=http://127.0.0.1:\(port)/x.ts reconnect=false -> encode path=out.mp4",
                                   "--allow-network", "--duration", "5"], timeout: 40)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.count("resizedFrames") > 10, "\(r.connection)")
    }
}
