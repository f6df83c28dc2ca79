import FrameGraphBodies
import Testing

/// When the palm detector runs (``PalmDetectionSchedule``), on made-up frame sequences: the
/// frames where it runs are listed from 1, each derived in a comment.
@Suite struct PalmDetectionScheduleTests {
    /// Runs `tracked.count` frames; on frame i, `tracked[i]` hands come from the previous frame and
    /// `lost[i]` of the regions searched lose their hand. Returns the frames (from 1) the detector ran on.
    static func detectorFrames(_ schedule: inout PalmDetectionSchedule, tracked: [Int], lost: [Int: Int] = [:]) -> [Int] {
        var frames: [Int] = []
        for (i, count) in tracked.enumerated() {
            if schedule.detectorDue(tracked: count) { frames.append(i + 1) }
            let searched = max(count, 1)
            schedule.finished(searched: searched, kept: searched - (lost[i + 1] ?? 0))
        }
        return frames
    }

    @Test func oneHandTrackedOfTwoRunsTheDetectorEveryNFrames() {
        var schedule = PalmDetectionSchedule(maxHands: 2, redetectEvery: 4)
        // Frame 1: nothing tracked → detector. Then one hand: frames 2, 3, 4 wait (1, 2, 3 frames
        // since), frame 5 is the 4th → detector; then 9, 13.
        let frames = Self.detectorFrames(&schedule, tracked: [0] + Array(repeating: 1, count: 13))
        #expect(frames == [1, 5, 9, 13])
    }

    @Test func everyFrameIsMediaPipesRule() {
        var schedule = PalmDetectionSchedule(maxHands: 2)
        #expect(schedule.redetectEvery == 1)
        // Fewer than 2 tracked: every frame; 2 tracked (frames 4, 5): none.
        #expect(Self.detectorFrames(&schedule, tracked: [0, 1, 1, 2, 2, 1]) == [1, 2, 3, 6])
    }

    @Test func aLostHandRunsTheDetectorOnTheNextFrame() {
        var schedule = PalmDetectionSchedule(maxHands: 2, redetectEvery: 10)
        // Frame 1 detects (nothing tracked) and finds two hands; frames 2–4 track both (no detector);
        // frame 4 loses one → frame 5 runs the detector at once (3 frames before its turn would
        // come); frame 6 tracks the one left and waits again, until frame 15 (10 after frame 5).
        let tracked = [0, 2, 2, 2, 1] + Array(repeating: 1, count: 11)
        let frames = Self.detectorFrames(&schedule, tracked: tracked, lost: [4: 1])
        #expect(frames == [1, 5, 15])
    }

    @Test func allHandsTrackedRunsTheDetectorOnlyOnDetectEvery() {
        var never = PalmDetectionSchedule(maxHands: 1, redetectEvery: 3)
        #expect(Self.detectorFrames(&never, tracked: [0] + Array(repeating: 1, count: 9)) == [1])
        var periodic = PalmDetectionSchedule(maxHands: 1, redetectEvery: 3, detectEvery: 4)
        #expect(Self.detectorFrames(&periodic, tracked: [0] + Array(repeating: 1, count: 9)) == [1, 5, 9])
        // detect-every also caps redetect-every's wait: one of two hands, every 2nd frame, not 5th.
        var capped = PalmDetectionSchedule(maxHands: 2, redetectEvery: 5, detectEvery: 2)
        #expect(Self.detectorFrames(&capped, tracked: [0, 1, 1, 1, 1, 1]) == [1, 3, 5])
    }

    @Test func resetStartsOverAndOutOfRangeSettingsAreClamped() {
        var schedule = PalmDetectionSchedule(maxHands: 2, redetectEvery: 4)
        _ = Self.detectorFrames(&schedule, tracked: [0, 1, 1], lost: [3: 1])
        #expect(schedule.lostOnPreviousFrame && schedule.framesSinceDetection == 2)
        schedule.reset()
        #expect(!schedule.lostOnPreviousFrame && schedule.framesSinceDetection == 0)
        #expect(Self.detectorFrames(&schedule, tracked: [1, 1, 1, 1]) == [4])
        let odd = PalmDetectionSchedule(maxHands: 0, redetectEvery: 0, detectEvery: -3)
        #expect(odd.maxHands == 1 && odd.redetectEvery == 1 && odd.detectEvery == 0)
    }
}
