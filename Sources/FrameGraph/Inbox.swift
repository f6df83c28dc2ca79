import Foundation

/// How frames enter a node during a run. The runner picks one per node from its role and the run
/// mode: inline processing, a worker with drop-while-busy admission, or a clocked output slot.
protocol Inbox: AnyObject, Sendable {
    /// Hands `frame` to the node's input `port`, on the calling thread's `lane`.
    func accept(_ frame: Frame, port: Int, lane: Lane)
}

/// Shared plumbing for inboxes: time a call into a node, record its latency and trace span, and pass
/// its output downstream.
struct NodeCall {
    let node: Node
    let context: RunContext
    /// Whether the node emits a results stream (asked once, not per frame).
    let emitsResults: Bool

    init(node: Node, context: RunContext) {
        self.node = node
        self.context = context
        emitsResults = node.outputKind == .results
    }

    /// Runs `body` under the node's lock, timing it. Errors fail the run, naming the node.
    func timed<T>(lane: Lane, sequence: Int, _ body: () throws -> T?) -> T? {
        node.processLock.lock()
        defer { node.processLock.unlock() }
        let start = context.clock.now()
        let result: T?
        do {
            result = try body()
        } catch {
            context.fail(error, node: node.name)
            result = nil
        }
        let end = context.clock.now()
        node.counters.update { $0.processed += 1; $0.latency.record(end - start) }
        context.tracer?.span(node.name, category: node.kind, lane: lane, start: start, end: end, sequence: sequence)
        return result
    }

    /// Hands `frame` to a sink as its next output frame, timing it; a new frame (not a repeat) also
    /// records its capture-to-output latency.
    /// `index`: the frame's place in the output (default: how many the sink has written; a clocked
    /// sink passes its tick, so a skipped tick leaves a hole in time instead of shortening it).
    func consume(_ frame: Frame, by sink: SinkNode, isNew: Bool, lane: Lane, index given: Int? = nil) {
        _ = timed(lane: lane, sequence: frame.sequence) { () -> Bool? in
            let index = given ?? sink.counters.snapshot.emitted
            try sink.consume(frame, index: index, context: context)
            let now = context.clock.now()
            sink.counters.update {
                $0.emitted += 1
                if isNew { $0.endToEnd.record(now - frame.captureTime) }
            }
            return true
        }
    }

    /// What ``prepare(_:for:under:)`` made for a frame (nil inside: the node prepares nothing).
    struct Prepared {
        let value: (any Sendable)?
    }

    /// Runs `filter`'s ``FilterNode/prepare(_:context:)`` under `lock` (frames can reach one node from
    /// more than one thread: an inline composite upstream completes pairs on whichever thread brings
    /// the last part), its time recorded as the node's prepare stage. Nil after failing the run.
    func prepare(_ frame: Frame, for filter: FilterNode, under lock: NSLock) -> Prepared? {
        lock.lock()
        defer { lock.unlock() }
        let start = context.clock.now()
        do {
            let value = try filter.prepare(frame, context: context)
            let end = context.clock.now()
            filter.counters.update { $0.prepare.record(end - start) }
            return Prepared(value: value)
        } catch {
            context.fail(error, node: filter.name)
            return nil
        }
    }

    /// Counts a frame a busy worker did not run (refused, or displaced from its waiting slot) and
    /// marks it on the worker's trace track.
    func dropBusy(sequence: Int, lane: Lane) {
        node.counters.update { $0.droppedBusy += 1 }
        context.tracer?.instant("dropped-busy", lane: lane, at: context.clock.now(), sequence: sequence)
    }

    /// Sends `frame` to every target of the node. An item of a results stream always carries
    /// results (empty ones, naming the node, when it found nothing).
    func forward(_ frame: Frame, lane: Lane) {
        guard !context.isAbandoned else { return }  // the outputs are being finalized without it
        node.counters.update { $0.emitted += 1 }
        var frame = frame
        if emitsResults && frame.results == nil { frame.results = Results(producer: node.name) }
        for target in node.targets {
            target.node.inbox?.accept(frame, port: target.port, lane: lane)
        }
    }
}

/// Filters that run inline: process on the delivering thread, then forward.
final class InlineFilterInbox: Inbox, @unchecked Sendable {
    private let filter: FilterNode
    private let call: NodeCall

    init(filter: FilterNode, context: RunContext) {
        self.filter = filter
        call = NodeCall(node: filter, context: context)
    }

    func accept(_ frame: Frame, port: Int, lane: Lane) {
        filter.counters.update { $0.received += 1 }
        if let out = call.timed(lane: lane, sequence: frame.sequence, { try filter.process(frame, context: call.context) }) {
            call.forward(out, lane: lane)
        }
    }
}

/// Composite nodes: keep what arrived per port and combine by the pairing policy.
final class CompositeInbox: Inbox, @unchecked Sendable {
    private let composite: CompositeNode
    private let call: NodeCall
    private let policy: PairingPolicy
    private let lock = NSCondition()
    /// Offline: a port whose waiting list is full holds its sender until partners arrive (nothing is
    /// dropped), unless every source that could send a partner has ended.
    private let holdsSenders: Bool
    /// The longest a sender is held for one frame, in seconds.
    private let holdLimit = 2.0
    /// Per port: the sources that reach another port and not this one (weakly: the sources own the
    /// graph). Only a port with such partners can run ahead of them for long, so only its sender is
    /// held; a source that reaches both ports keeps its frames coming through the workers.
    private let partnerSources: [[WeakSource]]
    private let context: RunContext
    /// Newest frame per port (newest policy), or frames waiting for their partners (same policy).
    private var newest: [Frame?]
    /// Newest policy: the frames on port 0 that came before any result on the other ports (the run's
    /// start, while the first prediction runs), oldest first, kept until the first results arrive.
    private var heldFirst: [Frame] = []
    /// Most frames ``heldFirst`` keeps: as many as a clocked sink can hold (a frame older than those
    /// could not make its tick any more); an older one is dropped late.
    private let heldFirstBound: Int
    private var waiting: [[Frame]]
    /// Frames kept per port while waiting for partners (same policy); older ones are dropped late.
    private let maxWaiting = 8

    /// Set when the composite runs on a worker of its own (``Execution/worker``).
    private let worker: Worker?

    init(composite: CompositeNode, worker: Worker?, portSources: [[SourceNode]] = [], context: RunContext) {
        self.composite = composite
        self.worker = worker
        self.context = context
        partnerSources = portSources.indices.map { port in
            portSources.enumerated().filter { $0.offset != port }.flatMap(\.element)
                .filter { other in !portSources[port].contains { $0 === other } }
                .map { WeakSource(node: $0) }
        }
        call = NodeCall(node: composite, context: context)
        policy = composite.pairing ?? (context.mode == .live ? .newest : .sameFrame)
        holdsSenders = context.mode == .offline
        heldFirstBound = context.presentation.queueBound
        newest = Array(repeating: nil, count: composite.inputPorts.count)
        waiting = Array(repeating: [], count: composite.inputPorts.count)
    }

    func accept(_ frame: Frame, port: Int, lane: Lane) {
        composite.counters.update { $0.received += 1 }
        let groups = pair(frame, port: port)
        guard !groups.isEmpty else { return }
        guard let worker else {
            for group in groups { combine(group, lane: lane) }
            return
        }
        // Several groups (the frames that waited for the first result): one job, in order.
        switch worker.submit(tag: groups[groups.count - 1][0].sequence, { [self] in for group in groups { combine(group, lane: worker.lane) } }) {
        case .accepted, .waiting:
            break
        case .displaced(let sequence):
            call.dropBusy(sequence: sequence, lane: worker.lane)
        case .refused:
            call.dropBusy(sequence: frame.sequence, lane: worker.lane)
        }
    }

    private func combine(_ group: [Frame], lane: Lane) {
        if let out = call.timed(lane: lane, sequence: group[0].sequence, { try composite.combine(group, context: call.context) }) {
            call.forward(out, lane: lane)
        }
    }

    /// The groups of frames to combine now, in order: one when `frame`'s arrival completes a group,
    /// several when the first result releases the frames that waited for it, none otherwise.
    private func pair(_ frame: Frame, port: Int) -> [[Frame]] {
        lock.lock()
        defer { lock.unlock() }
        switch policy {
        case .newest:
            newest[port] = frame
            let complete = !newest.contains { $0 == nil }
            guard port == 0 else {
                // A result arrived: the first frames held for want of one pair now, in order (the first
                // with its own result, usually: the first frame the network sees is the first captured).
                guard complete, !heldFirst.isEmpty else { return [] }
                defer { heldFirst = [] }
                return heldFirst.map { group(newest.compactMap { $0 }, replacingFirstWith: $0) }
            }
            guard complete else {
                // Nothing to pair with yet (the run's first frames, before any result): the frames wait
                // for the first result instead of being lost — at the start of a run of many streams
                // the first prediction of each can take longer than a period (the streams' first
                // frames queue for the shared network). Only beyond what a sink can hold is one dropped.
                heldFirst.append(frame)
                if heldFirst.count > heldFirstBound {
                    heldFirst.removeFirst()
                    composite.counters.update { $0.droppedLate += 1 }
                }
                return []
            }
            return [group(newest.compactMap { $0 }, replacingFirstWith: frame)]
        case .sameFrame:
            // Offline, a full list waits for partners instead of dropping (the other ports' senders
            // run on their own threads and will deliver), unless none can come any more.
            // (Ports fed only by the same sources never hold: their partners follow on the same path.
            // A safety valve lets go after `holdLimit` seconds, in case both sides wait for frames a
            // filter chose not to emit.)
            let holdUntil = Date(timeIntervalSinceNow: holdLimit)
            while holdsSenders && waiting[port].count >= maxWaiting && !context.isStopRequested && !partnersEnded(for: port)
                    && Date() < holdUntil {
                _ = lock.wait(until: Date(timeIntervalSinceNow: 0.05))
            }
            waiting[port].append(frame)
            defer { lock.broadcast() }
            if waiting[port].count > maxWaiting {
                waiting[port].removeFirst()
                composite.counters.update { $0.droppedLate += 1 }
            }
            var group: [Frame] = []
            for p in waiting.indices {
                guard let match = waiting[p].first(where: { $0.sequence == frame.sequence }) else { return [] }
                group.append(match)
            }
            // Complete: forget this frame and anything older on every port (wakes held senders).
            for p in waiting.indices {
                let stale = waiting[p].filter { $0.sequence < frame.sequence }.count
                if stale > 0 { composite.counters.update { $0.droppedLate += stale } }
                waiting[p].removeAll { $0.sequence <= frame.sequence }
            }
            return [group]
        }
    }
}

extension CompositeInbox {
    /// Newest policy: `ports` (port 0 the frame shown, the others the newest results), with how old
    /// the oldest result is against the frame recorded, in output periods (0: its own). Under the lock.
    fileprivate func group(_ ports: [Frame], replacingFirstWith frame: Frame) -> [Frame] {
        var ports = ports
        ports[0] = frame
        let oldest = ports.dropFirst().map(\.captureTime).min() ?? frame.captureTime
        let age = min(NodeCounters.maxAgeTicks, max(0, Int(((frame.captureTime - oldest) * context.fps).rounded())))
        composite.counters.update {
            if $0.resultAgeTicks.count <= age { $0.resultAgeTicks += Array(repeating: 0, count: age + 1 - $0.resultAgeTicks.count) }
            $0.resultAgeTicks[age] += 1
        }
        return ports
    }

    /// At the end of a run: first frames still waiting for a result (none ever came) were not shown.
    func countUnpaired() {
        lock.lock()
        defer { lock.unlock() }
        if !heldFirst.isEmpty {
            let unpaired = heldFirst.count
            heldFirst = []
            composite.counters.update { $0.droppedLate += unpaired }
        }
    }

    /// Whether `port` has no partner sources of its own (then its sender is never held), or every one
    /// of them has ended (then frames waiting on `port` beyond what can still pair never will).
    fileprivate func partnersEnded(for port: Int) -> Bool {
        guard partnerSources.indices.contains(port) else { return true }
        return partnerSources[port].allSatisfy { $0.node?.hasEnded.load(ordering: .acquiring) ?? true }
    }
}

/// Sinks in offline mode: every frame is consumed as it arrives.
final class DirectSinkInbox: Inbox, @unchecked Sendable {
    private let sink: SinkNode
    private let call: NodeCall

    init(sink: SinkNode, context: RunContext) {
        self.sink = sink
        call = NodeCall(node: sink, context: context)
    }

    func accept(_ frame: Frame, port: Int, lane: Lane) {
        sink.counters.update { $0.received += 1 }
        call.consume(frame, by: sink, isNew: true, lane: lane)
    }
}
