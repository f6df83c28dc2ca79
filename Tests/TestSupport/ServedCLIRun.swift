import Foundation
import FrameGraph

/// A run of the built CLI (`framegraph run … --serve`) whose standard error and output are read while
/// it runs, so a test learns where it serves.
public final class ServedCLIRun {
    public let process = Process()
    private let errors = Protected(Data())
    private let output = Protected(Data())

    public init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: TestEnvironment.cli)
        process.arguments = arguments
        process.currentDirectoryURL = TestEnvironment.root
        let err = Pipe(), out = Pipe()
        process.standardError = err
        process.standardOutput = out
        let errors = self.errors, output = self.output
        err.fileHandleForReading.readabilityHandler = { h in let d = h.availableData; errors.withLock { $0.append(d) } }
        out.fileHandleForReading.readabilityHandler = { h in let d = h.availableData; output.withLock { $0.append(d) } }
        try process.run()
    }

    public var stderr: String { String(decoding: errors.withLock { $0 }, as: UTF8.self) }
    public var stdout: String { String(decoding: output.withLock { $0 }, as: UTF8.self) }

    /// "http://127.0.0.1:PORT" once the run says where it serves.
    public func base(timeout: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let range = stderr.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) { return String(stderr[range]) }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw TestClips.Failure(description: "the run did not say where it serves: \(stderr)")
    }

    public func wait(timeout: Double = 30) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
