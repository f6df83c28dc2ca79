import Foundation

/// What became of a job offered to a ``Worker``.
enum Submission: Equatable {
    /// It runs now (live), or once the worker was free (offline).
    case accepted
    /// Live, worker with a waiting slot: it waits there and runs when the current job ends.
    case waiting
    /// Live, worker with a waiting slot: it took the slot from an older job, which will not run;
    /// `tag` is what that job was submitted with (its frame's sequence number).
    case displaced(tag: Int)
    /// Live: the worker is busy and keeps no waiting job, so nothing runs.
    case refused
}

/// A thread that runs one job at a time for one node, with at most one job in flight and at most one
/// waiting.
///
/// Live mode is drop-while-busy (MediaPipe's FlowLimiter with no queue): a job offered while the
/// previous one still runs is refused, and the caller counts it as dropped-busy. A worker made with
/// `waitingSlot` (a composite's) keeps the newest such job instead and runs it next, like a leaky
/// queue of one: a frame that arrives a moment early, because the OS preempted the worker or the
/// source delivered two frames close together, is still composited, and only a second frame arriving
/// during the same job drops the waiting one. Offline mode is backpressure instead: the offering
/// thread waits until the worker is free, so nothing is dropped while, for example, decoding of the
/// next frame still overlaps the current prediction.
final class Worker: @unchecked Sendable {
    let lane: Lane
    private let context: RunContext
    private let state = WorkerThreadState()
    private var condition: NSCondition { state.condition }
    /// The job the thread is to start next.
    private var pending: (() -> Void)?
    /// A job in flight: handed over and not yet finished.
    private var busy = false
    /// Whether a live job offered while busy waits (true) or is refused (false).
    private let hasWaitingSlot: Bool
    /// The job waiting behind the one in flight, and its tag.
    private var waiting: (job: () -> Void, tag: Int)?
    private var abandoned: Bool { state.abandoned }
    /// Offline mode: threads waiting for the worker to become free, and a counter that tells them the
    /// worker has re-joined them to the clock on their behalf.
    private var idleWaiters = 0
    private var handBackGeneration = 0

    /// The nice value the worker's thread runs at (nil: the process's): a live network's worker runs
    /// below the output path (``RunOptions/networkNice``).
    private let niceness: Int32?

    init(lane: Lane, context: RunContext, waitingSlot: Bool = false, niceness: Int32? = nil) {
        self.lane = lane
        self.context = context
        hasWaitingSlot = waitingSlot
        self.niceness = niceness
    }

    /// Hands `job` to the worker (`tag`: the sequence number of the frame it is for).
    /// Live: runs it now, keeps it waiting, or refuses it (see ``Submission``). Offline: waits for
    /// the worker and accepts it.
    func submit(tag: Int = 0, _ job: @escaping () -> Void) -> Submission {
        condition.lock()
        defer { condition.unlock() }
        if context.mode == .live {
            if busy {
                guard hasWaitingSlot else { return .refused }
                let displaced = waiting?.tag
                waiting = (job, tag)
                return displaced.map { .displaced(tag: $0) } ?? .waiting
            }
        } else {
            while busy {
                if abandoned { return .refused }
                let generation = handBackGeneration
                idleWaiters += 1
                context.clock.leave()
                while handBackGeneration == generation && !abandoned { condition.wait() }
            }
            if abandoned { return .refused }
        }
        busy = true
        pending = job
        context.clock.join()  // the worker takes part in the run until it finishes this job
        condition.signal()
        return .accepted
    }

    /// The worker thread's loop; returns after ``shutdown()``.
    func run() {
        condition.lock()
        while true {
            while pending == nil && !state.stopping { condition.wait() }
            guard let job = pending else { break }
            pending = nil
            condition.unlock()
            job()
            condition.lock()
            if let next = waiting {
                // The waiting job runs next: the worker stays busy and joined to the clock.
                waiting = nil
                pending = next.job
                continue
            }
            busy = false
            if idleWaiters > 0 {
                for _ in 0..<idleWaiters { context.clock.join() }
                idleWaiters = 0
                handBackGeneration += 1
            }
            condition.broadcast()
            context.clock.leave()
        }
        state.markExited()
        condition.unlock()
    }

    /// Starts the thread.
    func start() {
        state.start(lane: lane, niceness: niceness) { [self] in run() }
    }

    /// Whether no job is in flight.
    var isIdle: Bool { state.withLock { !busy } }

    /// Blocks until no job is in flight (or the run gave up on it: ``abandon()``).
    func waitUntilIdle() { state.waitUntilIdle { busy } }

    /// Stops waiting for the job in flight (``WorkerThreadState/abandon()``).
    func abandon() { state.abandon() }

    /// Lets the worker thread finish once idle, and waits for it (not for an abandoned job).
    func shutdown() { state.shutdown { busy } }
}

/// A filter that runs on its own ``Worker`` (``Execution/worker``).
final class WorkerInbox: Inbox, @unchecked Sendable {
    let filter: FilterNode
    let worker: Worker
    private let call: NodeCall
    private let context: RunContext

    /// Serialises ``FilterNode/prepare(_:context:)`` across delivering threads.
    private let prepareLock = NSLock()

    init(filter: FilterNode, worker: Worker, context: RunContext) {
        self.filter = filter
        self.worker = worker
        self.context = context
        call = NodeCall(node: filter, context: context)
    }

    func accept(_ frame: Frame, port: Int, lane callerLane: Lane) {
        filter.counters.update { $0.received += 1 }
        // Live: a frame the busy worker would refuse is dropped before any work is done for it.
        if context.mode == .live && !worker.isIdle {
            call.dropBusy(sequence: frame.sequence, lane: worker.lane)
            return
        }
        guard let prepared = call.prepare(frame, for: filter, under: prepareLock) else { return }
        let submission = worker.submit(tag: frame.sequence) { [self] in
            if let out = call.timed(lane: worker.lane, sequence: frame.sequence, { try filter.process(frame, prepared: prepared.value, context: context) }) {
                call.forward(out, lane: worker.lane)
            }
        }
        if submission == .refused { call.dropBusy(sequence: frame.sequence, lane: worker.lane) }
    }
}
