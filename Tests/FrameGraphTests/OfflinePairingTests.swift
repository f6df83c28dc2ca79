import Foundation
import FrameGraph
import Testing
import TestSupport

/// Offline, a composite fed by two sources of their own pairs every frame: the faster source waits
/// for its partners instead of losing frames to a full waiting list.
@Suite struct OfflinePairingTests {
    /// Emits its first input (the pairing is what is tested).
    final class First: CompositeNode, @unchecked Sendable {
        override var inputPorts: [String] { ["a", "b"] }
        override func combine(_ frames: [Frame], context: RunContext) throws -> Frame? { frames[0] }
    }

    /// A source that sleeps before every frame (a slow decoder).
    final class SlowPattern: SourceNode, @unchecked Sendable {
        let inner: PatternSource
        init(name: String, frames: Int) {
            inner = PatternSource(name: name + "-inner", width: 256, height: 32, frameCount: frames)
            super.init(name: name)
        }
        override func start(context: RunContext) throws { try inner.start(context: context) }
        override func outputDescription() throws -> FrameDescription { try inner.outputDescription() }
        override func nextFrame(context: RunContext) throws -> Frame? {
            Thread.sleep(forTimeInterval: 0.002)
            return try inner.nextFrame(context: context)
        }
    }

    @Test func aFastSourceWaitsForItsPartnersAndNothingIsDropped() throws {
        let fast = PatternSource(name: "fast", width: 256, height: 32, frameCount: 60)
        let slow = SlowPattern(name: "slow", frames: 50)
        let pair = First(name: "pair")
        let sink = CollectingSink(name: "sink")
        fast.addTarget(pair, port: 0)
        slow.addTarget(pair, port: 1)
        pair.addTarget(sink)
        let report = try GraphRunner(sources: [fast, slow], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        // Every frame of the shorter source found its partner (before: the fast source ran more than
        // 8 frames ahead and its frames were dropped as late).
        #expect(sink.entries.map(\.sequence) == Array(0..<50), "\(sink.entries.count) paired")
        let late = pair.counters.snapshot.droppedLate
        #expect(late <= 10, "only the 10 frames without a partner may go: \(late)")
    }
}
