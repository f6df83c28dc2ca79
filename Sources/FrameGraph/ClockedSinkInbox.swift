import Foundation

/// A sink's input in live mode: a one-frame slot that the output ticker empties once per tick.
///
/// A frame that is replaced before a tick could write it is counted as dropped-late; a tick with
/// nothing new either repeats the previous frame (duplicated) or writes nothing (skipped tick), by
/// the run's ``TickPolicy``. Ticks before the first frame write nothing and count nowhere.
final class ClockedSinkInbox: Inbox, @unchecked Sendable {
    let sink: SinkNode
    private let call: NodeCall
    private let lock = NSLock()
    private var fresh: Frame?
    private var last: Frame?

    init(sink: SinkNode, context: RunContext) {
        self.sink = sink
        call = NodeCall(node: sink, context: context)
    }

    func accept(_ frame: Frame, port: Int, lane: Lane) {
        lock.lock()
        let replaced = fresh != nil
        fresh = frame
        lock.unlock()
        sink.counters.update {
            $0.received += 1
            if replaced { $0.droppedLate += 1 }
        }
    }

    /// Writes this tick's frame, on the ticker's lane.
    func tick(lane: Lane) {
        lock.lock()
        let frame = fresh
        fresh = nil
        lock.unlock()
        if let frame {
            last = frame
            write(frame, isNew: true, lane: lane)
        } else if let last {
            switch call.context.options.tickPolicy {
            case .reuse:
                sink.counters.update { $0.duplicated += 1 }
                write(last, isNew: false, lane: lane)
            case .skip:
                sink.counters.update { $0.skippedTicks += 1 }
            }
        }
    }

    private func write(_ frame: Frame, isNew: Bool, lane: Lane) {
        call.consume(frame, by: sink, isNew: isNew, lane: lane)
    }
}

/// The fixed-rate output clock of a live run: one tick every 1/fps seconds, at `tickPhase` into each
/// period, writing one frame to every sink. It stops at the first tick after every source has ended
/// and every worker is idle, so the last result is written too.
final class OutputTicker: @unchecked Sendable {
    static let lane = Lane(id: 1000, name: "output clock")
    private var inboxes: [ClockedSinkInbox]
    private let context: RunContext
    private let upstreamFinished: @Sendable () -> Bool

    init(inboxes: [ClockedSinkInbox], context: RunContext, upstreamFinished: @escaping @Sendable () -> Bool) {
        self.inboxes = inboxes
        self.context = context
        self.upstreamFinished = upstreamFinished
    }

    /// The ticker thread's loop (the runner joins it to the clock before starting it).
    func run() {
        let period = 1 / context.fps
        let phase = context.options.tickPhase
        var k = 0
        while true {
            context.clock.sleep(until: context.startTime + (Double(k) + phase) * period, lane: Self.lane.id)
            context.stopIfPastDuration()
            let finished = upstreamFinished()
            for inbox in inboxes { inbox.tick(lane: Self.lane) }
            k += 1
            if finished { break }
        }
        inboxes = []  // the sinks are the runner's again: the thread may outlive run() by a moment
        context.clock.leave()
    }
}
