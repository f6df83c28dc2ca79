import FrameGraph
import Testing
import TestSupport

/// Wiring errors found before the first frame, and how composites pair their inputs, on a virtual
/// clock (exact schedules, no wall-clock time).
@Suite struct GraphValidationTests {
    /// A composite that passes port 0 on and records which sequence numbers it combined.
    final class PairRecorder: CompositeNode, @unchecked Sendable {
        override var inputPorts: [String] { ["frame", "side"] }
        private let recorded = Protected<[(Int, Int)]>([])
        var pairs: [(Int, Int)] { recorded.withLock { $0 } }
        override func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
            recorded.withLock { $0.append((frames[0].sequence, frames[1].sequence)) }
            return frames[0]
        }
    }

    func source(_ frames: Int = 30) -> PatternSource { PatternSource(width: 256, height: 32, frameCount: frames) }

    @Test func aCycleIsRefusedNamingANodeOfIt() throws {
        let s = source(), join = PairRecorder(name: "join"), back = SlowNode(name: "back", delay: 0)
        s --> join.port(0)
        join --> back --> join.port(1)
        join --> NullSink(name: "out")
        #expect(throws: GraphError.cycle(node: "join")) { try GraphRunner(sources: [s], options: RunOptions(clock: ManualClock())).validate() }
    }

    @Test func aPortConnectedTwiceIsRefused() throws {
        let s = source(), gray = SlowNode(name: "f", delay: 0)
        s --> gray
        s --> gray
        gray --> NullSink(name: "out")
        #expect(throws: GraphError.portConnectedTwice(node: "f", port: "in")) {
            try GraphRunner(sources: [s], options: RunOptions(clock: ManualClock())).validate()
        }
    }

    @Test func anUnusedOutputIsRefused() throws {
        let s = source()
        s --> SlowNode(name: "dangling", delay: 0)
        #expect(throws: GraphError.outputUnused(node: "dangling")) {
            try GraphRunner(sources: [s], options: RunOptions(clock: ManualClock())).validate()
        }
    }

    @Test func newestPairingTakesTheLatestResultLive() throws {
        // Frames at k/30 s; a 50 ms worker admits frames 0, 2, 4 … and finishes frame 2j at
        // (2j + 1.5)/30 s. When frame k reaches the composite, the newest finished result is that of
        // frame 2⌊(k − 2)/2⌋ for k ≥ 2. Frame 0 finds none yet and waits for the first result; frame 1
        // (33.3 ms) arrives before it (50 ms) and takes its place (frame 0 dropped late at the
        // composite), so frame 1 pairs with result 0 when it comes.
        let s = source(), join = PairRecorder(name: "join")
        s --> join.port(0)
        s --> SlowNode(name: "slow", delay: 0.050) --> join.port(1)
        join --> NullSink(name: "out")
        let report = try GraphRunner(sources: [s], options: RunOptions(mode: .live, clock: ManualClock())).run()
        let expected = [(1, 0)] + (2..<30).map { k in (k, 2 * ((k - 2) / 2)) }
        #expect(join.pairs.map(\.0) == expected.map(\.0))
        #expect(join.pairs.map(\.1) == expected.map(\.1))
        #expect(report.nodes.first { $0.name == "join" }?.droppedLate == 1)
    }

    @Test func samePairingMatchesEveryFrameWithItsOwnResultOffline() throws {
        let s = source(), join = PairRecorder(name: "join")
        s --> join.port(0)
        s --> SlowNode(name: "slow", delay: 0.050) --> join.port(1)
        join --> NullSink(name: "out")
        let report = try GraphRunner(sources: [s], options: RunOptions(mode: .offline, clock: ManualClock())).run()
        #expect(join.pairs.map(\.0) == Array(0..<30))
        #expect(join.pairs.allSatisfy { $0.0 == $0.1 })
        #expect(report.framesOut == 30 && report.droppedLate == 0)
    }
}
