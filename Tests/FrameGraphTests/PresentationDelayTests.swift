import FrameGraph
import Testing
import TestSupport

/// Live output with a presentation delay D (each frame shown at the first tick at or after its
/// capture time + D) and rate conversion at the source, on a virtual clock: every count derived.
@Suite struct PresentationDelayTests {
    /// A worker node whose time per frame is given per sequence number.
    final class JitterNode: FilterNode, @unchecked Sendable {
        let delay: @Sendable (Int) -> Double
        init(name: String, delay: @escaping @Sendable (Int) -> Double) {
            self.delay = delay
            super.init(name: name)
        }
        override var execution: Execution { .worker }
        override func process(_ frame: Frame, context: RunContext) throws -> Frame? {
            context.clock.sleep(for: delay(frame.sequence), lane: Lane.current.id)
            return frame
        }
    }

    func run(frames: Int = 300, fps: Double = 30, latency: PresentationDelay, policy: TickPolicy = .reuse,
             node: FilterNode) throws -> (RunReport, [CollectingSink.Entry]) {
        let source = PatternSource(width: 256, height: 32, frameRate: fps, frameCount: frames)
        let sink = CollectingSink(name: "sink")
        source --> node --> sink
        var options = RunOptions(mode: .live, fps: 30, tickPolicy: policy, clock: ManualClock())
        options.latency = latency
        return (try GraphRunner(sources: [source], options: options).run(), sink.entries)
    }

    @Test func jitterBelowTheDelayNeitherDropsNorRepeats() throws {
        // D = 30 ms; the node takes 0 … 29 ms. Ticks at (k + ½)/30 s: frame i (captured at i/30) is due
        // at i/30 + 30 ms, so it is shown at tick i + 1, at i/30 + 50 ms; it is ready by i/30 + 29 ms.
        // Every job ends before the next frame (29 < 33.3 ms): nothing is dropped busy either.
        let (report, entries) = try run(latency: .fixed(0.030), node: JitterNode(name: "net") { Double($0 * 7 % 30) / 1000 })
        #expect(report.framesOut == 300)
        #expect(report.duplicated == 0 && report.droppedLate == 0 && report.droppedBusy == 0)
        #expect(entries.map(\.stamp) == (0..<300).map { Optional($0) })
        #expect(report.presentationDelayMs == 30)
        for (a, b) in zip(entries, entries.dropFirst()) { #expect(abs(b.time - a.time - 1.0 / 30) < 1e-6) }
    }

    @Test func jitterBeyondTheDelayRepeatsATickAndDropsTheLateFrame() throws {
        // D = 10 ms: frame i is due at tick i, (i + ½)/30 s = i/30 + 16.7 ms. Frames take 5 ms, but every
        // tenth (i ≡ 5 mod 10) takes 25 ms and misses tick i: tick i repeats frame i − 1 (duplicated,
        // busy: frame i was captured in time), and at tick i + 1 both i and i + 1 are due, so i + 1 is
        // shown and i is dropped late. 30 such frames: 30 repeats, 30 late, 300 ticks written.
        let slow: @Sendable (Int) -> Double = { $0 % 10 == 5 ? 0.025 : 0.005 }
        let (report, entries) = try run(latency: .fixed(0.010), node: JitterNode(name: "net", delay: slow))
        #expect(report.framesOut == 300)
        #expect(report.duplicated == 30 && report.duplicatedBusy == 30)
        #expect(report.droppedLate == 30 && report.droppedBusy == 0)
        #expect(!entries.contains { $0.stamp.map { $0 % 10 == 5 } ?? false })
        // The same jitter under D = 30 ms: every frame makes its tick.
        let (smooth, _) = try run(latency: .fixed(0.030), node: JitterNode(name: "net", delay: slow))
        #expect(smooth.duplicated == 0 && smooth.droppedLate == 0 && smooth.framesOut == 300)
    }

    /// Moves each frame's capture time by a millisecond or so, as a container's millisecond time
    /// base and a looped clip's rounded length do.
    final class WobbleNode: FilterNode, @unchecked Sendable {
        override func process(_ frame: Frame, context: RunContext) throws -> Frame? {
            var out = frame
            out.captureTime += [0, 0.0012, -0.0012][frame.sequence % 3]
            return out
        }
    }

    @Test func captureTimesThatWobbleKeepTheirTicks() throws {
        // D = 16 ms puts frame i 0.7 ms before tick i ((i + ½)/30 s = i/30 + 16.7 ms). Every third
        // frame stamped 1.2 ms late would be due after that tick (one tick repeated, one frame
        // dropped late, a hundred times); taken to the output's frame grid, every frame keeps its tick.
        let (report, entries) = try run(latency: .fixed(0.016), node: WobbleNode(name: "wobble"))
        #expect(report.framesOut == 300)
        #expect(report.duplicated == 0 && report.droppedLate == 0, "duplicated \(report.duplicated), dropped late \(report.droppedLate)")
        #expect(entries.map(\.stamp) == (0..<300).map { Optional($0) })
    }

    @Test(arguments: [TickPolicy.reuse, .skip])
    func aNetworkSlowerThanTheClockStillRepeatsOrSkipsAsBefore(policy: TickPolicy) throws {
        // 90 frames through a 50 ms node: frames 0, 2, 4 … 88 admitted (45), the odd ones dropped busy.
        // Auto D starts at the first frame's latency, 50 ms, plus a quarter period: 58.3 ms. Frame 2j
        // is then shown at tick 2j + 2 and tick 2j + 3 has nothing new, since frame 2j + 1 was dropped
        // busy: ticks 2 … 90 write 45 new frames and 44 repeats (or 44 skipped ticks), as without D.
        let (report, entries) = try run(frames: 90, latency: .auto(maximum: 0.25), policy: policy,
                                        node: SlowNode(name: "net", delay: 0.050))
        #expect(report.admitted == 45 && report.droppedBusy == 45)
        #expect(abs(report.presentationDelayMs - (50 + 1000.0 / 30 / 4)) < 1e-6)
        #expect(report.presentationDelayChanges.count == 1)
        #expect(report.droppedLate == 0)
        if policy == .reuse {
            #expect(report.framesOut == 89 && report.duplicated == 44 && report.duplicatedBusy == 44)
            #expect(entries.map(\.stamp) == (0..<89).map { Optional(2 * ($0 / 2)) })
        } else {
            #expect(report.framesOut == 45 && report.skippedTicks == 44)
        }
    }

    @Test func autoRaisesTheDelayWhenFramesKeepMissingTheirTick() throws {
        // The first frames take 5 ms (D starts at 5 + 8.3 ms); from frame 30 on they take 20 ms, over
        // D: after two misses D rises to 20 + 8.3 ms and stays there (never lowered mid-run).
        let (report, _) = try run(frames: 120, latency: .auto(maximum: 0.25),
                                  node: JitterNode(name: "net") { $0 < 30 ? 0.005 : 0.020 })
        let changes = report.presentationDelayChanges.map(\.delayMs)
        #expect(changes.count == 2)
        #expect(abs(changes[0] - (5 + 1000.0 / 120)) < 1e-6 && abs(changes[1] - (20 + 1000.0 / 120)) < 1e-6)
        #expect(report.presentationDelayMs == changes[1])
        #expect(report.droppedLate + report.duplicated <= 4, "only the frames before the raise may miss: \(report.table())")
    }

    @Test func theSinkQueueStaysWithinItsBound() throws {
        // D = 200 ms with an instant node: a frame waits 6 periods (and a bit) for its tick, so the
        // queue holds 6 or 7 frames, never more than ⌈0.2 × 30⌉ + 1 = 7.
        let (report, entries) = try run(frames: 90, latency: .fixed(0.200), node: SlowNode(name: "net", delay: 0))
        let sink = try #require(report.nodes.first { $0.name == "sink" })
        #expect(sink.queuedMax >= 6 && sink.queuedMax <= 7)
        #expect(report.framesOut == 90 && report.duplicated == 0 && report.droppedLate == 0)
        #expect(entries.map(\.stamp) == (0..<90).map { Optional($0) })
    }

    @Test func aSixtyFrameSourceIsHalvedBeforeTheNetwork() throws {
        // 120 frames at 60 fps into the 30 fps clock: the frame that starts each 1/30 s period (the even
        // ones) goes on, the odd ones are dropped at the source (droppedRate), so the network works on
        // 60 frames and none arrives late; the output shows frames 0, 2, 4 … one per tick.
        let net = SlowNode(name: "net", delay: 0.005)
        let (report, entries) = try run(frames: 120, fps: 60, latency: .fixed(0.020), node: net)
        #expect(report.droppedRate == 60 && report.framesIn == 60)
        #expect(net.counters.snapshot.received == 60)
        #expect(report.droppedLate == 0 && report.duplicated == 0 && report.droppedBusy == 0)
        #expect(entries.map(\.stamp) == (0..<60).map { Optional(2 * $0) })
        for (a, b) in zip(entries, entries.dropFirst()) { #expect(abs(b.time - a.time - 1.0 / 30) < 1e-6) }
    }
}
