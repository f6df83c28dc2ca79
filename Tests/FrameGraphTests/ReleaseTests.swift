import FrameGraph
import Foundation
import Testing
import TestSupport

/// After ``GraphRunner/run(progress:)`` returns, the runner lets go of what the run made (inboxes,
/// workers, the frames they held): a library process that runs graph after graph keeps nothing of
/// them, and the nodes die with the last reference their builder holds.
@Suite struct ReleaseTests {
    /// A composite that keeps nothing itself: port 0 passes through.
    final class PassComposite: CompositeNode, @unchecked Sendable {
        override var inputPorts: [String] { ["frame", "side"] }
        override var execution: Execution { .worker }
    }

    /// Runs source → slow worker → composite (worker) ← source, → sink, and returns weak references
    /// to every node.
    func runOnce(mode: RunMode) throws -> [() -> AnyObject?] {
        let source = PatternSource(width: 256, height: 32, frameCount: 20)
        let slow = SlowNode(name: "slow", delay: 0.01)
        let composite = PassComposite(name: "join")
        let sink = NullSink(name: "out")
        source --> slow
        slow.addTarget(composite, port: 0)
        source.addTarget(composite, port: 1)
        composite --> sink
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: mode, clock: ManualClock())).run()
        #expect(report.framesOut > 0)
        return [source, slow, composite, sink].map { node in { [weak node] in node } }
    }

    @Test func nodesAreReleasedAfterEveryRun() throws {
        for i in 0..<50 {
            let weakNodes = try runOnce(mode: i % 2 == 0 ? .live : .offline)
            for node in weakNodes { #expect(node() == nil, "a node outlived its run") }
        }
    }

    /// The child half of the next test: runs only in a process of its own (no other test beside it),
    /// prints resident memory after 20 warm-up runs and after 200 more.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FRAMEGRAPH_RELEASE_LOOP"] == "1"))
    func releaseLoopChild() throws {
        for _ in 0..<20 { _ = try runOnce(mode: .live) }
        let before = residentBytes(of: getpid()) ?? 0
        for i in 0..<200 { _ = try runOnce(mode: i % 2 == 0 ? .live : .offline) }
        let after = residentBytes(of: getpid()) ?? 0
        print("release-loop RSS before \(before) after \(after)")
    }

    @Test func twoHundredRunsKeepMemoryFlat() throws {
        guard !TestEnvironment.isSanitized else { return }  // sanitizers hold freed memory back
        // In a process of its own: other tests running beside this one would move its RSS.
        let r = try runCommand(CommandLine.arguments[0], ["--testing-library", "swift-testing", "--filter", "releaseLoopChild"],
                               environment: ["FRAMEGRAPH_RELEASE_LOOP": "1"], timeout: 300)
        let line = try #require(r.stdout.split(separator: "\n").first { $0.contains("release-loop RSS") }, "child: \(r.stdout) \(r.stderr)")
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        try #require(numbers.count == 2)
        // 200 runs that each kept their graph (4 nodes, 2 workers, pooled frames, a clock) would add
        // megabytes; a flat process stays within 2 MiB.
        #expect(numbers[1] - numbers[0] < 2 << 20, "RSS grew from \(numbers[0]) to \(numbers[1]) bytes over 200 runs")
    }
}
