/// The time base of a run: what "now" is, and how a thread waits for a moment.
///
/// The runner, the sources' pacing, the output ticker and slow nodes all read time from the run's
/// clock, so a test can swap the real ``MonotonicClock`` for a ``ManualClock`` and get exact,
/// repeatable schedules.
///
/// Threads that take part in a run call ``join()`` (or have it called for them by whoever hands them
/// work) and ``leave()`` when they go idle; a virtual clock advances only when every joined thread is
/// waiting in ``sleep(until:lane:)``.
public protocol RunClock: Sendable {
    /// Seconds since an arbitrary, fixed origin.
    func now() -> Double
    /// Blocks the calling thread until `time`. `lane` breaks ties between threads that wake at the
    /// same moment (lower first): sources, then workers, then the output ticker.
    func sleep(until time: Double, lane: Int)
    /// A thread starts taking part in the run (or is handed work).
    func join()
    /// A thread stops taking part (or goes idle waiting for work).
    func leave()
}

extension RunClock {
    /// Sleeps for `seconds` from now.
    public func sleep(for seconds: Double, lane: Int) {
        sleep(until: now() + seconds, lane: lane)
    }
}
