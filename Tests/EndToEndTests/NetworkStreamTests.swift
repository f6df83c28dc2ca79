import Foundation
import FrameGraph
import Testing
import TestSupport

/// Network sources end to end, against real servers on 127.0.0.1 only: GStreamer's RTSP server
/// (tools/streams/rtsp_server.py, killed and restarted mid-run), ffmpeg's HTTP/MPEG-TS and SRT
/// listeners, and hostile servers (tools/streams/hostile_stream_server.py). Every run is bounded by
/// the source's own timeouts; the tests assert counts and lines, never speed.
@Suite(.serialized) struct NetworkStreamTests {
    static let systemPython = "/usr/bin/python3"
    /// What the RTSP tests need (scripts/install-deps.sh installs it): python3-gi with GStreamer's RTSP server.
    static let hasRTSPServer: Bool = {
        guard FileManager.default.isExecutableFile(atPath: systemPython),
              let r = try? runCommand(systemPython, ["-c", "import gi; gi.require_version('GstRtspServer', '1.0'); from gi.repository import GstRtspServer"], timeout: 30)
        else { return false }
        return r.status == 0
    }()
    static let hasSRT: Bool = {
        guard let ffmpeg = ffmpegPath, let r = try? runCommand(ffmpeg, ["-hide_banner", "-protocols"], timeout: 30) else { return false }
        return r.stdout.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "srt" }
    }()

    struct ServerFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// A server process printing `{"port": N}` first; stopped (stdin closed, then terminated) on release.
    final class Server: @unchecked Sendable {
        let port: Int
        private let process = Process()
        private let input = Pipe()

        init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.currentDirectoryURL = TestEnvironment.root
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            var line = Data()
            while true {
                let byte = output.fileHandleForReading.readData(ofLength: 1)
                if byte.isEmpty || byte == Data("\n".utf8) { break }
                line.append(byte)
            }
            guard let info = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let port = info["port"] as? Int else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw ServerFailure(description: "the server did not start: \(String(decoding: line, as: UTF8.self))")
            }
            self.port = port
        }

        /// Kills the server at once (SIGKILL: as a crash or a pulled cable would).
        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        deinit {
            try? input.fileHandleForWriting.close()
            stop()
        }

        static func rtsp(port: Int = 0, extra: [String] = []) throws -> Server {
            try Server(systemPython, [TestEnvironment.root.appendingPathComponent("tools/streams/rtsp_server.py").path, "--port", String(port)] + extra)
        }
    }

    /// A free TCP port on 127.0.0.1.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The run's statistics and the source node's connection counters.
    struct Run {
        var dir: URL
        var result: CommandResult
        var stats: [String: Any]
        var connection: [String: Any]
        var framesOut: Int { stats["framesOut"] as? Int ?? -1 }
        func count(_ key: String) -> Int { connection[key] as? Int ?? -1 }
    }

    func run(_ name: String, _ arguments: [String], timeout: Double = 60, whileRunning: ((Process) -> Void)? = nil) throws -> Run {
        let dir = TestEnvironment.scratch("network-\(name)")
        let stats = dir.appendingPathComponent("stats.json").path
        let result = try runCommand(TestEnvironment.cli, arguments + ["--stats", stats, "--quiet"], timeout: timeout, in: dir, whileRunning: whileRunning)
        let json = (try? Data(contentsOf: URL(fileURLWithPath: stats))).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        let nodes = json["nodes"] as? [[String: Any]] ?? []
        let connection = nodes.compactMap { $0["connection"] as? [String: Any] }.first ?? [:]
        return Run(dir: dir, result: result, stats: json, connection: connection)
    }

    /// Frames in a video file, counted by ffprobe (decoding every frame).
    func frameCount(_ path: String) throws -> Int {
        guard let ffprobe = ffprobePath else { return -1 }
        let r = try runCommand(ffprobe, ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                                         "-of", "csv=p=0", path], timeout: 60)
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// A short MPEG-TS clip made with ffmpeg (320×240 moving pattern, 30 fps, H.264 every frame a
    /// keyframe every 15); `resize` makes its second half 160×120.
    func tsClip(_ name: String, seconds: Int = 4, resize: Bool = false) throws -> String {
        let ffmpeg = try #require(ffmpegPath, "ffmpeg is not installed (scripts/install-deps.sh)")
        let dir = TestEnvironment.scratch("network-clips")
        let path = dir.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: path) { return path }
        func make(_ size: String, _ seconds: Int, _ output: String) throws {
            let r = try runCommand(ffmpeg, ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size):r=30:d=\(seconds)", "-c:v", "libx264",
                                            "-preset", "ultrafast", "-g", "15", "-bf", "0", "-pix_fmt", "yuv420p", "-f", "mpegts", output], timeout: 60)
            #expect(r.status == 0, "\(r.stderr)")
        }
        guard resize else {
            try make("320x240", seconds, path)
            return path
        }
        // The second half at another size: two MPEG-TS files joined byte for byte (the format allows it).
        try make("320x240", seconds / 2, path + ".a")
        try make("160x120", seconds / 2, path + ".b")
        var joined = try Data(contentsOf: URL(fileURLWithPath: path + ".a"))
        joined.append(try Data(contentsOf: URL(fileURLWithPath: path + ".b")))
        try joined.write(to: URL(fileURLWithPath: path))
        return path
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
        let clip = try tsClip("pattern-8s.ts", seconds: 8)
        let port = Self.freePort()
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: try #require(ffmpegPath))
        ffmpeg.arguments = ["-nostdin", "-v", "error", "-re", "-i", clip, "-c", "copy", "-f", "mpegts", "-listen", "1", "http://127.0.0.1:\(port)/x.ts"]
        try ffmpeg.run()
        defer { ffmpeg.terminate(); ffmpeg.waitUntilExit() }
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
        let clip = try tsClip("pattern-8s.ts", seconds: 8)
        let port = Self.freePort()
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: try #require(ffmpegPath))
        ffmpeg.arguments = ["-nostdin", "-v", "error", "-re", "-i", clip, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener"]
        try ffmpeg.run()
        defer { ffmpeg.terminate(); ffmpeg.waitUntilExit() }
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
        // Misbehaving from the first byte: the connection fails within open-timeout, one line, status 1.
        for path in ["slow", "endless-header", "huge", "garbage"] {
            let r = try run("hostile-\(path)", ["run", "-e", "stream url=http://127.0.0.1:\(server.port)/\(path) open-timeout=1 timeout=1 -> null",
                                                "--allow-network", "--duration", "20"], timeout: 40)
            #expect(r.result.status == 2, "\(path): \(r.result.stderr)")  // the stream could not start: refused before the run
            #expect(r.result.stderr.split(separator: "\n").count == 1, "\(path): \(r.result.stderr)")
            #expect(r.result.stderr.contains("127.0.0.1:\(server.port)/\(path)"), "\(path): \(r.result.stderr)")
        }
        // Good, then misbehaving: counted as a stall or drop; reconnect=false ends the run after it.
        for path in ["good-then-garbage", "good-then-slow"] {
            let r = try run("hostile-\(path)", ["run", "-e", "stream url=http://127.0.0.1:\(server.port)/\(path) timeout=1.5 reconnect=false -> encode path=out.mp4",
                                                "--allow-network", "--duration", "20"], timeout: 40)
            #expect(r.result.status == 1, "\(path): \(r.result.stderr)")
            #expect(r.count("stalls") + r.count("drops") == 1, "\(path): \(r.connection)")
            #expect((r.stats["framesIn"] as? Int ?? 0) > 10, "\(path): \(r.stats)")
        }
    }

    @Test(.enabled(if: ffmpegPath != nil, "needs ffmpeg (scripts/install-deps.sh)"))
    func aStreamThatChangesSizeIsScaledToItsFirstSize() throws {
        let clip = try tsClip("resize-6s.ts", seconds: 6, resize: true)
        let port = Self.freePort()
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: try #require(ffmpegPath))
        ffmpeg.arguments = ["-nostdin", "-v", "error", "-re", "-i", clip, "-c", "copy", "-f", "mpegts", "-listen", "1", "http://127.0.0.1:\(port)/x.ts"]
        try ffmpeg.run()
        defer { ffmpeg.terminate(); ffmpeg.waitUntilExit() }
        usleep(500_000)
        let r = try run("resize", ["run", "-e", "stream url=http://127.0.0.1:\(port)/x.ts reconnect=false -> encode path=out.mp4",
                                   "--allow-network", "--duration", "5"], timeout: 40)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.count("resizedFrames") > 10, "\(r.connection)")
    }
}
