/// Converts frames with any timestamps (variable rate included) to a constant rate, as an offline
/// run with `--fps` does: output slot `k`, at `k / rate` seconds after the first frame, shows the
/// input frame nearest to it. A frame nearest to no slot is dropped; one nearest to several is
/// repeated.
///
/// ```swift
/// var c = RateConverter(rate: 30, sourceRate: 25)
/// c.arrive(0.00)   // 0..<0: the first frame is held
/// c.arrive(0.04)   // 0..<1: the held frame (t = 0) fills slot 0
/// ```
public struct RateConverter: Sendable {
    /// Output frames per second.
    public let rate: Double
    /// The input's announced rate (0: unknown), for the last frame's duration.
    public let sourceRate: Double
    private var firstTime: Double?
    private var heldTime: Double?
    private var lastGap: Double?
    private var nextSlot = 0

    public init(rate: Double, sourceRate: Double) {
        self.rate = rate
        self.sourceRate = sourceRate
    }

    /// A frame at `time` arrives and is held; returns the slots of the frame held before it (the
    /// slots nearer to that one than to this).
    public mutating func arrive(_ time: Double) -> Range<Int> {
        guard let held = heldTime, let first = firstTime else {
            firstTime = time
            heldTime = time
            return nextSlot..<nextSlot
        }
        let boundary = (held + max(time, held)) / 2
        lastGap = max(time, held) - held
        heldTime = max(time, held)
        return slots(before: boundary - first)
    }

    /// The slots of the last held frame, at the end of the input: those within half a frame
    /// duration after it (its duration: the source's period, else the last gap).
    public mutating func finish() -> Range<Int> {
        guard let held = heldTime, let first = firstTime else { return nextSlot..<nextSlot }
        let duration = sourceRate > 0 ? 1 / sourceRate : (lastGap ?? 1 / rate)
        heldTime = nil
        return slots(before: held + duration / 2 - first)
    }

    private mutating func slots(before limit: Double) -> Range<Int> {
        let start = nextSlot
        while Double(nextSlot) / rate < limit - 1e-9 && nextSlot - start < 1_000_000 { nextSlot += 1 }
        return start..<nextSlot
    }
}
