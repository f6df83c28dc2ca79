import Foundation

/// A filter that runs on its own worker thread with at most one frame in flight and none queued.
///
/// Live mode is drop-while-busy (MediaPipe's FlowLimiter with no queue): a frame that arrives while the
/// previous one is still being processed is refused and counted as dropped-busy. Offline mode is
/// backpressure instead: the delivering thread waits until the worker is free, so nothing is dropped
/// while decoding of the next frame still overlaps the current prediction.
final class WorkerInbox: Inbox, @unchecked Sendable {
    let filter: FilterNode
    let lane: Lane
    private let call: NodeCall
    private let context: RunContext
    private let condition = NSCondition()
    private var pending: Frame?
    private var busy = false
    private var stopping = false
    private var exited = false
    /// Offline mode: threads waiting for the worker to become free, and a counter that tells them the
    /// worker has re-joined them to the clock on their behalf.
    private var idleWaiters = 0
    private var handBackGeneration = 0

    init(filter: FilterNode, lane: Lane, context: RunContext) {
        self.filter = filter
        self.lane = lane
        self.context = context
        call = NodeCall(node: filter, context: context)
    }

    func accept(_ frame: Frame, port: Int, lane callerLane: Lane) {
        filter.counters.update { $0.received += 1 }
        condition.lock()
        if context.mode == .live {
            if busy {
                condition.unlock()
                filter.counters.update { $0.droppedBusy += 1 }
                context.tracer?.instant("dropped-busy", lane: lane, at: context.clock.now(), sequence: frame.sequence)
                return
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
        pending = frame
        context.clock.join()  // the worker takes part in the run until it finishes this frame
        condition.signal()
        condition.unlock()
    }

    /// The worker thread's loop; returns after ``shutdown()``.
    func runWorker() {
        condition.lock()
        while true {
            while pending == nil && !stopping { condition.wait() }
            guard let frame = pending else { break }
            pending = nil
            condition.unlock()
            if let out = call.timed(lane: lane, sequence: frame.sequence, { try filter.process(frame, context: context) }) {
                call.forward(out, lane: lane)
            }
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

    /// Whether no frame is in flight.
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !busy
    }

    /// Blocks until no frame is in flight.
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
