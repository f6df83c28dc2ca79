import Foundation
import Testing
import TestSupport

/// Interrupts as they come: a closed terminal (SIGHUP) finalizes like Ctrl-C, a second Ctrl-C leaves
/// no temporary file behind, and after a stop the wait for work in flight is bounded by --stop-grace.
@Suite(.serialized) struct InterruptTests {
    func framegraph(_ args: [String], timeout: Double = 120, whileRunning: ((Process) -> Void)? = nil) throws -> CommandResult {
        try runCommand(TestEnvironment.cli, args, timeout: timeout, whileRunning: whileRunning)
    }

    /// A looping pattern pipeline that encodes until stopped.
    func loopingPipeline(_ dir: URL, output: String) throws -> String {
        let path = dir.appendingPathComponent("loop.fg").path
        try "source = pattern width=320 height=240 frames=1000000\nout = encode path=\(output)\nsource -> out\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Whether `dir` holds only the names given (no `.fg-…` temporary left).
    func names(_ dir: URL) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() }

    @Test func aClosedTerminalFinalizesTheOutputLikeCtrlC() throws {
        let dir = TestEnvironment.scratch("interrupt-hup")
        let out = dir.appendingPathComponent("o.mp4").path, stats = dir.appendingPathComponent("s.json").path
        let pipeline = try loopingPipeline(dir, output: out)
        let r = try framegraph(["run", pipeline, "--mode", "live", "--stats", stats, "--quiet"]) { p in
            usleep(1_500_000)
            kill(p.processIdentifier, SIGHUP)
        }
        #expect(r.status == 130, "\(r.stderr)")
        let frames = try TestEnvironment.decodeAll(out).frames.count
        #expect(frames > 10, "the output plays: \(frames) frames")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        #expect(json?["interrupted"] as? Bool == true)
        #expect(try names(dir) == ["loop.fg", "o.mp4", "s.json"])
    }

    @Test func aSecondCtrlCLeavesNoTemporaryFile() throws {
        let dir = TestEnvironment.scratch("interrupt-twice")
        let out = dir.appendingPathComponent("o.mp4").path
        // A node that takes 30 s a frame: the first Ctrl-C waits for it (within the grace of 60 s),
        // the second ends the process at once — its temporary output removed, the old file kept.
        try Data("old".utf8).write(to: URL(fileURLWithPath: out))
        let pipeline = dir.appendingPathComponent("slow.fg").path
        try "source = pattern frames=100\nwait = slow ms=30000\nout = encode path=\(out)\nsource -> wait -> out\n"
            .write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", pipeline, "--stop-grace", "60", "--quiet"], timeout: 60) { p in
            usleep(1_500_000)
            kill(p.processIdentifier, SIGINT)
            usleep(500_000)
            kill(p.processIdentifier, SIGINT)
        }
        #expect(r.status == 130, "\(r.stderr)")
        #expect(try names(dir) == ["o.mp4", "slow.fg"])
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old")
    }

    @Test func theWaitForWorkInFlightAfterAStopIsBounded() throws {
        // --duration 0.5 live with a node of 60 s a frame: after the stop, its frame in flight gets
        // --stop-grace 1; then the output is finalized without it (a warning says so).
        let dir = TestEnvironment.scratch("interrupt-grace")
        let out = dir.appendingPathComponent("o.mp4").path
        let pipeline = dir.appendingPathComponent("slow.fg").path
        try "source = pattern frames=100\nwait = slow ms=60000\nout = encode path=\(out)\nsource -> out\nsource -> wait -> null\nnull = null\n"
            .replacingOccurrences(of: "source -> wait -> null\nnull = null\n", with: "sink = null\nsource -> wait -> sink\n")
            .write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", pipeline, "--mode", "live", "--duration", "0.5", "--stop-grace", "1", "--quiet"], timeout: 50)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("work still in flight 1 s after the stop is dropped"), "\(r.stderr)")
        #expect(try TestEnvironment.decodeAll(out).frames.count >= 10)
    }
}
