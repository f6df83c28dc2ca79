import Foundation

/// What a worker thread and the runner share to start it, wait for it and stop it: the lock its
/// jobs are handed over under, and whether it is stopping, has exited or was given up on. A node's
/// own ``Worker`` and a group's ``SharedWorker`` each keep one and say what "busy" means for them
/// (a job in flight; a member's frame waiting or in flight).
final class WorkerThreadState: @unchecked Sendable {
    /// Guards the worker's own state as well as this one's.
    let condition = NSCondition()
    /// Set by ``shutdown(whileRunning:)``: the thread's loop ends once it has nothing to do.
    private(set) var stopping = false
    /// Set when the run gives up on the job in flight: nothing waits for it any more.
    private(set) var abandoned = false
    private var exited = false

    /// Starts `loop` on a thread named after `lane`, at `niceness` when given.
    func start(lane: Lane, niceness: Int32? = nil, _ loop: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Lane.current = lane
            if let niceness { ThreadPriority.lowerCurrent(to: niceness) }
            loop()
        }
        thread.name = lane.name
        thread.start()
    }

    /// Runs `body` under the lock.
    func withLock<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Blocks until `busy()` (read under the lock) is false, or the run gave up on the work.
    func waitUntilIdle(whileBusy busy: () -> Bool) {
        condition.lock()
        while busy() && !abandoned { condition.wait() }
        condition.unlock()
    }

    /// Stops waiting for the job in flight: senders blocked on it are released (refused), and
    /// ``waitUntilIdle(whileBusy:)`` and ``shutdown(whileRunning:)`` return without it (the job's
    /// thread ends when it finishes; what it produces is dropped).
    func abandon() {
        condition.lock()
        abandoned = true
        condition.broadcast()
        condition.unlock()
    }

    /// Lets the thread finish once idle, and waits for it — not for an abandoned job still
    /// `running()` (read under the lock).
    func shutdown(whileRunning running: () -> Bool) {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !exited && !(abandoned && running()) { condition.wait() }
        condition.unlock()
    }

    /// Called by the thread, lock held, as its loop ends.
    func markExited() {
        exited = true
        condition.broadcast()
    }
}
