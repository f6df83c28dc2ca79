import Foundation

/// Latency percentiles in milliseconds.
public struct LatencySummary: Codable, Sendable, Equatable {
    public var count: Int
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var max: Double
    public var mean: Double

    public init(_ h: LatencyHistogram) {
        count = h.count
        p50 = h.percentile(0.50) * 1000
        p95 = h.percentile(0.95) * 1000
        p99 = h.percentile(0.99) * 1000
        max = h.max * 1000
        mean = h.mean * 1000
    }
}

/// A value the presentation delay took during a live run.
public struct DelayChange: Codable, Sendable, Equatable {
    /// Seconds into the run.
    public var atSeconds: Double
    /// The delay from then on, in milliseconds.
    public var delayMs: Double
}

/// Counters and latency of one node.
public struct NodeReport: Codable, Sendable {
    public var name: String
    public var kind: String
    public var received: Int
    public var processed: Int
    public var emitted: Int
    public var droppedBusy: Int
    public var droppedLate: Int
    public var duplicated: Int
    public var skippedTicks: Int
    /// Frames a source could not deliver (a camera: lost at the driver, skipped for a newer one, damaged).
    public var droppedAtSource: Int
    /// Frames a file source lost to damage inside the file.
    public var droppedCorrupt: Int
    /// Predictions whose outputs held NaN or infinite values (replaced by 0).
    public var nonFinite: Int
    /// Frames a live source did not send on because the output clock could not show them.
    public var droppedRate: Int
    /// Of `duplicated`: ticks whose frame was captured in time but still in the graph.
    public var duplicatedBusy: Int
    /// Most frames a clocked sink held at once (live mode).
    public var queuedMax: Int
    /// Time per frame inside the node.
    public var latency: LatencySummary
    /// Capture-to-output latency of new frames (sinks only).
    public var endToEnd: LatencySummary?
    /// Network nodes: where the model came from (file, collection deployment, or fallback and why).
    public var modelSource: String?
    /// Network nodes: model switches during the run (`--hot-swap`; 0 without it).
    public var modelSwaps: Int?
    /// Network sources: reconnects, stalls, drops and seconds without signal.
    public var connection: ConnectionCounters.Snapshot?
}

/// What a run did, as printed at the end and written by `--stats` (schema in docs/CLI.md).
///
/// Run-level counts: `framesIn` is what the sources produced; `droppedAtSource` what they could not
/// deliver (camera frames lost at the driver or skipped for a newer one); `admitted` and `droppedBusy` add up the
/// worker nodes (with none, every frame is admitted); `droppedLate`, `duplicated`, `skippedTicks` and
/// `framesOut` are those of the primary sink (the first sink in graph order), plus composites'
/// unpaired frames in `droppedLate`.
public struct RunReport: Codable, Sendable {
    public var mode: String
    public var fps: Double
    public var elapsedSeconds: Double
    /// User + system CPU of the whole process (model loading and compiling included).
    public var cpuSeconds: Double
    /// User + system CPU of the process from the first frame to the end of the run: the span of
    /// `elapsedSeconds`, start-up excluded (nil in a report read from an older stats file).
    public var runCPUSeconds: Double?
    public var framesIn: Int
    /// Frames the sources dropped before emitting them (cameras: driver gaps, latest-frame skips).
    public var droppedAtSource: Int
    /// Frames lost to damage inside input files (skipped; the rest was read).
    public var droppedCorrupt: Int
    /// Predictions with NaN or infinite outputs, all network nodes together (replaced by 0).
    public var nonFinite: Int
    /// Frames live sources did not send on because the output clock could not show them (a source
    /// faster than the clock), dropped before any network.
    public var droppedRate: Int
    /// Of `duplicated`: ticks whose new frame had been captured in time but was still in the graph
    /// (a busy network); the rest had no new frame from the source.
    public var duplicatedBusy: Int
    /// Live mode: the presentation delay D at the end of the run, in milliseconds, and every value it
    /// took (seconds into the run, milliseconds).
    public var presentationDelayMs: Double
    public var presentationDelayChanges: [DelayChange]
    public var admitted: Int
    public var droppedBusy: Int
    public var droppedLate: Int
    public var duplicated: Int
    public var skippedTicks: Int
    public var framesOut: Int
    /// Output frames per second of elapsed time.
    public var achievedFps: Double
    public var endToEnd: LatencySummary
    /// The latency budget: each stage of a frame's way with p50/p99 (nil in older stats files).
    public var stages: [StageLatency]?
    /// Frames the network nodes were admitted per second of elapsed time, all together (live: how
    /// often the networks ran; fewer under overload, their last results reused).
    public var networkAdmissionsPerSecond: Double?
    /// How old the results composites used were, in output periods (live, `newest` pairing).
    public var resultAge: ResultAgeSummary?
    /// The primary sink's encoder: its preset and what live adaptation did (nil: no encoder).
    public var encoder: EncoderSpeedReport?
    public var nodes: [NodeReport]
    /// A run with several sources (streams): each stream's own figures, in source order; the run-level
    /// `droppedLate`, `duplicated`, `duplicatedBusy`, `skippedTicks`, `framesOut` and `endToEnd` are then
    /// their totals (every stream's primary sink). Nil for a run with one source.
    public var streams: [StreamReport]?
    /// Why the run ended early, if it did.
    public var failure: GraphFailure?
    public var interrupted: Bool
    /// Whether frames started to flow (false for a run interrupted or failed before its start).
    public var started: Bool = true

    /// The report of `graphNodes`; `perStream`: with several sources, add ``streams`` and make the
    /// output figures their totals.
    /// `sources`: the streams' order (default: graph order).
    public init(nodes graphNodes: [Node], context: RunContext, elapsed: Double, perStream: Bool = true, sources given: [SourceNode]? = nil) {
        mode = context.mode.rawValue
        fps = context.fps
        elapsedSeconds = elapsed
        cpuSeconds = RunReport.processCPUSeconds()
        runCPUSeconds = max(0, cpuSeconds - context.startCPUSeconds)
        nodes = []
        var framesIn = 0, atSource = 0, corrupt = 0, nonFinite = 0, rate = 0, admitted = 0, busy = 0, workerCount = 0, late = 0
        let primarySink = RunReport.primarySink(among: graphNodes)
        var primary: NodeCounters.Snapshot?
        var ages: [Int] = []
        for node in graphNodes where !((node as? SinkNode)?.isMonitor ?? false) {
            let s = node.counters.snapshot
            let isSink = node.execution == .sink
            nodes.append(NodeReport(name: node.name, kind: node.kind, received: s.received, processed: s.processed,
                                    emitted: s.emitted, droppedBusy: s.droppedBusy, droppedLate: s.droppedLate,
                                    duplicated: s.duplicated, skippedTicks: s.skippedTicks,
                                    droppedAtSource: s.droppedAtSource,
                                    droppedCorrupt: s.droppedCorrupt, nonFinite: s.nonFinite,
                                    droppedRate: s.droppedRate, duplicatedBusy: s.duplicatedBusy, queuedMax: s.queuedMax,
                                    latency: LatencySummary(s.latency),
                                    endToEnd: isSink ? LatencySummary(s.endToEnd) : nil,
                                    modelSource: node.modelSource, modelSwaps: node.modelSource == nil ? nil : node.modelSwaps,
                                    connection: (node as? SourceNode)?.connection?.snapshot))
            if node.execution == .source {
                framesIn += s.emitted
                atSource += s.droppedAtSource
                corrupt += s.droppedCorrupt
                rate += s.droppedRate
            }
            nonFinite += s.nonFinite
            let isComposite = node.role == .composite
            if node.execution == .worker && !isComposite {
                workerCount += 1
                admitted += s.processed
                busy += s.droppedBusy
            }
            if isComposite {
                for (age, n) in s.resultAgeTicks.enumerated() {
                    if ages.count <= age { ages.append(contentsOf: Array(repeating: 0, count: age + 1 - ages.count)) }
                    ages[age] += n
                }
                late += s.droppedLate
                if node.execution == .worker { busy += s.droppedBusy }
            }
            if node === primarySink { primary = s }
        }
        self.framesIn = framesIn
        droppedAtSource = atSource
        droppedCorrupt = corrupt
        self.nonFinite = nonFinite
        droppedRate = rate
        duplicatedBusy = primary?.duplicatedBusy ?? 0
        let live = context.mode == .live
        presentationDelayMs = live ? (context.presentation.current ?? 0) * 1000 : 0
        presentationDelayChanges = live ? context.presentation.changes.map { DelayChange(atSeconds: $0.time, delayMs: $0.delay * 1000) } : []
        self.admitted = workerCount == 0 ? framesIn : admitted
        droppedBusy = busy
        droppedLate = late + (primary?.droppedLate ?? 0)
        duplicated = primary?.duplicated ?? 0
        skippedTicks = primary?.skippedTicks ?? 0
        framesOut = primary?.emitted ?? 0
        achievedFps = elapsed > 0 ? Double(framesOut) / elapsed : 0
        endToEnd = LatencySummary(primary?.endToEnd ?? LatencyHistogram())
        stages = StageLatency.stages(of: graphNodes, primary: primarySink, live: live)
        networkAdmissionsPerSecond = workerCount > 0 && elapsed > 0 ? Double(admitted) / elapsed : nil
        resultAge = ResultAgeSummary(counts: ages)
        encoder = primarySink?.encoderSpeed
        failure = context.firstFailure
        interrupted = context.isStopRequested && context.firstFailure == nil && !context.stoppedAtDuration
        let sources = given ?? graphNodes.compactMap { $0 as? SourceNode }
        if perStream && sources.count > 1 {
            let streams = sources.map { StreamReport(source: $0, nodes: graphNodes, context: context, elapsed: elapsed) }
            self.streams = streams
            droppedLate = streams.reduce(0) { $0 + $1.droppedLate }
            duplicated = streams.reduce(0) { $0 + $1.duplicated }
            duplicatedBusy = streams.reduce(0) { $0 + $1.duplicatedBusy }
            skippedTicks = streams.reduce(0) { $0 + $1.skippedTicks }
            framesOut = streams.reduce(0) { $0 + $1.framesOut }
            var all = LatencyHistogram()
            for stream in streams { all.merge(stream.endToEndHistogram) }
            endToEnd = LatencySummary(all)
            achievedFps = elapsed > 0 ? Double(framesOut) / elapsed : 0
            if live { presentationDelayMs = streams.map(\.presentationDelayMs).max() ?? 0 }
        }
    }

    /// The sink whose counters are the run's output figures: its first video output (not a results
    /// file or a tap, whose items are not paced by the clock); failing that, its first sink. Sinks that
    /// only watch the run (``SinkNode/isMonitor``) are never it.
    public static func primarySink(among nodes: [Node]) -> SinkNode? {
        var primary: SinkNode?
        for case let sink as SinkNode in nodes where !sink.isMonitor {
            let isVideo = sink.isClocked && sink.inputKinds.first == .frames
            if primary == nil { primary = sink }
            if isVideo, let p = primary, !(p.isClocked && p.inputKinds.first == .frames) { primary = sink }
        }
        return primary
    }

    /// The report of a run that ended before frames flowed (interrupted, or failed at start-up).
    public static func beforeStart(options: RunOptions, failure: GraphFailure?, interrupted: Bool) -> RunReport {
        var report = RunReport(nodes: [], context: RunContext(options: options), elapsed: 0)
        report.started = false
        report.failure = failure
        report.interrupted = interrupted
        return report
    }

    /// CPU time (user + system) used by this process so far.
    public static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The report as JSON (pretty-printed, keys sorted; `failure` is always present, null when the
    /// run did not fail).
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mode, forKey: .mode)
        try c.encode(fps, forKey: .fps)
        try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try c.encode(cpuSeconds, forKey: .cpuSeconds)
        try c.encodeIfPresent(runCPUSeconds, forKey: .runCPUSeconds)
        try c.encode(framesIn, forKey: .framesIn)
        try c.encode(droppedAtSource, forKey: .droppedAtSource)
        try c.encode(droppedCorrupt, forKey: .droppedCorrupt)
        try c.encode(nonFinite, forKey: .nonFinite)
        try c.encode(droppedRate, forKey: .droppedRate)
        try c.encode(duplicatedBusy, forKey: .duplicatedBusy)
        try c.encode(presentationDelayMs, forKey: .presentationDelayMs)
        try c.encode(presentationDelayChanges, forKey: .presentationDelayChanges)
        try c.encode(admitted, forKey: .admitted)
        try c.encode(droppedBusy, forKey: .droppedBusy)
        try c.encode(droppedLate, forKey: .droppedLate)
        try c.encode(duplicated, forKey: .duplicated)
        try c.encode(skippedTicks, forKey: .skippedTicks)
        try c.encode(framesOut, forKey: .framesOut)
        try c.encode(achievedFps.isFinite ? achievedFps : 0, forKey: .achievedFps)
        try c.encode(endToEnd, forKey: .endToEnd)
        try c.encodeIfPresent(stages, forKey: .stages)
        try c.encodeIfPresent(networkAdmissionsPerSecond, forKey: .networkAdmissionsPerSecond)
        try c.encodeIfPresent(resultAge, forKey: .resultAge)
        try c.encodeIfPresent(self.encoder, forKey: .encoder)
        try c.encode(nodes, forKey: .nodes)
        try c.encodeIfPresent(streams, forKey: .streams)
        try c.encode(failure, forKey: .failure)  // null when the run did not fail
        try c.encode(interrupted, forKey: .interrupted)
        try c.encode(started, forKey: .started)
    }

    /// One line for a live progress display.
    public func progressLine() -> String {
        String(format: "in %d  admitted %d  dropped-busy %d  late %d  dup %d  out %d  %.1f fps  e2e p50 %.1f ms",
               framesIn, admitted, droppedBusy, droppedLate, duplicated, framesOut, achievedFps, endToEnd.p50)
    }

    /// The end-of-run table.
    public func table() -> String {
        var lines: [String] = []
        lines.append(String(format: "mode %@ at %.3g fps: %.2f s elapsed, %.2f s CPU", mode, fps, elapsedSeconds, cpuSeconds)
                     + (runCPUSeconds.map { String(format: " (%.2f s since the first frame)", $0) } ?? ""))
        lines.append(String(format: "frames: in %d, admitted %d, dropped-busy %d, dropped-late %d, duplicated %d, skipped ticks %d, out %d (%.1f fps)",
                            framesIn, admitted, droppedBusy, droppedLate, duplicated, skippedTicks, framesOut, achievedFps))
        if droppedAtSource > 0 {
            lines.append("dropped at source: \(droppedAtSource) (camera frames lost at the driver, skipped for a newer one, or damaged)")
        }
        if mode == "live" {
            lines.append(String(format: "presentation delay %.1f ms%@; duplicated %d (%d while the network was busy, %d with no new frame); dropped to the clock rate %d",
                                presentationDelayMs, presentationDelayChanges.count > 1 ? " (raised \(presentationDelayChanges.count - 1)x)" : "",
                                duplicated, duplicatedBusy, duplicated - duplicatedBusy, droppedRate))
        }
        if droppedCorrupt > 0 {
            lines.append("lost to damage inside input files: \(droppedCorrupt) frames (skipped; the rest was read)")
        }
        if nonFinite > 0 {
            lines.append("predictions with NaN or infinite outputs: \(nonFinite) (those values replaced by 0)")
        }
        lines.append(String(format: "end-to-end latency ms: p50 %.2f  p95 %.2f  p99 %.2f  max %.2f",
                            endToEnd.p50, endToEnd.p95, endToEnd.p99, endToEnd.max))
        if mode == "live", let stages, !stages.isEmpty {
            lines.append("latency budget ms (p50 / p99): " + stages.filter { $0.count > 0 }
                .map { String(format: "%@%@ %.1f / %.1f", $0.stage, $0.node.isEmpty ? "" : " (\($0.node))", $0.p50, $0.p99) }
                .joined(separator: ", "))
        }
        if mode == "live", networkAdmissionsPerSecond != nil || resultAge != nil {
            var parts: [String] = []
            if let rate = networkAdmissionsPerSecond { parts.append(String(format: "network admitted %.1f/s", rate)) }
            if let age = resultAge { parts.append("results shown \(age.p50) / \(age.p99) ticks old (p50 / p99, max \(age.max))") }
            lines.append(parts.joined(separator: "; "))
        }
        if let encoder {
            var line = "encoder preset \(encoder.preset)" + (encoder.adaptive ? " (auto from \(encoder.startPreset), changed \(encoder.changes.count)x)" : "")
            line += String(format: ", %.1f / %.1f ms a frame (p50 / p99)", encoder.encode.p50, encoder.encode.p99)
            if encoder.overloaded > 0 { line += "; overloaded \(encoder.overloaded)x (even \(encoder.preset) could not keep up)" }
            lines.append(line)
        }
        for stream in streams ?? [] {
            lines.append(String(format: "stream %@: in %d, admitted %d, dropped-busy %d, dropped-late %d, duplicated %d, out %d; end-to-end p50 %.2f  p99 %.2f ms",
                                stream.name, stream.framesIn, stream.admitted, stream.droppedBusy, stream.droppedLate, stream.duplicated,
                                stream.framesOut, stream.endToEnd.p50, stream.endToEnd.p99))
        }
        let header = ["node", "kind", "in", "done", "out", "busy", "late", "dup", "p50 ms", "p95 ms", "p99 ms", "max ms"]
        var rows = [header]
        for n in nodes {
            rows.append([n.name, n.kind, "\(n.received)", "\(n.processed)", "\(n.emitted)", "\(n.droppedBusy)",
                         "\(n.droppedLate)", "\(n.duplicated)",
                         String(format: "%.2f", n.latency.p50), String(format: "%.2f", n.latency.p95),
                         String(format: "%.2f", n.latency.p99), String(format: "%.2f", n.latency.max)])
        }
        var widths = header.map(\.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        for (k, r) in rows.enumerated() {
            let cells = r.enumerated().map { i, c in
                i < 2 ? c.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                      : String(repeating: " ", count: widths[i] - c.count) + c
            }
            lines.append(cells.joined(separator: "  "))
            if k == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        if let failure { lines.append("stopped by an error: \(failure)") }
        if interrupted { lines.append("interrupted: stopped early on request") }
        return lines.joined(separator: "\n")
    }
}
