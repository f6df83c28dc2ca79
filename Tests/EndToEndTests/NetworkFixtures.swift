import Foundation
import FrameGraph
import Testing
import TestSupport

/// What the network-source suites share: the real servers they start on 127.0.0.1 (GStreamer's RTSP
/// server through tools/streams/rtsp_server.py, ffmpeg as a sender or listener), free ports, and a
/// run of the CLI with its statistics and the source's connection counters.
enum NetworkFixtures {
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
    /// nginx for the HLS test (scripts/install-deps.sh installs nginx-light; tools/deploy/test_server.py runs it).
    static let hasNginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].contains { FileManager.default.isExecutableFile(atPath: $0) }

    struct ServerFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// A server process printing `{"port": N}` first; stopped (stdin closed, then terminated) on release.
    final class Server: @unchecked Sendable {
        let port: Int
        /// The addresses it serves, when it says (the RTSP server's mounts).
        let urls: [String]
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
            let line = output.fileHandleForReading.readLine()
            guard let info = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let port = info["port"] as? Int else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw ServerFailure(description: "the server did not start: \(String(decoding: line, as: UTF8.self))")
            }
            self.port = port
            urls = info["urls"] as? [String] ?? []
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

        /// GStreamer's RTSP server (tools/streams/rtsp_server.py) with its options (`--tls`, `--mounts a,b`, `--user`).
        static func rtsp(port: Int = 0, extra: [String] = []) throws -> Server {
            try Server(systemPython, [TestEnvironment.root.appendingPathComponent("tools/streams/rtsp_server.py").path, "--port", String(port)] + extra)
        }
    }

    /// An ffmpeg process sending or serving a stream, killed on release.
    final class FFmpegSender: @unchecked Sendable {
        private let process = Process()

        init(_ arguments: [String]) throws {
            guard let ffmpeg = ffmpegPath else { throw ServerFailure(description: "ffmpeg is not installed (scripts/install-deps.sh)") }
            process.executableURL = URL(fileURLWithPath: ffmpeg)
            process.arguments = ["-nostdin", "-v", "error"] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
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

    /// Waits (polling, at most `seconds`) until `condition` holds; returns whether it did.
    static func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    /// The run's statistics and the source node's connection counters.
    struct Run {
        var dir: URL
        var result: CommandResult
        var stats: [String: Any]
        var connection: [String: Any]
        var framesOut: Int { stats["framesOut"] as? Int ?? -1 }
        func count(_ key: String) -> Int { connection[key] as? Int ?? -1 }
        /// The per-stream entries of a run with several streams.
        var streams: [[String: Any]] { stats["streams"] as? [[String: Any]] ?? [] }
        /// Every source node's connection counters, in node order.
        var connections: [[String: Any]] { (stats["nodes"] as? [[String: Any]] ?? []).compactMap { $0["connection"] as? [String: Any] } }
    }

    /// Runs the CLI in a fresh scratch folder with `--stats` and `--quiet`.
    static func run(_ name: String, _ arguments: [String], timeout: Double = 60, whileRunning: ((Process) -> Void)? = nil) throws -> Run {
        let dir = TestEnvironment.scratch("network-\(name)")
        let stats = dir.appendingPathComponent("stats.json").path
        let result = try runCommand(TestEnvironment.cli, arguments + ["--stats", stats, "--quiet"], timeout: timeout, in: dir, whileRunning: whileRunning)
        let json = (try? Data(contentsOf: URL(fileURLWithPath: stats))).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        let nodes = json["nodes"] as? [[String: Any]] ?? []
        let connection = nodes.compactMap { $0["connection"] as? [String: Any] }.first ?? [:]
        return Run(dir: dir, result: result, stats: json, connection: connection)
    }

    /// Frames in a video file, counted by ffprobe (decoding every frame).
    static func frameCount(_ path: String) throws -> Int {
        guard let ffprobe = ffprobePath else { return -1 }
        let r = try runCommand(ffprobe, ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                                         "-of", "csv=p=0", path], timeout: 60)
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// A short MPEG-TS clip made with ffmpeg (320×240 moving pattern, 30 fps, H.264 with a keyframe
    /// every 15 frames); `resize` makes its second half 160×120.
    static func tsClip(_ name: String, seconds: Int = 4, resize: Bool = false) throws -> String {
        let ffmpeg = try #require(ffmpegPath, "ffmpeg is not installed (scripts/install-deps.sh)")
        let dir = TestEnvironment.scratch("network-clips-\(name)")
        let path = dir.appendingPathComponent(name).path
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
}
