import Foundation

/// A thread that runs one job at a time for one node, with at most one job in flight and none queued.
///
/// Live mode is drop-while-busy (MediaPipe's FlowLimiter with no queue): a job offered while the
/// previous one still runs is refused, and the caller counts it as dropped-busy. Offline mode is
/// backpressure instead: the offering thread waits until the worker is free, so nothing is dropped
/// while, for example, decoding of the next frame still overlaps the current prediction.
final class Worker: @unchecked Sendable {
    let lane: Lane
    private let context: RunContext
    private let condition = NSCondition()
    private var pending: (() -> Void)?
    private var busy = false
    private var stopping = false
    private var exited = false
    /// Offline mode: threads waiting for the worker to become free, and a counter that tells them the
    /// worker has re-joined them to the clock on their behalf.
    private var idleWaiters = 0
    private var handBackGeneration = 0

    init(lane: Lane, context: RunContext) {
        self.lane = lane
        self.context = context
    }

    /// Hands `job` to the worker. Live mode: returns false (and runs nothing) when the worker is busy.
    /// Offline mode: waits for the worker and returns true.
    func submit(_ job: @escaping () -> Void) -> Bool {
        condition.lock()
        if context.mode == .live {
            if busy {
                condition.unlock()
                return false
            }
        } else {
            while busy {
                let generation = handBackGeneration
                idleWaiters += 1
                context.clock.leave()
                while handBackGeneration == generation { condition.wait() }
            }
        }
        busy = true
        pending = job
        context.clock.join()  // the worker takes part in the run until it finishes this job
        condition.signal()
        condition.unlock()
        return true
    }

    /// The worker thread's loop; returns after ``shutdown()``.
    func run() {
        condition.lock()
        while true {
            while pending == nil && !stopping { condition.wait() }
            guard let job = pending else { break }
            pending = nil
            condition.unlock()
            job()
            condition.lock()
            busy = false
            if idleWaiters > 0 {
                for _ in 0..<idleWaiters { context.clock.join() }
                idleWaiters = 0
                handBackGeneration += 1
            }
            condition.broadcast()
            context.clock.leave()
        }
        exited = true
        condition.broadcast()
        condition.unlock()
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in Lane.current = lane; run() }
        thread.name = lane.name
        thread.start()
    }

    /// Whether no job is in flight.
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !busy
    }

    /// Blocks until no job is in flight.
    func waitUntilIdle() {
        condition.lock()
        while busy { condition.wait() }
        condition.unlock()
    }

    /// Lets the worker thread finish once idle, and waits for it.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !exited { condition.wait() }
        condition.unlock()
    }
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
        let prepared: (any Sendable)?
        if context.mode == .live && !worker.isIdle {
            dropBusy(frame)
            return
        }
        do {
            // Frames can reach one node from more than one thread (an inline composite upstream
            // completes pairs on whichever thread brings the last part): one prepare at a time.
            prepareLock.lock()
            defer { prepareLock.unlock() }
            prepared = try filter.prepare(frame, context: context)
        } catch {
            context.fail(error, node: filter.name)
            return
        }
        let admitted = worker.submit { [self] in
            if let out = call.timed(lane: worker.lane, sequence: frame.sequence, { try filter.process(frame, prepared: prepared, context: context) }) {
                call.forward(out, lane: worker.lane)
            }
        }
        if !admitted { dropBusy(frame) }
    }

    private func dropBusy(_ frame: Frame) {
        filter.counters.update { $0.droppedBusy += 1 }
        context.tracer?.instant("dropped-busy", lane: worker.lane, at: context.clock.now(), sequence: frame.sequence)
    }
}
