import FrameGraph
import Glibc
import TestSupport
import Testing

/// `preset=auto`: the live encoder's preset stepped by its time per frame, with hysteresis, on
/// scripted costs. At 30 fps the period is 33.3 ms and the encoder's share half of it, 16.7 ms: one
/// step faster when the last 15 frames average over 15 ms (0.9 of the share), one step slower when
/// the last 90 at the current preset average under 7.5 ms (0.45 of it), overloaded when the fastest
/// preset's last 15 average over 30 ms (0.9 of the period), the episode over under 20 ms; the first
/// 30 frames (warm-up) are not judged.
@Suite struct EncoderSpeedControlTests {
    static let ladder = ["ultrafast", "superfast", "veryfast"]

    /// Feeds `frames` frames at 30 fps whose cost (seconds) depends on the preset in use and the frame
    /// number; returns each step with the frame that caused it.
    func drive(frames: Int, cost: (String, Int) -> Double) -> (EncoderSpeedControl, [(frame: Int, step: EncoderSpeedControl.Step)]) {
        var control = EncoderSpeedControl(ladder: Self.ladder, fps: 30)
        var steps: [(frame: Int, step: EncoderSpeedControl.Step)] = []
        for i in 0..<frames {
            if let step = control.record(cost: cost(control.preset, i), at: Double(i) / 30) { steps.append((frame: i, step: step)) }
        }
        return (control, steps)
    }

    @Test func stepsFasterUnderLoadAndBackWhenThereIsRoomWithHysteresis() {
        // Frames 0–119 loaded (veryfast 20 ms, superfast 14, ultrafast 9), then quiet (veryfast 7,
        // superfast 4, ultrafast 3). Frames 0–29 are the warm-up; frame 44 completes 15 judged
        // frames averaging 20 ms > 15: superfast.
        // Its 14 ms is under 15, so it stays, and over 7.5, so it does not step back while loaded.
        // Quiet from frame 120: the 90-frame window at superfast holds k loaded frames (14 ms) and
        // 90 − k quiet ones (4 ms); its mean is under 7.5 ms once 10k < 315, k ≤ 31: k = 209 − f
        // (frames 45 … 119 at superfast), so frame 178 steps back to veryfast, whose 7 ms is under
        // 15: no further change, and no flapping in between.
        let (control, steps) = drive(frames: 400) { preset, i in
            let loaded = i < 120
            switch preset {
            case "veryfast": return loaded ? 0.020 : 0.007
            case "superfast": return loaded ? 0.014 : 0.004
            default: return loaded ? 0.009 : 0.003
            }
        }
        #expect(steps.map { $0.frame } == [44, 178])
        #expect(steps.map { $0.step } == [.faster("superfast"), .slower("veryfast")])
        #expect(control.preset == "veryfast" && control.overloads == 0)
        #expect(control.changes.map { $0.preset } == ["superfast", "veryfast"])
        #expect(abs(control.changes[0].time - 44.0 / 30) < 1e-9 && abs(control.changes[1].time - 178.0 / 30) < 1e-9)
    }

    @Test func aStepSlowerTakenBackWaitsTwiceAsLongNextTime() {
        // veryfast 16 ms (over 15: too slow), superfast 7 ms (under 7.5: room to step back): without
        // more hysteresis the preset would flap every 105 frames. Frame 44 steps faster; 90 frames at
        // superfast later (frame 134) back to veryfast; 15 frames later (149) faster again — taking the
        // step back, so the next step slower needs 180 frames (329), then 360 (704 after 344), 720
        // (1439 after 719): 9 changes in 1,500 frames instead of 28.
        let (control, steps) = drive(frames: 1500) { preset, _ in
            switch preset {
            case "veryfast": return 0.016
            case "superfast": return 0.007
            default: return 0.005
            }
        }
        #expect(steps.map { $0.frame } == [44, 134, 149, 329, 344, 704, 719, 1439, 1454])
        #expect(control.preset == "superfast" && control.overloads == 0)
    }

    @Test func aCostBetweenTheThresholdsNeverMoves() {
        // 12 ms at veryfast is under 15 (no step faster) and over 7.5 (already the slowest): 600 frames,
        // no change; started one step down at 8 ms it would not step back either (over 7.5).
        let (control, steps) = drive(frames: 600) { _, _ in 0.012 }
        #expect(steps.isEmpty && control.preset == "veryfast" && control.changes.isEmpty)
    }

    @Test func warnsOncePerOverloadEpisodeAtTheFastestPreset() {
        // 40 ms at every preset: after the warm-up (frames 0–29) frame 44 steps to superfast, frame 59
        // (15 more) to ultrafast, frame 74 (15 at ultrafast averaging 40 > 30) is overloaded. From
        // frame 90 frames take 16 ms: the last 15 average under 20 ms once at most 2 of them are
        // 40 ms (24a < 60): frame 102 ends the episode (no warning for it). From frame 130 they take
        // 40 ms again: over 30 once at least 9 of the last 15 are (24a > 210): frame 138 warns again.
        let (control, steps) = drive(frames: 190) { _, i in (90..<130).contains(i) ? 0.016 : 0.040 }
        #expect(steps.map { $0.frame } == [44, 59, 74, 138])
        #expect(steps.map { $0.step } == [.faster("superfast"), .faster("ultrafast"), .overloaded, .overloaded])
        #expect(control.overloads == 2 && control.preset == "ultrafast")
    }

    @Test func pinnedStopsSteppingAndForgetsTheRefusedStep() {
        var control = EncoderSpeedControl(ladder: Self.ladder, fps: 30)
        var step: EncoderSpeedControl.Step?
        for i in 0..<45 { step = control.record(cost: 0.030, at: Double(i) / 30) }
        #expect(step == .faster("superfast"))
        control.pin(back: 2)
        #expect(control.preset == "veryfast" && control.changes.isEmpty && control.pinned)
        for i in 45..<130 { #expect(control.record(cost: 0.030, at: Double(i) / 30) == nil) }
    }

    /// An encoder stand-in on the output clock: each frame costs what `cost` says for the preset in
    /// use, slept on the run's clock, and feeds an ``EncoderSpeedControl`` as `FileSink` does.
    final class ScriptedEncoder: SinkNode, @unchecked Sendable {
        let cost: @Sendable (String) -> Double
        private let state = Protected(EncoderSpeedControl(ladder: EncoderSpeedControlTests.ladder, fps: 30))
        private let times = Protected<[Double]>([])
        init(name: String, cost: @escaping @Sendable (String) -> Double) {
            self.cost = cost
            super.init(name: name)
        }
        var control: EncoderSpeedControl { state.withLock { $0 } }
        var writeTimes: [Double] { times.withLock { $0 } }
        override func consume(_ frame: Frame, index: Int, context: RunContext) throws {
            let start = context.clock.now()
            times.withLock { $0.append(start) }
            context.clock.sleep(for: cost(control.preset), lane: Lane.current.id)
            let end = context.clock.now()
            state.withLock { _ = $0.record(cost: end - start, at: end - context.startTime) }
        }
    }

    @Test func aLiveRunStepsItsEncoderOnTheManualClock() throws {
        // veryfast takes 20 ms a frame on the output clock's thread, superfast 12: after the warm-up
        // (ticks 0 … 29), the 15 frames written at ticks 30 … 44 step it to superfast; 12 ms is between the thresholds, so
        // it stays there to the end. Each write starts at its tick ((k + ½)/30 s, D = 0): 20 ms and
        // 12 ms both end before the next tick, so no tick is late or repeated.
        let source = PatternSource(width: 256, height: 32, frameRate: 30, frameCount: 120)
        let encoder = ScriptedEncoder(name: "encode") { $0 == "veryfast" ? 0.020 : $0 == "superfast" ? 0.012 : 0.006 }
        source --> encoder
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .live, fps: 30, clock: ManualClock())).run()
        #expect(report.framesOut == 120 && report.duplicated == 0 && report.droppedLate == 0)
        #expect(encoder.control.changes.map { $0.preset } == ["superfast"])
        #expect(encoder.control.changes.first.map { abs($0.time - (44.5 / 30 + 0.020)) < 1e-6 } == true)
        let times = encoder.writeTimes
        for (a, b) in zip(times, times.dropFirst()) { #expect(abs(b - a - 1.0 / 30) < 1e-6) }
    }
}

/// Live network workers run below the output path: their threads' nice value is raised
/// (``RunOptions/networkNice``), composites' and the output's are not; offline nothing changes.
@Suite struct NetworkPriorityTests {
    /// A worker node that notes the nice value of the thread it runs on.
    final class NiceProbe: FilterNode, @unchecked Sendable {
        let seen = Protected<Set<Int32>>([])
        override var execution: Execution { .worker }
        override func process(_ frame: Frame, context: RunContext) throws -> Frame? {
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            seen.withLock { _ = $0.insert(nice) }
            return frame
        }
    }

    func niceSeen(mode: RunMode, networkNice: Int32?) throws -> Set<Int32> {
        let source = PatternSource(width: 256, height: 32, frameRate: 30, frameCount: 10)
        let probe = NiceProbe(name: "net")
        source --> probe --> CollectingSink(name: "sink")
        var options = RunOptions(mode: mode, fps: 30, clock: ManualClock())
        options.networkNice = networkNice
        let report = try GraphRunner(sources: [source], options: options).run()
        #expect(report.admitted == 10)
        return probe.seen.withLock { $0 }
    }

    @Test func liveWorkersRunAtTheNetworkNiceValue() throws {
        let own = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #expect(try niceSeen(mode: .live, networkNice: 5) == [5])
        #expect(try niceSeen(mode: .live, networkNice: nil) == [own])
        #expect(try niceSeen(mode: .offline, networkNice: 5) == [own])
    }
}
