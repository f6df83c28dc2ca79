import Foundation
import Synchronization

/// Runs a graph: checks its wiring, negotiates formats, starts every node, runs sources, workers and
/// the output clock on their threads, stops cleanly, and reports what happened.
///
/// ```swift
/// let source = FileSource(name: "in", path: "clip.mp4")
/// source --> Resize(name: "small", width: 256, height: 256) --> FileSink(name: "out", path: "o.mp4")
/// let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
/// print(report.table())
/// ```
///
/// Threads: each source has its own thread and lane; each worker node (``Execution/worker``) has its
/// own; in live mode the output ticker has one. Everything else runs inline on the thread
/// that delivered the frame.
public final class GraphRunner: @unchecked Sendable {
    public let sources: [SourceNode]
    public let context: RunContext
    /// Every node reachable from the sources, upstream before downstream.
    public private(set) var nodes: [Node] = []
    /// What each node receives and emits, after validation (a late stream's chain: from its first frame).
    private let descriptions = Protected(Descriptions())
    /// Sources that started late (``SourceNode/startsLate``), each with the nodes it alone feeds,
    /// upstream first: not negotiated nor started until the source's first frame (``startLateChain(of:)``).
    private let lateChains = Protected<[ObjectIdentifier: [Node]]>([:])
    /// The nodes started so far (the late chains' join them when they start): the ones the run finishes.
    private let startedNodes = Protected<Set<ObjectIdentifier>>([])
    private let lateStart = NSLock()

    private var workers: [any RunWorker] = []
    private var sharedWorkers: [SharedWorker] = []
    private var clockedSinks: [ClockedSinkInbox] = []
    /// Every node's inbox during a run (nodes point at theirs weakly).
    private var inboxes: [any Inbox] = []
    private let runningSources = RunningCount()
    private var validated = false

    public init(sources: [SourceNode], options: RunOptions) throws {
        self.sources = sources
        var tracer: Tracer?
        if let url = options.traceURL {
            tracer = try Tracer(url: url, origin: options.clock.now())
        }
        context = RunContext(options: options, tracer: tracer, streams: sources.count)
    }

    /// Asks the run to stop: sources end, in-flight work finishes, sinks finalize.
    public func stop() { context.requestStop() }

    /// Checks the wiring and the formats of the whole graph before any frame flows: every port
    /// connected once, no cycles, every output used, and every node accepting what arrives. Opens the
    /// sources to learn what they emit; other nodes are started by ``run(progress:)``.
    public func validate() throws {
        guard !validated else { return }
        nodes = try Self.topologicalOrder(from: sources, limit: context.options.maxNodes)
        Self.linkUpstreamSources(nodes)
        context.setNodes(nodes)
        try checkFiles()
        var started: [Node] = []
        do {
            for source in sources {
                source.mayStartLate = sources.count > 1 && nodes.allSatisfy { node in
                    !node.upstreamSources.contains { $0 === source } || node.upstreamSources.count == 1
                }
                try source.start(context: context)
                started.append(source)
            }
            // A stream that started late: the nodes it alone feeds wait for its first frame.
            var late: [ObjectIdentifier: [Node]] = [:]
            for source in sources where source.startsLate {
                late[ObjectIdentifier(source)] = nodes.filter { $0 !== source && $0.upstreamSources.count == 1 && $0.upstreamSources[0] === source }
            }
            let waiting = Set(late.values.joined().map(ObjectIdentifier.init)).union(late.keys)
            try descriptions.withLock { try Self.describe(nodes.filter { !waiting.contains(ObjectIdentifier($0)) }, into: &$0) }
            lateChains.withLock { $0 = late }
        } catch {
            for node in started { try? node.finish(context: context) }
            throw error
        }
        startedNodes.withLock { $0 = Set(sources.map(ObjectIdentifier.init)) }
        validated = true
    }

    /// What the nodes of the graph receive and emit, as validation finds it.
    private struct Descriptions {
        var inputs: [ObjectIdentifier: [FrameDescription]] = [:]
        var outputs: [ObjectIdentifier: FrameDescription?] = [:]
        /// What arrives at each node's ports, by port, from the nodes described so far.
        var incoming: [ObjectIdentifier: [Int: FrameDescription]] = [:]
    }

    /// Describes `nodes` (upstream first; what feeds them described already): a source's output, or
    /// what each other node makes of what arrives at its ports; checks each connection's kind.
    private static func describe(_ nodes: [Node], into d: inout Descriptions) throws {
        for node in nodes {
            let id = ObjectIdentifier(node)
            let output: FrameDescription?
            if let source = node as? SourceNode {
                output = try source.outputDescription()
            } else {
                let byPort = d.incoming[id] ?? [:]
                let inputs = node.inputPorts.indices.compactMap { byPort[$0] }
                d.inputs[id] = inputs
                node.inputs = inputs
                output = try node.negotiate(inputs: inputs)
            }
            var stream = output
            stream?.kind = node.outputKind
            d.outputs[id] = stream
            if let stream {
                for t in node.targets {
                    try checkKind(stream, from: node, to: t)
                    d.incoming[ObjectIdentifier(t.node), default: [:]][t.port] = stream
                }
            }
        }
    }

    /// A late stream's first frame is here: negotiates and starts the nodes it alone feeds (on the
    /// source's thread, before the frame goes on). Returns false (nothing done) for other sources.
    private func startLateChain(of source: SourceNode) throws -> Bool {
        guard let chain = lateChains.withLock({ $0.removeValue(forKey: ObjectIdentifier(source)) }) else { return false }
        // One chain at a time: members of a worker group load their shared model through one leader.
        lateStart.lock()
        defer { lateStart.unlock() }
        try descriptions.withLock { try Self.describe([source] + chain, into: &$0) }
        var started: [Node] = []
        do {
            for node in chain {
                try node.start(context: context)
                started.append(node)
            }
        } catch {
            for node in started { try? node.finish(context: context) }
            throw error
        }
        startedNodes.withLock { $0.formUnion(chain.map(ObjectIdentifier.init)) }
        return true
    }

    /// The late streams whose chains never started (no frame came), each with the nodes left unstarted.
    private var unstartedChains: [(source: SourceNode, nodes: [Node])] {
        let late = lateChains.withLock { $0 }
        return sources.compactMap { source in late[ObjectIdentifier(source)].map { (source, $0) } }
    }

    /// Throws when `stream` (what `node` emits) is not the kind `connection`'s port takes: results
    /// into a frame port (a detector into an encoder) or frames into a results port (unless the
    /// node's frames carry its results: ``Node/framesCarryResults``).
    static func checkKind(_ stream: FrameDescription, from node: Node, to connection: Connection) throws {
        let kinds = connection.node.inputKinds
        guard kinds.indices.contains(connection.port), let wanted = kinds[connection.port], wanted != stream.kind else { return }
        if wanted == .results, stream.kind == .frames, node.framesCarryResults { return }
        let what: (StreamKind) -> String = { $0 == .frames ? "frames" : "results (detections, landmarks, labels)" }
        throw GraphError.mismatch(node: connection.node.name, port: connection.node.portName(connection.port), field: "stream",
                                  expected: what(wanted), got: "\(what(stream.kind)) from \(node.kind) '\(node.name)'")
    }

    /// Checks every output (the nodes', the trace, the caller's other outputs) against every input
    /// and against each other, opening nothing (``validate()`` does it first too).
    public func checkFiles() throws {
        let nodes = try Self.topologicalOrder(from: sources, limit: context.options.maxNodes)
        var inputs: [(path: String, owner: String)] = []
        var outputs: [(path: String, owner: String)] = []
        for node in nodes {
            inputs += node.filesRead.map { ($0, "node '\(node.name)'") }
            outputs += node.filesWritten.map { ($0, "node '\(node.name)'") }
        }
        for (path, owner) in context.options.otherInputs.sorted(by: { $0.key < $1.key }) { inputs.append((path, owner)) }
        if let trace = context.options.traceURL { outputs.append((trace.relativePath, "the trace")) }
        for (path, owner) in context.options.otherOutputs.sorted(by: { $0.key < $1.key }) { outputs.append((path, owner)) }
        for output in outputs { try OutputFile.checkLocal(output.path) }
        try FileCheck.checkOutputs(outputs, inputs: inputs)
        context.setInputFiles(inputs.map(\.path))
    }

    /// What `node` emits (valid after ``validate()``; nil for sinks).
    public func output(of node: Node) -> FrameDescription? {
        descriptions.withLock { $0.outputs[ObjectIdentifier(node)] ?? nil }
    }

    /// Starts every node but the sources (already started by validation) and the late streams'
    /// chains (started at their first frame); on failure finishes what was started, sources included.
    private func startNodes() throws {
        var started: [Node] = sources
        let waiting = Set(lateChains.withLock { $0.values.joined().map(ObjectIdentifier.init) })
        do {
            for node in nodes where !(node is SourceNode) && !waiting.contains(ObjectIdentifier(node)) {
                try node.start(context: context)
                started.append(node)
            }
            startedNodes.withLock { $0.formUnion(started.map(ObjectIdentifier.init)) }
        } catch {
            for node in started { try? node.finish(context: context) }
            throw error
        }
    }

    /// What arrives at `node`'s ports (valid after ``validate()``).
    public func inputs(of node: Node) -> [FrameDescription] {
        descriptions.withLock { $0.inputs[ObjectIdentifier(node)] ?? [] }
    }

    /// Runs until every source ends (or ``stop()``), then finishes every node and returns the report.
    /// Validation errors are thrown before anything runs; errors while running end the run early and
    /// are in the report's `failure` (sinks are still finalized).
    public func run(progress: (@Sendable (RunReport) -> Void)? = nil) throws -> RunReport {
        try validate()
        if context.isStopRequested {
            // Stopped (Ctrl-C) before frames could flow: nothing is opened or written.
            for source in sources { try? source.finish(context: context) }
            var report = report()
            report.started = false
            return report
        }
        try context.tracer?.begin()
        try startNodes()
        installInboxes()
        context.markStart()
        let clock = context.clock
        let done = DispatchGroup()

        // Every participating thread joins the clock and the sources count as running before any
        // thread starts: a virtual clock may only advance once all of them are asleep, and the output
        // clock must not see "no source running" before the sources have begun.
        runningSources.store(sources.count)
        let sourceLanes = sources.indices.map { Lane(id: $0 + 1, name: "source: \(sources[$0].name)") }
        sources.forEach { _ in clock.join() }
        var tickers: [OutputTicker] = []
        if context.mode == .live {
            let workers = self.workers
            let running = runningSources
            let context = self.context
            for (i, group) in tickerGroups().enumerated() {
                let lane = i == 0 ? OutputTicker.lane : Lane(id: OutputTicker.lane.id + i, name: "output clock \(i + 1)")
                tickers.append(OutputTicker(inboxes: group, lane: lane, context: context) {
                    context.isAbandoned || (running.load() == 0 && workers.allSatisfy(\.isIdle))
                })
                clock.join()
            }
        }

        workers.forEach { $0.start() }
        for t in tickers {
            done.enter()
            let thread = Thread { Lane.current = t.lane; t.run(); done.leave() }
            thread.name = t.lane.name
            thread.start()
        }
        for (source, lane) in zip(sources, sourceLanes) {
            done.enter()
            // The thread holds the runner and the source only while it runs them (weakly otherwise), so
            // nothing of the graph outlives run() through a thread that is still winding down.
            let thread = Thread { [weak self, weak source] in
                Lane.current = lane
                if let self, let source {
                    source.hasEnded.store(false, ordering: .releasing)
                    self.runSource(source, lane: lane)
                    source.hasEnded.store(true, ordering: .releasing)
                    self.runningSources.decrement()
                }
                clock.leave()
                done.leave()
            }
            thread.name = lane.name
            thread.start()
        }

        // Progress while waiting (twice a second). After a stop, work in flight gets
        // `stopGrace` seconds (on the run's clock) to finish; then the run gives up on it, and on
        // threads still blocked after another grace period (a source stuck in a read).
        var stoppedAt: Double?
        while done.wait(timeout: .now() + min(0.5, max(0.05, context.options.stopGrace / 4))) == .timedOut {
            progress?(report())
            guard context.isStopRequested else { continue }
            let now = clock.now()
            let since = now - (stoppedAt ?? now)
            stoppedAt = stoppedAt ?? now
            if since >= context.options.stopGrace && !context.isAbandoned {
                context.warn("work still in flight \(OptionKind.format(context.options.stopGrace)) s after the stop is dropped; the outputs are finalized without it")
                context.abandon()
                workers.forEach { $0.abandon() }
            } else if since >= 2 * context.options.stopGrace {
                break
            }
        }
        workers.forEach { $0.waitUntilIdle() }
        workers.forEach { $0.shutdown() }
        for case let composite as CompositeInbox in inboxes { composite.countUnpaired() }
        let started = startedNodes.withLock { $0 }
        for (source, chain) in unstartedChains {
            // A late stream that never sent a frame: its nodes never started, and write nothing.
            let files = chain.flatMap(\.filesWritten)
            let why = source.connection?.snapshot.lastLoss.map { " (last: \($0))" } ?? ""
            context.warn("stream '\(source.streamName ?? source.name)' sent no picture during the run\(why); its nodes did not start"
                         + (files.isEmpty ? "" : " and \(files.joined(separator: ", ")) was not written"))
        }
        for node in nodes where started.contains(ObjectIdentifier(node)) {
            // Given up on work in flight: a late frame may still be arriving at this node; its lock
            // keeps finishing and that frame apart.
            // A node still running its abandoned job (its lock held) is not finished under it.
            let locked = context.isAbandoned
            if locked && !node.processLock.lock(before: Date().addingTimeInterval(1)) { continue }
            do {
                try node.finish(context: context)
            } catch {
                context.fail(error, node: node.name)
            }
            if locked { node.processLock.unlock() }
        }
        context.tracer?.close()
        let final = report()
        releaseRun()
        return final
    }

    private func runSource(_ source: SourceNode, lane: Lane) {
        let clock = context.clock
        let call = NodeCall(node: source, context: context)
        let paced = context.mode == .live && source.pacedByMediaTime
        var firstMediaTime: Double?
        /// Live, paced: when the first frame was ready (the others are due after it by their media time).
        var pacingStart: Double?
        /// The source's first media time: offline, `duration` counts from it (the source ends at its
        /// first frame that far past it); the progress line too.
        var firstSourceTime: Double?
        var sequence = 0
        var rateSlots = RateSlots(fps: context.fps)
        while !context.isStopRequested {
            context.stopIfPastDuration()
            if context.isStopRequested { break }
            let start = clock.now()
            let next: Frame?
            do {
                next = try source.nextFrame(context: context)
            } catch {
                context.fail(error, node: source.name)
                break
            }
            let lost = source.framesLostToDamage
            guard var frame = next else {
                source.counters.update { $0.droppedCorrupt = lost }
                break
            }
            let firstTime = firstSourceTime ?? frame.mediaTime
            firstSourceTime = firstTime
            if context.mode == .offline, let limit = context.options.duration {
                if frame.mediaTime - firstTime >= limit - 1e-9 {
                    source.counters.update { $0.droppedCorrupt = lost }
                    break
                }
            }
            let end = clock.now()
            source.counters.update { $0.received += 1; $0.processed += 1; $0.latency.record(end - start); $0.droppedCorrupt = lost }
            context.tracer?.span(source.name, category: source.kind, lane: lane, start: start, end: end, sequence: sequence)
            if paced {
                let first = firstMediaTime ?? frame.mediaTime
                firstMediaTime = first
                // The first frame is captured when it is ready (its decoding and the thread's start
                // are not the graph's latency: counted in, they set an auto D a tick too high for
                // the whole run), the others at their media time after it.
                // (On the output's frame grid: the next slot at or after that moment.)
                let ready = max(0, clock.now() - context.startTime)
                let anchor = pacingStart ?? context.startTime + (ready * context.fps - 1e-6).rounded(.up) / context.fps
                pacingStart = anchor
                // Captured when it was due, as a camera's driver stamps a frame when the sensor took
                // it: a late wake-up of this thread is part of the latency the delay D must absorb.
                let due = anchor + (frame.mediaTime - first)
                clock.sleep(until: due, lane: lane.id)
                frame.captureTime = due
            } else if frame.captureTime == 0 {
                frame.captureTime = clock.now()
            }
            if context.mode == .live && !rateSlots.admit(paced ? frame.mediaTime : frame.captureTime) {
                // Faster than the output clock: this tick's frame was already sent on.
                source.counters.update { $0.droppedRate += 1 }
                continue
            }
            if sequence == 0 {
                // A late stream's first frame: its chain starts now. Negotiating and opening its
                // nodes (an encoder, a model) is not the graph's latency: the frame counts from here.
                do {
                    if try startLateChain(of: source) { frame.captureTime = max(frame.captureTime, clock.now()) }
                } catch {
                    context.fail(error, node: source.name)
                    break
                }
            }
            frame.sequence = sequence
            sequence += 1
            context.noteCapture(frame.captureTime)
            context.noteMediaProgress(frame.mediaTime - firstTime)
            call.forward(frame, lane: lane)
        }
    }

    /// Gives every node the inbox its role and ``Node/execution`` call for. The runner owns them (and
    /// the workers); ``releaseRun()`` lets them go when the run ends.
    private func installInboxes() {
        workers = []
        sharedWorkers = []
        clockedSinks = []
        inboxes = []
        func worker(for node: Node) -> Worker {
            // A composite's worker keeps one frame waiting (it must see every frame it can); a
            // filter's (a network's) admits a frame only when idle.
            let isComposite = node is CompositeNode
            let w = Worker(lane: Lane(id: 100 + workers.count, name: "worker: \(node.name)"), context: context,
                           waitingSlot: isComposite,
                           niceness: context.mode == .live && !isComposite ? context.options.networkNice : nil)
            workers.append(w)
            return w
        }
        // Worker groups: the members of each and one shared worker per group.
        var groupMembers: [ObjectIdentifier: [FilterNode]] = [:]
        for case let sharing as any WorkerSharing in nodes where sharing.execution == .worker {
            if let group = sharing.workerGroup { groupMembers[ObjectIdentifier(group), default: []].append(sharing) }
        }
        var shared: [ObjectIdentifier: (worker: SharedWorker, inboxes: [SharedWorkerInbox])] = [:]
        for case let sharing as any WorkerSharing in nodes where sharing.execution == .worker {
            guard let group = sharing.workerGroup, shared[ObjectIdentifier(group)] == nil else { continue }
            // Members in the order of their streams' sources (the sources' lanes), not graph order.
            let rank = { (node: Node) in node.upstreamSources.first.flatMap { s in self.sources.firstIndex { $0 === s } } ?? Int.max }
            let members = (groupMembers[ObjectIdentifier(group)] ?? []).enumerated()
                .sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
            let w = SharedWorker(group: group, members: members.count,
                                 lane: Lane(id: 100 + workers.count, name: "worker: \(group.name)"), context: context)
            workers.append(w)
            sharedWorkers.append(w)
            let memberInboxes = members.enumerated().map { SharedWorkerInbox(filter: $0.element, worker: w, member: $0.offset, context: context) }
            w.attach(memberInboxes)
            shared[ObjectIdentifier(group)] = (w, memberInboxes)
        }
        for node in nodes {
            let inbox: (any Inbox)?
            switch node {
            case let sharing as any WorkerSharing where sharing.execution == .worker && sharing.workerGroup != nil:
                let group = sharing.workerGroup.map { shared[ObjectIdentifier($0)] } ?? nil
                inbox = group?.inboxes.first { $0.filter === sharing }
            case let filter as FilterNode:
                inbox = filter.execution == .worker
                    ? WorkerInbox(filter: filter, worker: worker(for: filter), context: context)
                    : InlineFilterInbox(filter: filter, context: context)
            case let composite as CompositeNode:
                inbox = CompositeInbox(composite: composite, worker: composite.execution == .worker ? worker(for: composite) : nil,
                                       portSources: sourcesByPort(of: composite),
                                       context: context)
            case let sink as SinkNode where context.mode == .live && sink.isClocked:
                // Several streams: a sink fed by one source follows its stream's own delay D.
                let upstream = sink.upstreamSources
                let own = sources.count > 1 && upstream.count == 1 ? context.presentation(for: upstream[0]) : nil
                let clocked = ClockedSinkInbox(sink: sink, context: context, presentation: own)
                clockedSinks.append(clocked)
                inbox = clocked
            case let sink as SinkNode:
                inbox = DirectSinkInbox(sink: sink, context: context)
            default:
                inbox = nil  // sources have no inbox
            }
            if let inbox {
                inboxes.append(inbox)
                node.inbox = inbox
            }
        }
    }

    /// The clocked sinks of each output clock: one clock for all of them, or with several sources one
    /// per stream (the sinks only that source feeds), so that each stream's encoding runs on a thread
    /// of its own as in a process of its own; sinks fed by several sources share the first clock.
    private func tickerGroups() -> [[ClockedSinkInbox]] {
        guard sources.count > 1 else { return [clockedSinks] }
        var shared: [ClockedSinkInbox] = []
        var bySource: [[ClockedSinkInbox]] = Array(repeating: [], count: sources.count)
        for inbox in clockedSinks {
            let upstream = inbox.sink.upstreamSources
            if upstream.count == 1, let i = sources.firstIndex(where: { $0 === upstream[0] }) {
                bySource[i].append(inbox)
            } else {
                shared.append(inbox)
            }
        }
        let groups = ([shared] + bySource).filter { !$0.isEmpty }
        return groups.isEmpty ? [[]] : groups
    }

    /// For each input port of `node`, the sources whose frames reach it.
    private func sourcesByPort(of node: Node) -> [[SourceNode]] {
        var byPort = [[SourceNode]](repeating: [], count: node.inputPorts.count)
        for upstream in nodes {
            for t in upstream.targets where t.node === node && byPort.indices.contains(t.port) {
                for s in upstream.upstreamSources where !byPort[t.port].contains(where: { $0 === s }) { byPort[t.port].append(s) }
            }
        }
        return byPort
    }

    /// Lets go of everything the run made (inboxes, workers and the frames they still hold): after
    /// ``run(progress:)`` returns, the graph's nodes are owned only by whoever built them.
    private func releaseRun() {
        for node in nodes { node.inbox = nil }
        sharedWorkers.forEach { $0.detach() }
        sharedWorkers = []
        inboxes = []
        workers = []
        clockedSinks = []
    }

    /// The report as of now (final once ``run(progress:)`` has returned).
    public func report() -> RunReport {
        RunReport(nodes: nodes, context: context, elapsed: context.clock.now() - context.startTime, sources: sources)
    }

    /// Tells every node which sources reach it (`nodes` upstream first).
    static func linkUpstreamSources(_ nodes: [Node]) {
        var reaching: [ObjectIdentifier: [SourceNode]] = [:]
        for node in nodes {
            var mine = reaching[ObjectIdentifier(node)] ?? []
            if let source = node as? SourceNode { mine.insert(source, at: 0) }
            node.upstreamSourceLinks = mine.map { WeakSource(node: $0) }
            for t in node.targets {
                var theirs = reaching[ObjectIdentifier(t.node)] ?? []
                for s in mine where !theirs.contains(where: { $0 === s }) { theirs.append(s) }
                reaching[ObjectIdentifier(t.node)] = theirs
            }
        }
    }

    /// Nodes reachable from `sources`, upstream first; throws on wiring errors.
    static func topologicalOrder(from sources: [SourceNode], limit: Int = RunOptions.maxNodesDefault) throws -> [Node] {
        guard !sources.isEmpty else { throw GraphError.noSource }
        var all: [Node] = []
        var seen: Set<ObjectIdentifier> = []
        var stack: [Node] = sources
        while let node = stack.popLast() {
            guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
            all.append(node)
            stack.append(contentsOf: node.targets.map(\.node))
        }
        guard all.count <= limit else { throw GraphError.tooManyNodes(count: all.count, limit: limit) }
        var indegree: [ObjectIdentifier: Int] = [:]
        var connected: [ObjectIdentifier: Set<Int>] = [:]
        for node in all {
            if !(node is SinkNode) && node.targets.isEmpty { throw GraphError.outputUnused(node: node.name) }
            for t in node.targets {
                let ports = t.node.inputPorts
                guard ports.indices.contains(t.port) else {
                    throw GraphError.noSuchPort(node: t.node.name, port: t.port, ports: ports)
                }
                guard connected[ObjectIdentifier(t.node), default: []].insert(t.port).inserted else {
                    throw GraphError.portConnectedTwice(node: t.node.name, port: ports[t.port])
                }
                indegree[ObjectIdentifier(t.node), default: 0] += 1
            }
        }
        for node in all {
            for (i, port) in node.inputPorts.enumerated() where !(connected[ObjectIdentifier(node)]?.contains(i) ?? false) {
                throw GraphError.portNotConnected(node: node.name, port: port)
            }
        }
        // Kahn's algorithm, keeping discovery order among ready nodes.
        var order: [Node] = []
        var ready = all.filter { indegree[ObjectIdentifier($0), default: 0] == 0 }
        while !ready.isEmpty {
            let node = ready.removeFirst()
            order.append(node)
            for t in node.targets {
                let id = ObjectIdentifier(t.node)
                indegree[id, default: 0] -= 1
                if indegree[id] == 0 { ready.append(t.node) }
            }
        }
        if order.count < all.count {
            let stuck = all.first { indegree[ObjectIdentifier($0), default: 0] > 0 }
            throw GraphError.cycle(node: stuck?.name ?? "?")
        }
        return order
    }
}

/// How many sources are still producing, shared with the output clock's finish test.
final class RunningCount: Sendable {
    private let value = Atomic<Int>(0)
    func store(_ v: Int) { value.store(v, ordering: .releasing) }
    func load() -> Int { value.load(ordering: .acquiring) }
    func decrement() { value.subtract(1, ordering: .acquiringAndReleasing) }
}

/// Rate conversion at a live source, by error diffusion over the frames' times: each frame adds
/// its distance from the previous one, in output periods, to a credit; a frame goes on when the credit
/// reaches ¾ of a period, and spends one. A source at the clock's rate loses nothing whatever its
/// timestamps' jitter or drift; a faster one keeps the frame nearest each tick, evenly (60 fps: every
/// other frame; 50 fps: three of five). The credit is capped, so a stall does not let a burst through.
struct RateSlots {
    let period: Double
    private var last: Double?
    private var credit = 1.0

    init(fps: Double) {
        period = 1 / fps
    }

    /// Whether the frame at `time` (seconds) goes on.
    mutating func admit(_ time: Double) -> Bool {
        guard time.isFinite else { return true }
        if let last { credit = min(credit + max(0, time - last) / period, 1.25) }
        last = time
        guard credit >= 0.75 else { return false }
        credit -= 1
        return true
    }
}
