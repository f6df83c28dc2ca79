import FrameGraph
import TestSupport
import Testing

/// The scheduler's counts, checked exactly against the schedule with a virtual clock.
@Suite struct SchedulerTests {
    func run(mode: RunMode, delay: Double?, frames: Int = 90, policy: TickPolicy = .reuse)
        throws -> (RunReport, [CollectingSink.Entry]) {
        let source = PatternSource(width: 256, height: 32, frameCount: frames)
        let sink = CollectingSink(name: "sink")
        if let delay {
            source --> SlowNode(name: "slow", delay: delay) --> sink
        } else {
            source --> sink
        }
        var options = RunOptions(mode: mode, fps: 30, tickPolicy: policy, clock: ManualClock())
        options.tickPhase = 0.5
        let report = try GraphRunner(sources: [source], options: options).run()
        return (report, sink.entries)
    }

    @Test func liveSlow50msAdmitsEveryOtherFrameAndKeepsOneOutputPerTick() throws {
        // Frames at i/30 s; a 50 ms job started at frame 2j ends at (2j + 1.5)/30 s, before frame 2j+2
        // arrives, so frames 0, 2, 4 … are admitted and odd frames are refused. Ticks fire at
        // (k + 0.5)/30 s: tick 2j+1 writes result j, tick 2j+2 repeats it; the run ends at tick 89.
        let (report, entries) = try run(mode: .live, delay: 0.050)
        #expect(report.framesIn == 90)
        #expect(report.admitted == 45)
        #expect(report.droppedBusy == 45)
        #expect(report.framesOut == 89)
        #expect(report.duplicated == 44)
        #expect(report.droppedLate == 0)
        #expect(report.skippedTicks == 0)
        #expect(entries.map(\.index) == Array(0..<89))
        let expectedStamps = (0..<89).map { k in 2 * (k / 2) }
        #expect(entries.map(\.stamp) == expectedStamps)
        // One output per tick: consecutive outputs are exactly one period apart.
        for (a, b) in zip(entries, entries.dropFirst()) {
            #expect(abs((b.time - a.time) - 1.0 / 30) < 1e-6)
        }
        // End-to-end latency of new frames: 50 ms of work, written at the tick that same moment.
        #expect(abs(report.endToEnd.p50 - 50) < 1.5)
        let slow = try #require(report.nodes.first { $0.name == "slow" })
        #expect(abs(slow.latency.p50 - 50) < 1.5)
    }

    @Test func live70msAdmitsOneFrameInThree() throws {
        // A 70 ms job spans more than two frame periods: frames 0, 3, 6 … are admitted.
        let (report, _) = try run(mode: .live, delay: 0.070)
        #expect(report.admitted == 30)
        #expect(report.droppedBusy == 60)
        #expect(report.framesIn == report.admitted + report.droppedBusy)
    }

    @Test func liveSkipPolicyWritesOnlyNewFrames() throws {
        let (report, entries) = try run(mode: .live, delay: 0.050, policy: .skip)
        #expect(report.framesOut == 45)
        #expect(report.skippedTicks == 44)
        #expect(report.duplicated == 0)
        #expect(entries.map(\.stamp) == (0..<45).map { 2 * $0 })
    }

    @Test func liveWithoutSlowNodePassesEveryFrame() throws {
        let (report, entries) = try run(mode: .live, delay: nil)
        #expect(report.framesOut == 90)
        #expect(report.duplicated == 0)
        #expect(report.droppedLate == 0)
        #expect(entries.map(\.stamp) == Array(0..<90))
    }

    @Test func offlineProcessesEveryFrameWithNoDrops() throws {
        let (report, entries) = try run(mode: .offline, delay: 0.050)
        #expect(report.framesIn == 90)
        #expect(report.admitted == 90)
        #expect(report.droppedBusy == 0)
        #expect(report.droppedLate == 0)
        #expect(report.framesOut == 90)
        #expect(entries.map(\.stamp) == Array(0..<90))
        // Offline time is the sum of the work: 90 × 50 ms on the virtual clock.
        #expect(abs(report.elapsedSeconds - 4.5) < 0.01)
    }
}
