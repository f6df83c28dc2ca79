import Foundation

/// A deployment test's setup failed (a tool, the server), in words.
public struct DeploymentTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// nginx on 127.0.0.1 serving a deploy tree (tools/deploy/test_server.py), stopped by `stop()`.
public final class DeployServer: @unchecked Sendable {
    public static let token = "test-token-1"
    public let https: String
    /// The same locations over plain HTTP (`http://127.0.0.1:PORT/`).
    public let http: String
    public let ca: String
    /// The harness's folder (nginx.conf, access.log, error.log).
    public let work: String
    private let process: Process
    private let input: Pipe

    /// `cutAfter`: bytes the `/cut/` location sends before it cuts the connection (default the harness's 16 KiB).
    public init(tree: String, keys: String, aliases: [String: String] = [:], cutAfter: Int? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestEnvironment.root.appendingPathComponent("tools/deploy/test_server.py").path, "serve", "--tree", tree,
                             "--keys", keys, "--token", Self.token, "--slow-rate", "262144"]
            + aliases.sorted { $0.key < $1.key }.flatMap { ["--alias", "\($0.key)=\($0.value)"] }
            + (cutAfter.map { ["--cut-after", String($0)] } ?? [])
        input = Pipe()
        let output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The first line is the JSON with the URLs (or the harness fails and says why).
        let line = output.fileHandleForReading.readLine()
        guard let info = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let https = info["https"] as? String,
              let http = info["http"] as? String, let ca = info["ca"] as? String, let work = info["work"] as? String else {
            process.waitUntilExit()
            let why = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw DeploymentTestError("the nginx test server did not start (scripts/install-deps.sh installs nginx-light): \(why)")
        }
        self.https = https
        self.http = http
        self.ca = ca
        self.work = work
    }

    public func stop() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
