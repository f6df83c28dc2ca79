import Foundation

/// A sink's input in live mode: a small queue that the output ticker empties once per tick.
///
/// A frame is shown at the first tick at or after its capture time (on the output's frame grid)
/// plus the presentation delay D (``PresentationDelay``): frames whose work jitters by less than D all make their own tick. At a
/// tick the newest frame that is due is written; older due frames (they missed their tick) are
/// dropped late, and so is the oldest frame when the queue is over its bound (⌈D_max / period⌉ + 1
/// frames: never unbounded). A tick with nothing due repeats the previous frame (duplicated; counted
/// as busy when a frame due by then was captured but is still in the graph) or writes nothing
/// (skipped tick), by the run's ``TickPolicy``. Ticks before the first frame write nothing. Each
/// frame is written at its tick's place in the output (ticks since the first frame written), so a
/// skipped tick is a hole in time: the output keeps the run's length and its audio stays in sync.
final class ClockedSinkInbox: Inbox, @unchecked Sendable {
    let sink: SinkNode
    private let call: NodeCall
    private let lock = NSLock()
    /// Frames waiting for their tick, each with its capture time on the output's grid (``onGrid``).
    private var queue: [(frame: Frame, slot: Double, arrival: Double)] = []
    private var last: Frame?
    /// The tick the first frame was written at (output index 0).
    private var firstTick: Int?
    private let bound: Int
    /// The delay D this sink follows: the run's, or its stream's in a run of several streams.
    let presentation: PresentationDelayControl

    init(sink: SinkNode, context: RunContext, presentation: PresentationDelayControl? = nil) {
        self.sink = sink
        call = NodeCall(node: sink, context: context)
        self.presentation = presentation ?? context.presentation
        bound = self.presentation.queueBound
    }

    private var context: RunContext { call.context }

    func accept(_ frame: Frame, port: Int, lane: Lane) {
        let now = context.clock.now()
        if let raised = presentation.observe(latency: now - frame.captureTime, now: now - context.startTime) {
            context.tracer?.instant(String(format: "presentation delay %.1f ms", raised * 1000), lane: lane, at: now, sequence: frame.sequence)
        }
        let slot = onGrid(frame.captureTime)
        lock.lock()
        queue.append((frame, slot, now))
        let overflow = max(0, queue.count - bound)
        if overflow > 0 { queue.removeFirst(overflow) }
        let depth = queue.count
        lock.unlock()
        sink.counters.update {
            $0.received += 1
            $0.arrival.record(now - frame.captureTime)
            $0.droppedLate += overflow
            $0.queuedMax = max($0.queuedMax, depth)
        }
    }

    /// Whether a frame was written yet (read on the ticker's thread, which alone writes).
    var hasWritten: Bool { firstTick != nil }

    /// Whether no frame waits for its tick (the ticker ends only when every sink is drained).
    var isDrained: Bool {
        lock.lock()
        defer { lock.unlock() }
        return queue.isEmpty
    }

    /// A capture time taken to the nearest slot of the output's frame grid (start + n/fps). Source
    /// timestamps wobble by a millisecond or so (a container's millisecond time base, a looped clip's
    /// rounded length, a camera driver's stamps); with D close to a tick, that wobble alone would
    /// move every other frame to the next tick (one tick repeated, one frame dropped late). On the
    /// grid, each frame keeps its tick; a source slower or faster than the output still gets
    /// frames repeated or dropped, where the grid says so.
    private func onGrid(_ captureTime: Double) -> Double {
        let fps = context.fps
        guard fps > 0, captureTime >= context.startTime else { return captureTime }
        return context.startTime + ((captureTime - context.startTime) * fps).rounded() / fps
    }

    /// Writes the frame due at tick number `tick` (at clock time `time`), on the ticker's lane.
    func tick(_ tick: Int, at time: Double, lane: Lane) {
        let delay = presentation.current ?? 0
        lock.lock()
        let dueCount = queue.prefix { $0.slot + delay <= time + 1e-9 }.count
        let due = queue.prefix(dueCount).map(\.frame)
        let arrival = queue.prefix(dueCount).last?.arrival
        queue.removeFirst(dueCount)
        lock.unlock()
        if let frame = due.last {
            sink.counters.update {
                if due.count > 1 { $0.droppedLate += due.count - 1 }
                if let arrival { $0.presentationWait.record(time - arrival) }
            }
            last = frame
            let first = firstTick ?? tick
            firstTick = first
            call.consume(frame, by: sink, isNew: true, lane: lane, index: tick - first)
        } else if let last {
            // Why nothing new: the source has sent a frame after the last one shown, and the next frame
            // at the clock's rate would be due by now (still in the graph, or dropped busy there), or
            // the source has not produced one yet.
            let busy = context.latestCaptureTime > last.captureTime && last.captureTime + 1 / context.fps + delay <= time + 1e-9
            switch context.options.tickPolicy {
            case .reuse:
                sink.counters.update {
                    $0.duplicated += 1
                    if busy { $0.duplicatedBusy += 1 }
                }
                call.consume(last, by: sink, isNew: false, lane: lane, index: tick - (firstTick ?? tick))
            case .skip:
                sink.counters.update { $0.skippedTicks += 1 }
            }
        }
    }
}

/// The fixed-rate output clock of a live run: one tick every 1/fps seconds, at `tickPhase` into each
/// period, writing one frame to every sink. It stops at the first tick after every source has ended,
/// every worker is idle and every sink has shown its last frame.
final class OutputTicker: @unchecked Sendable {
    /// The lane of a run's (first) output clock; a run of several streams has one clock per stream.
    static let lane = Lane(id: 1000, name: "output clock")
    let lane: Lane
    private var inboxes: [ClockedSinkInbox]
    private let context: RunContext
    private let upstreamFinished: @Sendable () -> Bool

    init(inboxes: [ClockedSinkInbox], lane: Lane = OutputTicker.lane, context: RunContext, upstreamFinished: @escaping @Sendable () -> Bool) {
        self.lane = lane
        self.inboxes = inboxes
        self.context = context
        self.upstreamFinished = upstreamFinished
    }

    /// The ticker thread's loop (the runner joins it to the clock before starting it).
    func run() {
        let period = 1 / context.fps
        // The D this clock follows: its sinks' (one stream's in a run of several), else the run's.
        let presentation = inboxes.first?.presentation ?? context.presentation
        var phase = context.options.tickPhase
        /// The D the ticks last moved to (nil: not yet known, or ticks at the fixed phase).
        var followedDelay: Double?
        var k = 0
        while true {
            if context.options.tickPhaseFollowsDelay, let delay = presentation.current, delay != followedDelay {
                if let before = followedDelay {
                    // D changed (raised by misses, or lowered once it settled): the ticks move with it,
                    // so each frame still makes the tick D after its slot — none shown twice or skipped.
                    phase += (delay - before) / period
                } else {
                    // The first D is known (the first frame has arrived). When it became known after the
                    // last tick and that tick moves later now, run it again at its new time: the first
                    // frame may be due by then (else it would wait a tick and be replaced, dropped late).
                    let moved = (delay / period).truncatingRemainder(dividingBy: 1)
                    if moved > phase && k > 0 && inboxes.allSatisfy({ !$0.hasWritten }) { k -= 1 }
                    phase = moved
                }
                followedDelay = delay
            }
            let time = context.startTime + (Double(k) + phase) * period
            context.clock.sleep(until: time, lane: lane.id)
            if context.options.tickPhaseFollowsDelay && followedDelay == nil && presentation.current != nil {
                // The first D became known while this clock slept towards a tick at the phase before
                // it: ticking there could write the first frame at the old phase and then jump to the
                // new one, a gap of more than a period in which the second frame falls due and is
                // replaced (dropped late). Time this tick again with D first.
                continue
            }
            context.stopIfPastDuration()
            let finished = upstreamFinished()
            for inbox in inboxes { inbox.tick(k, at: time, lane: lane) }
            k += 1
            // Done when upstream had finished before this tick and every frame has been shown.
            if finished && inboxes.allSatisfy(\.isDrained) { break }
        }
        inboxes = []  // the sinks are the runner's again: the thread may outlive run() by a moment
        context.clock.leave()
    }
}
