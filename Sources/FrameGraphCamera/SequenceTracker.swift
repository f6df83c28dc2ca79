/// Counts the frames a camera produced but FrameGraph never saw, from `v4l2_buffer.sequence` (the
/// driver's frame counter since STREAMON, 32 bits, wrapping).
///
/// A jump from `n` to `n + k` means `k − 1` frames were lost at the driver (no buffer was queued for
/// them). Frames before the first one seen count too when the first sequence number is small
/// (drivers start at 0 on STREAMON; a large first number means the driver counts otherwise).
/// A step backwards, or a jump of more than ``maxGap``, is taken as a restart and counts nothing.
///
/// ```swift
/// var tracker = SequenceTracker()
/// tracker.record(0)   // 0
/// tracker.record(3)   // 2: frames 1 and 2 were lost
/// ```
public struct SequenceTracker: Sendable, Equatable {
    /// Largest first sequence number still counted as frames missed since STREAMON.
    public static let maxInitialGap: UInt32 = 255
    /// Larger jumps are taken as a counter reset, not as lost frames.
    public static let maxGap: UInt32 = 1 << 20

    /// The last sequence number seen.
    public private(set) var last: UInt32?
    /// Frames lost so far.
    public private(set) var lost = 0

    public init() {}

    /// Records the next sequence number seen; returns how many frames were lost just before it.
    @discardableResult
    public mutating func record(_ sequence: UInt32) -> Int {
        defer { last = sequence }
        let gap: UInt32
        if let last {
            let step = sequence &- last
            gap = (step == 0 || step > Self.maxGap) ? 0 : step - 1
        } else {
            gap = sequence <= Self.maxInitialGap ? sequence : 0
        }
        lost += Int(gap)
        return Int(gap)
    }

    /// Starts over (after STREAMOFF/STREAMON, e.g. a reconnect): the next number is a first one.
    public mutating func restart() {
        last = nil
    }
}
