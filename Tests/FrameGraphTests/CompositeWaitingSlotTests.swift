import FrameGraph
import Testing
import TestSupport

/// A live composite on its own worker keeps one frame waiting while it works (a leaky queue of one),
/// checked exactly against the schedule with a virtual clock. Frames arrive at i/30 s.
@Suite struct CompositeWaitingSlotTests {
    /// Passes port 0 through after sleeping `work(sequence)` seconds on the run's clock, and
    /// remembers which frames it composited.
    final class TimedComposite: CompositeNode, @unchecked Sendable {
        let work: @Sendable (Int) -> Double
        private let seen = Protected<[Int]>([])
        var composited: [Int] { seen.withLock { $0 } }

        init(name: String, work: @escaping @Sendable (Int) -> Double) {
            self.work = work
            super.init(name: name)
        }

        override var inputPorts: [String] { ["frame", "side"] }
        override var execution: Execution { .worker }

        override func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
            seen.withLock { $0.append(frames[0].sequence) }
            context.clock.sleep(for: work(frames[0].sequence), lane: Lane.current.id)
            return frames[0]
        }
    }

    /// `latency`: the presentation delay (a frame is written at the first tick 30 ms after capture).
    func run(frames: Int = 90, latency: Double = 0.030, work: @escaping @Sendable (Int) -> Double) throws
        -> (RunReport, TimedComposite, [CollectingSink.Entry]) {
        let source = PatternSource(width: 256, height: 32, frameCount: frames)
        let composite = TimedComposite(name: "matte", work: work)
        let sink = CollectingSink(name: "sink")
        source.addTarget(composite, port: 1)  // the side port first, so that frame 0 finds a partner
        source.addTarget(composite, port: 0)
        composite --> sink
        var options = RunOptions(mode: .live, fps: 30, clock: ManualClock())
        options.tickPhase = 0.5
        options.latency = .fixed(latency)
        let report = try GraphRunner(sources: [source], options: options).run()
        return (report, composite, sink.entries)
    }

    @Test func oneLongJobLosesNoFrame() throws {
        // Frame 10 takes 45 ms, the others 10 ms: frame 11 arrives (at 366.7 ms) while frame 10 is
        // still being composited (until 378.3 ms). It waits and is composited next (until 388.3 ms),
        // before frame 12 arrives at 400 ms. Refusing it instead would lose it.
        let (report, composite, entries) = try run { $0 == 10 ? 0.045 : 0.010 }
        #expect(composite.composited == Array(0..<90))
        let node = try #require(report.nodes.first { $0.name == "matte" })
        #expect(node.processed == 90 && node.droppedBusy == 0)
        #expect(report.droppedBusy == 0)
        // Every frame reaches the output at its own tick: frame 11, 21.7 ms after its capture, is
        // within the 30 ms delay like the others.
        #expect(entries.compactMap(\.stamp) == Array(0..<90))
        #expect(report.droppedLate == 0 && report.duplicated == 0)
    }

    @Test func anOverloadedCompositeRunsBackToBackOnTheNewestFrame() throws {
        // 55.5 ms per frame, frames every 33.3 ms: the worker never idles. Job j starts at 55.5·j ms
        // with the newest frame that has arrived, ⌊1.665·j⌋; a frame that is overtaken in the slot
        // by a newer one before the worker is free is dropped-busy. Drop-while-busy with no slot
        // would composite only frames 0, 2, 4 … (45 of 90), idling between them.
        let (report, composite, _) = try run { _ in 0.0555 }
        let expected = (0..<55).map { j in Int((1.665 * Double(j)).rounded(.down)) }
        #expect(composite.composited == expected)
        let node = try #require(report.nodes.first { $0.name == "matte" })
        #expect(node.processed == 55)
        #expect(node.droppedBusy == 35)
        #expect(report.droppedBusy == 35)
        #expect(node.processed + node.droppedBusy == 90)
    }
}
