import CV4L2

/// Maps a V4L2 buffer timestamp to FrameGraph's capture time: seconds on `CLOCK_MONOTONIC`, the
/// base of ``FrameGraph/MonotonicClock``.
///
/// Drivers that flag `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC` (UVC, vivid, videobuf2 drivers) stamp
/// frames on that clock already: the stamp is used as it is, unless it is implausible (in the
/// future, or more than ``maxAge`` old), in which case the dequeue time is used. Other timestamp
/// types (unknown, copied from an output device) also get the dequeue time.
///
/// ```swift
/// let t = DriverTimestamp.captureTime(flags: d.flags, seconds: d.timestamp_sec,
///                                     microseconds: d.timestamp_usec, dequeuedAt: clock.now())
/// ```
public enum DriverTimestamp {
    /// Oldest plausible age of a frame at dequeue time, in seconds.
    public static let maxAge = 2.0

    /// Whether `flags` (v4l2_buffer.flags) say the timestamp is on CLOCK_MONOTONIC.
    public static func isMonotonic(flags: UInt32) -> Bool {
        flags & fg_v4l2_buf_flag_timestamp_mask() == fg_v4l2_buf_flag_timestamp_monotonic()
    }

    /// The capture time in seconds of CLOCK_MONOTONIC for a buffer dequeued at `dequeuedAt`.
    public static func captureTime(flags: UInt32, seconds: Int64, microseconds: Int64, dequeuedAt now: Double) -> Double {
        guard isMonotonic(flags: flags), seconds > 0 || microseconds > 0 else { return now }
        let t = Double(seconds) + Double(microseconds) * 1e-6
        guard t <= now + 0.001, now - t <= maxAge else { return now }
        return t
    }
}

extension DriverTimestamp {
    /// V4L2_BUF_FLAG_ERROR: the driver says the buffer's data is damaged.
    static var errorFlag: UInt32 { fg_v4l2_buf_flag_error() }
}
