import Foundation
import Testing
import TestSupport

/// Downloads against a hostile server on 127.0.0.1 (tools/deploy/hostile_server.py): a server that
/// trickles a byte every half second, one that sends headers forever, one that never answers — each
/// ends within the deadlines the machine config gives (no wall-clock assertion: the deadlines are
/// the code's, the test only checks that the command ended with the deadline's message, well inside
/// its own generous timeout), and a Ctrl-C ends a wait at once.
@Suite(.serialized) struct HostileDownloadTests {
    /// The hostile server, stopped when the value is released.
    final class Server: @unchecked Sendable {
        let port: Int
        private let process = Process()
        private let input = Pipe()

        init() throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", TestEnvironment.root.appendingPathComponent("tools/deploy/hostile_server.py").path]
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            let line = output.fileHandleForReading.readLine()
            guard let info = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let port = info["port"] as? Int else {
                throw DeploymentTestError("the hostile server did not start: \(String(decoding: line, as: UTF8.self))")
            }
            self.port = port
        }

        deinit {
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// A machine config whose server is `path` on the hostile server, with short limits.
    func machine(_ dir: URL, server: Server, path: String, extra: [String: Any] = [:]) throws -> String {
        var config: [String: Any] = ["format": "framegraph-machine-1", "server": "http://127.0.0.1:\(server.port)/\(path)/",
                                     "publisherKey": String(repeating: "ab", count: 32), "cacheDir": dir.appendingPathComponent("cache").path,
                                     "timeoutSeconds": 2, "attempts": 10, "pullDeadlineSeconds": 4, "requestDeadlineSeconds": 3]
        config.merge(extra) { _, new in new }
        let file = dir.appendingPathComponent("machine-\(path).json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test func aTricklingOrSilentServerEndsAPullAtItsDeadline() throws {
        let server = try Server()
        let dir = TestEnvironment.scratch("hostile-pull")
        for path in ["trickle", "endless-header", "silent", "huge"] {
            let config = try machine(dir, server: server, path: path)
            let r = try runCommand(TestEnvironment.cli, ["models", "pull", "Flowers", "--machine-config", config], timeout: 90)
            #expect(r.status == 2, "\(path): status \(r.status) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(path): \(r.stderr)")
            let bounded = r.stderr.contains("deadline") || r.stderr.contains("timed out") || r.stderr.contains("more than the")
            #expect(bounded, "\(path): \(r.stderr)")
        }
    }

    @Test func ctrlCEndsAPullThatWaitsOnAServer() throws {
        let server = try Server()
        let dir = TestEnvironment.scratch("hostile-interrupt")
        let config = try machine(dir, server: server, path: "trickle", extra: ["pullDeadlineSeconds": 600, "requestDeadlineSeconds": 600, "timeoutSeconds": 600])
        let r = try runCommand(TestEnvironment.cli, ["models", "pull", "Flowers", "--machine-config", config], timeout: 60) { process in
            usleep(1_500_000)
            kill(process.processIdentifier, SIGINT)
        }
        #expect(r.status == 130, "\(r.stderr)")
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil && FileManager.default.fileExists(atPath: TestEnvironment.root.appendingPathComponent("models/cache/efficientnet_lite0.onnx").path),
                   "needs the sample and models/cache/efficientnet_lite0.onnx (scripts/test.sh)"))
    func aRunGivesUpToItsFallbackAtTheFirstUseDeadline() throws {
        let server = try Server()
        let dir = TestEnvironment.scratch("hostile-first-use")
        let config = try machine(dir, server: server, path: "trickle", extra: ["firstUseDeadlineSeconds": 2])
        let stats = dir.appendingPathComponent("s.json").path
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/label-video.fg", "--input", TestEnvironment.portraitSample ?? "",
                                                     "--set", "source.duration=0.2", "--set", "labels.model=collection:Flowers/Classifier",
                                                     "--set", "labels.fallback=efficientnet_lite0", "--machine-config", config,
                                                     "--output", dir.appendingPathComponent("o.mp4").path, "--stats", stats, "--quiet"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("using the bundled fallback efficientnet_lite0"), "\(r.stderr)")
        let json = try String(contentsOfFile: stats, encoding: .utf8)
        #expect(json.contains("fallback efficientnet_lite0"))
    }
}
