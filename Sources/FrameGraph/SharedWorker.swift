import Foundation
import Synchronization

/// The thread of a ``WorkerGroup``: one frame waiting or in flight per member at most, members served
/// round-robin, up to the group's batch limit per turn (see ``WorkerGroup``).
///
/// Clock: the worker is joined to the run's clock from the moment a frame waits for it until it has
/// nothing left, as a node's own ``Worker`` is per job; offline, a sender held for its member leaves
/// the clock and the worker re-joins it on its behalf when it frees that member.
final class SharedWorker: RunWorker, @unchecked Sendable {
    let lane: Lane
    /// The group's ``WorkerGroup/batchLimit`` (the worker keeps no reference to the group: its thread
    /// may outlive the run by a moment).
    private let batchLimit: Int
    private let context: RunContext
    private let state = WorkerThreadState()
    private var condition: NSCondition { state.condition }
    private let members: Int
    /// Per member: its frame waiting for a turn.
    private var waiting: [BatchItem?]
    /// Per member: a frame waiting or in flight.
    private var held: [Bool]
    /// Per member: senders held offline, and a counter that tells them their member is free.
    private var heldSenders: [Int]
    private var freed: [Int]
    /// The member a turn looks at first (the one after the previous turn's first).
    private var cursor = 0
    /// Per member: when it was last admitted (an admission count; -1: never), and the count.
    private var lastAdmitted: [Int]
    private var admissions = 0
    /// Whether the worker is joined to the clock (a frame waiting or a turn running).
    private var joined = false
    private var turnRunning = false
    private var abandoned: Bool { state.abandoned }
    /// The members' inboxes, in member order (set once by ``attach(_:)``, before the thread starts;
    /// they point back at the worker unowned: the runner owns both for the run).
    private var inboxes: [SharedWorkerInbox] = []

    init(group: WorkerGroup, members: Int, lane: Lane, context: RunContext) {
        batchLimit = group.batchLimit
        self.members = members
        self.lane = lane
        self.context = context
        waiting = Array(repeating: nil, count: members)
        held = Array(repeating: false, count: members)
        heldSenders = Array(repeating: 0, count: members)
        freed = Array(repeating: 0, count: members)
        lastAdmitted = Array(repeating: -1, count: members)
    }

    /// Live, under ``RunOptions/frameBudget``: whether `member` may take one of the free places. The
    /// free places go to the members admitted longest ago first (among those with no frame held),
    /// so streams that arrive first in each frame period cannot starve the others. Lock held.
    private func withinBudget(_ member: Int, budget: Int) -> Bool {
        let free = budget - context.sharedFramesHeld.load(ordering: .acquiring)
        guard free > 0 else { return false }
        let mine = (lastAdmitted[member], member)
        let ahead = (0..<members).filter { $0 != member && !held[$0] && (lastAdmitted[$0], $0) < mine }.count
        return ahead < free
    }

    /// Sets the members' inboxes (in member order), before ``start()``.
    func attach(_ inboxes: [SharedWorkerInbox]) {
        precondition(inboxes.count == members, "one inbox per member")
        self.inboxes = inboxes
    }

    /// Lets go of the members' inboxes (the run has ended).
    func detach() {
        condition.lock()
        inboxes = []
        condition.unlock()
    }

    /// Runs one turn on the worker thread: every member's lock held, the first item's node runs the
    /// batch (``WorkerSharing/processBatch(_:context:)``), each member counts, traces and forwards its
    /// output.
    private func runTurn(_ items: [BatchItem], members turn: [Int], inboxes: [SharedWorkerInbox]) {
        let nodes = turn.map { inboxes[$0].filter }
        for node in nodes { node.processLock.lock() }
        let start = context.clock.now()
        var outputs: [Frame?] = []
        do {
            if let leader = items.first?.node as? any WorkerSharing {
                outputs = try leader.processBatch(items, context: context)
            } else {
                outputs = try items.map { try $0.node.process($0.frame, prepared: $0.prepared, context: context) }
            }
            if outputs.count != items.count {
                throw GraphError.nodeFailed(node: nodes[0].name, reason: "a batch of \(items.count) frames gave \(outputs.count) outputs")
            }
        } catch {
            context.fail(error, node: nodes[0].name)
            outputs = []
        }
        let end = context.clock.now()
        for node in nodes.reversed() { node.processLock.unlock() }
        for (k, m) in turn.enumerated() {
            inboxes[m].finish(outputs.indices.contains(k) ? outputs[k] : nil, sequence: items[k].frame.sequence, start: start, end: end)
        }
    }

    /// Whether `member` has a frame waiting or in flight (live: a new one would be dropped).
    func isHeld(_ member: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return held[member]
    }

    /// Offers `item` for `member`. Live: accepted, or refused while the member's previous frame
    /// waits or runs. Offline: waits until the member is free, then accepted.
    func submit(member: Int, _ item: BatchItem) -> Submission {
        condition.lock()
        defer { condition.unlock() }
        if context.mode == .live {
            if held[member] { return .refused }
            if let budget = context.options.frameBudget, !withinBudget(member, budget: budget) { return .refused }
        } else {
            while held[member] {
                if abandoned { return .refused }
                let generation = freed[member]
                heldSenders[member] += 1
                context.clock.leave()
                while freed[member] == generation && !abandoned { condition.wait() }
            }
            if abandoned { return .refused }
        }
        held[member] = true
        waiting[member] = item
        lastAdmitted[member] = admissions
        admissions += 1
        context.sharedFramesHeld.add(1, ordering: .acquiringAndReleasing)
        if !joined {
            joined = true
            context.clock.join()  // the worker takes part in the run until it has nothing left
        }
        condition.broadcast()
        return .accepted
    }

    /// The members of the next turn, round-robin from the cursor. Called with the lock held.
    private func nextTurn() -> [Int] {
        var turn: [Int] = []
        for k in 0..<members {
            let m = (cursor + k) % members
            if waiting[m] != nil { turn.append(m) }
            if turn.count == batchLimit { break }
        }
        if let first = turn.first { cursor = (first + 1) % members }
        return turn
    }

    /// The worker thread's loop; returns after ``shutdown()``.
    func run() {
        condition.lock()
        while true {
            var turn = nextTurn()
            while turn.isEmpty && !state.stopping {
                condition.wait()
                turn = nextTurn()
            }
            if turn.isEmpty { break }
            let items = turn.compactMap { waiting[$0] }
            for m in turn { waiting[m] = nil }
            turnRunning = true
            let inboxes = self.inboxes
            condition.unlock()
            if inboxes.count == members { runTurn(items, members: turn, inboxes: inboxes) }
            condition.lock()
            turnRunning = false
            context.sharedFramesHeld.subtract(turn.count, ordering: .acquiringAndReleasing)
            for m in turn {
                held[m] = false
                if heldSenders[m] > 0 {
                    for _ in 0..<heldSenders[m] { context.clock.join() }
                    heldSenders[m] = 0
                    freed[m] += 1
                }
            }
            condition.broadcast()
            if waiting.allSatisfy({ $0 == nil }) && joined {
                joined = false
                context.clock.leave()
            }
        }
        state.markExited()
        condition.unlock()
    }

    func start() {
        state.start(lane: lane) { [self] in run() }
    }

    var isIdle: Bool { state.withLock { !held.contains(true) } }

    func waitUntilIdle() { state.waitUntilIdle { held.contains(true) } }

    func abandon() { state.abandon() }

    func shutdown() { state.shutdown { turnRunning } }
}

/// A member of a ``WorkerGroup``: prepares on the delivering thread, then hands the frame to the
/// group's ``SharedWorker`` under its own drop-while-busy admission.
final class SharedWorkerInbox: Inbox, @unchecked Sendable {
    let filter: FilterNode
    unowned let worker: SharedWorker
    let member: Int
    private let call: NodeCall
    private let context: RunContext
    private let prepareLock = NSLock()

    init(filter: FilterNode, worker: SharedWorker, member: Int, context: RunContext) {
        self.filter = filter
        self.worker = worker
        self.member = member
        self.context = context
        call = NodeCall(node: filter, context: context)
    }

    func accept(_ frame: Frame, port: Int, lane callerLane: Lane) {
        filter.counters.update { $0.received += 1 }
        if context.mode == .live && worker.isHeld(member) {
            call.dropBusy(sequence: frame.sequence, lane: worker.lane)
            return
        }
        guard let prepared = call.prepare(frame, for: filter, under: prepareLock) else { return }
        if worker.submit(member: member, BatchItem(node: filter, frame: frame, prepared: prepared.value)) == .refused {
            call.dropBusy(sequence: frame.sequence, lane: worker.lane)
        }
    }

    /// Counts and traces a turn's result for this member, and sends its output on.
    func finish(_ output: Frame?, sequence: Int, start: Double, end: Double) {
        filter.counters.update { $0.processed += 1; $0.latency.record(end - start) }
        context.tracer?.span(filter.name, category: filter.kind, lane: worker.lane, start: start, end: end, sequence: sequence)
        if let output { call.forward(output, lane: worker.lane) }
    }
}
