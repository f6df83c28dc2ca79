import Foundation

/// Real time: `CLOCK_MONOTONIC`, the clock V4L2 drivers stamp frames with.
public struct MonotonicClock: RunClock {
    public init() {}

    public func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    public func sleep(until time: Double, lane: Int) {
        guard time > now() else { return }
        var ts = timespec(tv_sec: Int(time), tv_nsec: Int((time - time.rounded(.down)) * 1e9))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    public func join() {}
    public func leave() {}
}
