import Foundation

/// Virtual time for tests: the clock stands still while any joined thread works, and jumps to the
/// earliest wake-up once every joined thread is asleep in ``sleep(until:lane:)``.
///
/// Work takes no virtual time; only sleeps do (a source waiting for its next frame, a slow node's
/// sleep, the ticker waiting for the next tick). So a live run of a 90-frame clip finishes in
/// milliseconds and its counts are exact. Threads that wake at the same moment run one at a time,
/// in `lane` order, which makes the schedule independent of the operating system's.
public final class ManualClock: RunClock, @unchecked Sendable {
    private struct Sleeper {
        let wake: Double
        let lane: Int
        let id: Int
    }

    private let condition = NSCondition()
    private var current: Double
    private var active = 0
    private var sleepers: [Sleeper] = []
    private var woken: Set<Int> = []
    private var nextID = 0

    /// A clock that starts at `start` seconds.
    public init(start: Double = 1000) {
        current = start
    }

    public func now() -> Double {
        condition.lock()
        defer { condition.unlock() }
        return current
    }

    public func sleep(until requested: Double, lane: Int) {
        // Whole nanoseconds, so that moments computed in different ways (a frame time plus 50 ms, a
        // tick time) that are equal on paper are equal here too and meet the lane tie-break.
        let time = (requested * 1e9).rounded() / 1e9
        condition.lock()
        defer { condition.unlock() }
        guard time > current else { return }
        let id = nextID
        nextID += 1
        sleepers.append(Sleeper(wake: time, lane: lane, id: id))
        advanceIfEveryoneSleeps()
        while !woken.contains(id) { condition.wait() }
        woken.remove(id)
    }

    public func join() {
        condition.lock()
        active += 1
        condition.unlock()
    }

    public func leave() {
        condition.lock()
        active -= 1
        precondition(active >= 0, "ManualClock.leave() without join()")
        advanceIfEveryoneSleeps()
        condition.unlock()
    }

    /// Wakes the first sleeper (earliest time, then lowest lane, then first to sleep) once every joined
    /// thread is asleep. Called with the lock held.
    private func advanceIfEveryoneSleeps() {
        guard !sleepers.isEmpty, sleepers.count >= active else { return }
        var best = 0
        for i in 1..<sleepers.count {
            let a = sleepers[i], b = sleepers[best]
            if (a.wake, a.lane, a.id) < (b.wake, b.lane, b.id) { best = i }
        }
        let sleeper = sleepers.remove(at: best)
        current = max(current, sleeper.wake)
        woken.insert(sleeper.id)
        condition.broadcast()
    }
}
