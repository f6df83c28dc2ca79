import Foundation
import Synchronization

/// What every node can see while a graph runs: the mode, the clock, the tracer, and the stop flag.
public final class RunContext: Sendable {
    public let options: RunOptions
    /// Clock time at which frames started to flow (after validation and start-up), the origin of live
    /// pacing and of the output ticks.
    public var startTime: Double { Double(bitPattern: startBits.load(ordering: .acquiring)) }
    private let startBits: Atomic<UInt64>
    /// The process's CPU seconds at that moment (for the report's `runCPUSeconds`).
    var startCPUSeconds: Double { Double(bitPattern: startCPUBits.load(ordering: .acquiring)) }
    private let startCPUBits: Atomic<UInt64>
    /// Present when `--trace` was given.
    public let tracer: Tracer?
    private let stopFlag = Atomic<Bool>(false)
    private let abandonedFlag = Atomic<Bool>(false)
    private let reachedDuration = Atomic<Bool>(false)
    private let failure = Protected<GraphFailure?>(nil)
    /// Frames waiting for or running on shared workers, every group together (``RunOptions/frameBudget``).
    let sharedFramesHeld = Atomic<Int>(0)

    public var clock: any RunClock { options.clock }
    public var mode: RunMode { options.mode }
    public var fps: Double { options.fps }
    /// How many sources (streams) the run has: nodes that cost per stream (an encoder) can choose
    /// settings that let that many of them share the machine.
    public let streams: Int

    public init(options: RunOptions, tracer: Tracer? = nil, streams: Int = 1) {
        self.options = options
        self.streams = max(1, streams)
        startBits = Atomic(options.clock.now().bitPattern)
        startCPUBits = Atomic(RunReport.processCPUSeconds().bitPattern)
        self.tracer = tracer
        presentation = PresentationDelayControl(options.latency, fps: options.fps, lowersOnSettling: options.tickPhaseFollowsDelay)
    }

    /// Sets the start of the run to now (the runner calls it just before the first frame).
    func markStart() {
        startCPUBits.store(RunReport.processCPUSeconds().bitPattern, ordering: .releasing)
        startBits.store(clock.now().bitPattern, ordering: .releasing)
    }

    /// Asks the sources to stop; in-flight work still finishes and sinks still finalize.
    public func requestStop() { stopFlag.store(true, ordering: .relaxed) }

    /// Requests a stop once ``RunOptions/duration`` has passed since the start (checked by the
    /// sources after each frame and by the output clock at each tick).
    /// Live: stops the run `duration` seconds of clock time after frames started to flow. Offline the
    /// duration is media time, which each source checks on its frames (``GraphRunner``).
    public func stopIfPastDuration() {
        if mode == .live, let limit = options.duration, clock.now() - startTime >= limit - 1e-9 {
            reachedDuration.store(true, ordering: .relaxed)
            requestStop()
        }
    }

    /// Reports one warning line (``RunOptions/warn``).
    public func warn(_ line: String) { options.warn(line) }

    /// Reports one status line of `source` (lost, waiting for it, back): to
    /// ``RunOptions/sourceStatus``, else as a warning.
    public func status(of source: SourceNode, _ line: String) {
        if let report = options.sourceStatus { report(source.name, source.kind, StreamURL.redact(line)) } else { warn(line) }
    }

    /// Whether a stop was requested (Ctrl-C, an error, a duration limit).
    public var isStopRequested: Bool { stopFlag.load(ordering: .relaxed) }

    /// Whether the run stopped because it had run `duration` (live), not because it was asked to.
    public var stoppedAtDuration: Bool { reachedDuration.load(ordering: .relaxed) }

    /// Whether the run stopped waiting for work in flight (``RunOptions/stopGrace`` passed after a
    /// stop): what that work still produces is dropped, and the outputs are finalized without it.
    public var isAbandoned: Bool { abandonedFlag.load(ordering: .relaxed) }

    /// Gives up on work still in flight (the runner, when the stop grace has passed).
    func abandon() {
        requestStop()
        abandonedFlag.store(true, ordering: .relaxed)
    }

    /// Whether an error has been recorded (``fail(_:node:)``).
    public var hasFailed: Bool { failure.withLock { $0 != nil } }

    /// Records the first error of the run and stops it. Later errors are ignored.
    public func fail(_ error: any Error, node: String) {
        failure.withLock { f in
            if f == nil { f = GraphFailure(node: node, message: describe(error)) }
        }
        requestStop()
    }

    /// Live mode: the presentation delay D shared by the clocked sinks.
    let presentation: PresentationDelayControl
    /// Live, several streams: each stream's own D (keyed by its source), so that one stream's late
    /// frames do not delay the others.
    private let streamPresentations = Protected<[ObjectIdentifier: PresentationDelayControl]>([:])

    /// The delay D of `source`'s stream (made on first use).
    func presentation(for source: SourceNode) -> PresentationDelayControl {
        streamPresentations.withLock { controls in
            if let control = controls[ObjectIdentifier(source)] { return control }
            let control = PresentationDelayControl(options.latency, fps: options.fps, lowersOnSettling: options.tickPhaseFollowsDelay)
            controls[ObjectIdentifier(source)] = control
            return control
        }
    }

    /// The stream's D, if it has its own.
    func streamPresentation(of source: SourceNode) -> PresentationDelayControl? {
        streamPresentations.withLock { $0[ObjectIdentifier(source)] }
    }
    /// The latest capture time a source sent on (for telling why a tick repeated a frame).
    private let latestCapture = Protected<Double>(-.infinity)
    private let mediaSeconds = Protected<Double>(0)

    /// Seconds of media the sources have delivered so far (the furthest of them), for a progress line.
    public var mediaProgress: Double { mediaSeconds.withLock { $0 } }

    /// A source delivered media up to `seconds` from its first frame.
    func noteMediaProgress(_ seconds: Double) {
        guard seconds.isFinite else { return }
        mediaSeconds.withLock { $0 = max($0, seconds) }
    }

    func noteCapture(_ time: Double) {
        latestCapture.withLock { $0 = max($0, time) }
    }

    var latestCaptureTime: Double { latestCapture.withLock { $0 } }

    /// The files the run reads, by identity (set by validation).
    private let inputFiles = Protected<[FileCheck.Identity: String]>([:])

    func setInputFiles(_ paths: [String]) {
        var byIdentity: [FileCheck.Identity: String] = [:]
        for p in paths { if let id = FileCheck.identity(of: p) { byIdentity[id] = p } }
        inputFiles.withLock { $0 = byIdentity }
    }

    /// The input of this run that `path` names (the same file under any name), if any: sinks whose file
    /// names change during the run (a PNG pattern) check each name before writing.
    public func inputFile(sameAs path: String) -> String? {
        guard let id = FileCheck.identity(of: path) else { return nil }
        return inputFiles.withLock { $0[id] }
    }

    /// The error that stopped the run, if one did.
    public var firstFailure: GraphFailure? { failure.withLock { $0 } }

    /// Every node's counters, with how it runs (set by validation).
    private let graphCounters = Protected<[(execution: Execution, role: NodeRole, counters: NodeCounters)]>([])

    func setNodes(_ nodes: [Node]) {
        graphCounters.withLock { $0 = nodes.map { ($0.execution, $0.role, $0.counters) } }
    }

    /// The whole graph's counters so far, summed as the run's report sums them (admitted: frames
    /// taken by worker filters, the networks; composites on workers are not admissions), for an
    /// on-screen line (annotate's HUD).
    public func liveTotals() -> LiveTotals {
        var totals = LiveTotals()
        for (execution, role, counters) in graphCounters.withLock({ $0 }) {
            let s = counters.snapshot
            switch execution {
            case .source: totals.captured += s.emitted
            case .worker: if role != .composite { totals.admitted += s.processed }
            case .sink:
                totals.skippedTicks += s.skippedTicks
                if s.endToEnd.count > 0 { totals.endToEndMedian = max(totals.endToEndMedian ?? 0, s.endToEnd.percentile(0.5)) }
            case .inline: break
            }
            totals.droppedBusy += s.droppedBusy
        }
        return totals
    }
}

/// Counters of a whole graph at one moment (``RunContext/liveTotals()``).
public struct LiveTotals: Sendable, Equatable {
    /// Frames the sources sent on.
    public var captured = 0
    /// Frames taken by worker nodes (networks), summed over them.
    public var admitted = 0
    /// Frames refused by busy worker nodes, summed.
    public var droppedBusy = 0
    /// Output ticks that wrote nothing (skip policy), summed over the sinks.
    public var skippedTicks = 0
    /// Median capture-to-output latency so far, in seconds, of the slowest sink (nil before any output).
    public var endToEndMedian: Double?
}

/// The error that ended a run early: which node, and its message.
public struct GraphFailure: Sendable, Codable, CustomStringConvertible {
    public var node: String
    public var message: String
    public var description: String { "\(node): \(message)" }
}

/// The text shown to users for an error: its description when it has one.
public func describe(_ error: any Error) -> String {
    // A Foundation file error: the path and the system's reason, not a framework dump.
    let ns = error as NSError
    if ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain {
        let path = (ns.userInfo[NSFilePathErrorKey] as? String) ?? (ns.userInfo[NSURLErrorKey] as? URL)?.path
        return (path.map { "\($0): " } ?? "") + FileCheck.plainReason(error)
    }
    return StreamURL.redact(String(describing: error))  // a stream address's credentials never reach a message
}
