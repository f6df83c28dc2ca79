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

    @Test func nodesAreReleasedAfterTheRunAnd200RunsKeepMemoryFlat() throws {
        // Warm up (first-time allocations of the runtime and the buffer pool), then measure.
        for _ in 0..<20 { _ = try runOnce(mode: .live) }
        let before = residentBytes(of: getpid()) ?? 0
        for i in 0..<200 {
            let weakNodes = try runOnce(mode: i % 2 == 0 ? .live : .offline)
            for node in weakNodes { #expect(node() == nil, "a node outlived its run") }
        }
        let after = residentBytes(of: getpid()) ?? 0
        // 200 runs that each leaked their graph (4 nodes, 2 workers, a few pooled 256×32 frames) would
        // add megabytes; a flat process stays within 2 MiB of noise. (Sanitizers hold freed memory.)
        if !TestEnvironment.isSanitized {
            #expect(after - before < 2 << 20, "RSS grew by \(after - before) bytes over 200 runs")
        }
    }
}
