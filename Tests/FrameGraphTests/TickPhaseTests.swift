import FrameGraph
import TestSupport
import Testing

/// Live ticks that follow the presentation delay (``RunOptions/tickPhaseFollowsDelay``): a frame is
/// written the moment it is due, not at the next half-period tick.
@Suite struct TickPhaseTests {
    func run(follow: Bool) throws -> (RunReport, [CollectingSink.Entry]) {
        let source = PatternSource(width: 256, height: 32, frameRate: 30, frameCount: 90)
        let sink = CollectingSink(name: "sink")
        source --> SlowNode(name: "net", delay: 0.020) --> sink
        var options = RunOptions(mode: .live, fps: 30, clock: ManualClock())
        options.latency = .fixed(0.030)
        options.tickPhaseFollowsDelay = follow
        return (try GraphRunner(sources: [source], options: options).run(), sink.entries)
    }

    @Test func ticksFallDAfterEachSlot() throws {
        // D = 30 ms, work 20 ms. Following D the ticks fall at k/30 + 30 ms (phase 0.9): frame i,
        // captured at i/30 and ready at i/30 + 20 ms, is due at i/30 + 30 ms, exactly tick i, and
        // written then: every frame 30 ms after capture, nothing late or repeated.
        let (report, entries) = try run(follow: true)
        #expect(report.framesOut == 90 && report.duplicated == 0 && report.droppedLate == 0)
        #expect(entries.map(\.stamp) == (0..<90).map { Optional($0) })
        for (i, e) in entries.enumerated() { #expect(abs(e.time - entries[0].time - Double(i) / 30) < 1e-6) }
        #expect(abs(report.endToEnd.p50 - 30) < 1 && abs(report.endToEnd.max - 30) < 1e-3)
        // At the fixed half-period phase (ticks at k/30 + 16.7 ms) the same frame waits for tick i + 1,
        // at i/30 + 50 ms.
        let (fixed, _) = try run(follow: false)
        #expect(fixed.framesOut == 90 && fixed.duplicated == 0 && fixed.droppedLate == 0)
        #expect(abs(fixed.endToEnd.p50 - 50) < 1.5)
    }
}
