import FrameGraph
import Testing
import TestSupport

/// The first second of a live run on a virtual clock: the first frames wait for the first result
/// instead of being lost, and an auto delay D set by a slow first frame settles lower once the
/// frames after it show what the graph really takes — every count derived by hand.
@Suite struct StartOfLiveRunTests {
    /// Passes port 0 through (the pairing is what is tested) and records the pairs it saw.
    final class PassComposite: CompositeNode, @unchecked Sendable {
        private let seen = Protected<[[Int]]>([])
        var pairs: [[Int]] { seen.withLock { $0 } }
        override var inputPorts: [String] { ["frame", "result"] }
        override func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
            seen.withLock { $0.append(frames.map(\.sequence)) }
            return frames[0]
        }
    }

    /// A filter on the source's thread whose time per frame is given per sequence number.
    final class InlineJitter: FilterNode, @unchecked Sendable {
        let delay: @Sendable (Int) -> Double
        init(name: String, delay: @escaping @Sendable (Int) -> Double) {
            self.delay = delay
            super.init(name: name)
        }
        override func process(_ frame: Frame, context: RunContext) throws -> Frame? {
            context.clock.sleep(for: delay(frame.sequence), lane: Lane.current.id)
            return frame
        }
    }

    /// source → port 0 of a composite, and source → a `network`-second worker → port 1.
    func pairingRun(network: Double, frames: Int = 60) throws -> (RunReport, PassComposite, [CollectingSink.Entry]) {
        let source = PatternSource(width: 256, height: 16, frameCount: frames)
        let net = SlowNode(name: "net", delay: network)
        let composite = PassComposite(name: "matte")
        let sink = CollectingSink(name: "sink")
        source --> net
        net.addTarget(composite, port: 1)
        source.addTarget(composite, port: 0)
        composite --> sink
        var options = RunOptions(mode: .live, fps: 30, clock: ManualClock())
        options.latency = .fixed(0.060)
        return (try GraphRunner(sources: [source], options: options).run(), composite, sink.entries)
    }

    @Test func theFirstFrameWaitsForTheFirstResult() throws {
        // A 20 ms network: frame 0 reaches the composite at once, its result at 20 ms; it waits for
        // it and pairs with its own result. Every later frame pairs with the previous one's result
        // (the newest there is). Nothing is dropped late: the output starts with frame 0.
        let (report, composite, entries) = try pairingRun(network: 0.020)
        #expect(composite.pairs.first == [0, 0])
        #expect(composite.pairs.dropFirst().allSatisfy { $0[1] == $0[0] - 1 }, "\(composite.pairs.prefix(5))")
        #expect(composite.pairs.count == 60)
        #expect(report.droppedLate == 0 && report.duplicated == 0 && report.droppedBusy == 0, "\(report.table())")
        #expect(entries.compactMap(\.stamp) == Array(0..<60))
    }

    @Test func framesBeforeASlowFirstResultWaitForIt() throws {
        // A 50 ms network: frame 1 (33.3 ms) arrives before frame 0's result (50 ms); both wait for
        // it and pair with result 0 when it comes, in order (at the start of a run of many streams the
        // first results come late: the streams' first frames queue for the shared network). The
        // network was busy with frame 0 when frame 1 came (dropped busy there), and so on every other
        // frame; no frame is lost at the composite or the sink, and the output starts with frame 0.
        let (report, composite, entries) = try pairingRun(network: 0.050)
        #expect(composite.pairs.prefix(3) == [[0, 0], [1, 0], [2, 0]])
        let matte = try #require(report.nodes.first { $0.name == "matte" })
        #expect(matte.droppedLate == 0)
        #expect(composite.pairs.count == 60)
        #expect(report.droppedLate == 0 && report.duplicated == 0, "\(report.table())")
        #expect(entries.compactMap(\.stamp) == Array(0..<60))
    }

    @Test func framesWaitingForTheFirstResultAreBounded() throws {
        // A 120 ms network and D fixed at 60 ms: a sink holds ⌈60 / 33.3⌉ + 1 = 3 frames, and so does
        // the composite before the first result: frames 0…3 arrive before it (0, 33.3, 66.7, 100 ms),
        // frame 0 is dropped late when frame 3 comes, frames 1…3 pair with result 0 at 120 ms.
        let (report, composite, _) = try pairingRun(network: 0.120)
        #expect(composite.pairs.prefix(3) == [[1, 0], [2, 0], [3, 0]])
        #expect(report.nodes.first { $0.name == "matte" }?.droppedLate == 1)
        #expect(composite.pairs.count == 59)
    }

    @Test func theFirstDelayKnownWhileTheClockSleepsCostsNoTick() throws {
        // A 24 ms network: frame 0 reaches the sink at 24 ms, and auto D starts at 24 + 8.3 = 32.3 ms,
        // a phase of 0.97 period. The clock, still at the fixed phase 0.5, was asleep towards its tick
        // at 50 ms when D became known. That tick is timed again with D (32.3 ms: frame 0's own), so
        // the ticks move to 0.97 before anything is written: frame 1 is shown at 65.6 ms, not replaced
        // by frame 2 at a tick 1.47 periods after frame 0's (one frame dropped late at the start).
        let source = PatternSource(width: 256, height: 16, frameCount: 60)
        let sink = CollectingSink(name: "sink")
        source --> SlowNode(name: "net", delay: 0.024) --> sink
        var options = RunOptions(mode: .live, fps: 30, clock: ManualClock())
        options.latency = .auto(maximum: 0.25)
        options.tickPhaseFollowsDelay = true
        let report = try GraphRunner(sources: [source], options: options).run()
        #expect(abs((report.presentationDelayChanges.first?.delayMs ?? 0) - (24 + 1000.0 / 120)) < 1e-6)
        #expect(report.droppedLate == 0 && report.duplicated == 0 && report.droppedBusy == 0, "\(report.table())")
        #expect(sink.entries.compactMap(\.stamp) == Array(0..<60))
    }

    func settlingRun(follow: Bool) throws -> (RunReport, [CollectingSink.Entry]) {
        // Frame 0 takes 45 ms on the source's thread (a slow first decode, say), the others 5 ms.
        let source = PatternSource(width: 256, height: 16, frameCount: 120)
        let sink = CollectingSink(name: "sink")
        source --> InlineJitter(name: "decode") { $0 == 0 ? 0.045 : 0.005 } --> sink
        var options = RunOptions(mode: .live, fps: 30, clock: ManualClock())
        options.latency = .auto(maximum: 0.25)
        options.tickPhaseFollowsDelay = follow
        return (try GraphRunner(sources: [source], options: options).run(), sink.entries)
    }

    @Test func autoDelaySettlesBelowASlowFirstFrame() throws {
        // Auto D starts at frame 0's 45 ms plus a quarter period: 53.3 ms. Frame 1, due at 33.3 ms,
        // starts at 45 ms and is ready at 50 ms (16.7 ms after capture); every later frame 5 ms after.
        // After a second of frames D settles on their second-highest latency plus the margin, 13.3 ms,
        // but by less than a period at once: 53.3 − 30 = 23.3 ms. The ticks move with D, so every
        // frame is written once, in order, none late or repeated, and from then on 23.3 ms after capture.
        let (report, entries) = try settlingRun(follow: true)
        let changes = report.presentationDelayChanges.map(\.delayMs)
        #expect(changes.count == 2)
        #expect(abs(changes[0] - (45 + 1000.0 / 120)) < 1e-6)
        #expect(abs(changes[1] - (45 + 1000.0 / 120 - 30)) < 1e-6)
        #expect(report.framesOut == 120 && report.droppedLate == 0 && report.duplicated == 0, "\(report.table())")
        #expect(entries.compactMap(\.stamp) == Array(0..<120))
        #expect(abs(report.endToEnd.p50 / changes[1] - 1) < 0.02)  // within a bucket of the histogram
        // With the ticks at a fixed phase, D is never lowered (a frame due sooner would meet the one
        // before it at a tick): it stays at the first frame's.
        let (fixed, _) = try settlingRun(follow: false)
        #expect(fixed.presentationDelayChanges.count == 1)
        #expect(fixed.droppedLate == 0 && fixed.duplicated == 0)
    }
}
