/// When ``HandLandmarksNode`` runs its palm detector, decided frame by frame.
///
/// MediaPipe's hands solution runs the detector on every frame where fewer than `max_num_hands`
/// hands are tracked — with one hand in view, on every frame. The schedule keeps that rule for the
/// cases that matter and spaces out the rest:
///
/// - no hand tracked: every frame (there is nothing else to do);
/// - a hand was lost on the previous frame (its presence fell, or a new palm gave no hand): at once;
/// - some but fewer than `maxHands` tracked: every ``redetectEvery`` frames, counted from the last
///   run (1: every frame, MediaPipe's rule);
/// - `maxHands` tracked: only every ``detectEvery`` frames (0: never; when not 0 it also caps the
///   wait above).
///
/// ```swift
/// var schedule = PalmDetectionSchedule(maxHands: 2, redetectEvery: 4)
/// if schedule.detectorDue(tracked: hands.count) { /* run the palm detector */ }
/// schedule.finished(searched: regions.count, kept: next.count)
/// ```
public struct PalmDetectionSchedule: Sendable, Equatable {
    public let maxHands: Int
    /// While at least one but fewer than ``maxHands`` hands are tracked, the detector runs every
    /// this many frames (1: every frame, as MediaPipe).
    public let redetectEvery: Int
    /// With ``maxHands`` tracked, the detector still runs every this many frames (0: never).
    public let detectEvery: Int
    /// Frames since the detector last ran (counting the current one once ``detectorDue(tracked:)``
    /// has been asked).
    public private(set) var framesSinceDetection = 0
    /// Whether the previous frame lost a hand.
    public private(set) var lostOnPreviousFrame = false

    public init(maxHands: Int, redetectEvery: Int = 1, detectEvery: Int = 0) {
        self.maxHands = max(1, maxHands)
        self.redetectEvery = max(1, redetectEvery)
        self.detectEvery = max(0, detectEvery)
    }

    /// Whether the detector runs on this frame, `tracked` hands carried from the previous one.
    /// Call once per frame; a true answer counts as a run.
    public mutating func detectorDue(tracked: Int) -> Bool {
        framesSinceDetection += 1
        let due: Bool
        let periodic = detectEvery > 0 && framesSinceDetection >= detectEvery
        if tracked <= 0 || lostOnPreviousFrame {
            due = true
        } else if tracked < maxHands {
            due = framesSinceDetection >= redetectEvery || periodic
        } else {
            due = periodic
        }
        if due { framesSinceDetection = 0 }
        return due
    }

    /// After the frame: `searched` regions went to the landmark model and `kept` of them held a hand.
    public mutating func finished(searched: Int, kept: Int) {
        lostOnPreviousFrame = kept < searched
    }

    /// Back to the start (a new stream): the next frame runs the detector.
    public mutating func reset() {
        framesSinceDetection = 0
        lostOnPreviousFrame = false
    }
}
