import CInterrupts
import Foundation
import FrameGraph
import FrameGraphCamera
import FrameGraphMedia
import FrameGraphModels
import FrameGraphPipelines
import FrameGraphServe
import ModelDeployment

/// `framegraph run` and `framegraph check`: read the pipeline, let the pipelines module apply the
/// command line to it (typed rewrites), build it with the run's model service, validate, run, and
/// report — ending with the files the run wrote.
struct RunCommand {
    let arguments: Arguments
    let checkOnly: Bool

    func execute() throws -> Int32 {
        var pipeline = try PipelineArgument.load(arguments)
        let hasCamera = try rewrite(&pipeline.document, title: pipeline.name)
        // A camera or a stream delivers in real time: the run is live.
        var run: RunOptions
        do {
            run = try RunOptions(values: CommandLineValues(arguments: arguments), pipelineFile: pipeline.file, hasLiveSource: hasCamera)
        } catch let error as RunOptionValueError {
            throw Arguments.UsageError(description: error.description)
        }
        if hasCamera && arguments.has("loop") {
            throw Arguments.UsageError(description: "--loop applies to file sources; a camera or stream has no end to loop from")
        }
        let serve = checkOnly ? nil : try ServeCommandLine.parse(arguments)
        // A camera's or stream's losses and returns: on stderr, and to the server's events (`camera`, `stream`).
        let events = Protected<RunMonitor?>(nil)
        defer { events.withLock { $0 = nil } }
        run.sourceStatus = { source, kind, line in
            FileHandle.standardError.write(Data("framegraph: \(line)\n".utf8))
            events.withLock { $0 }?.event(["event": kind, "stream": source, "status": line])
        }
        let models = ModelService(modelConfiguration(pipelineFile: pipeline.file))
        let built = try Pipeline.build(pipeline.document, models: models)
        let runner = try GraphRunner(sources: built.sources, options: run)
        let stopRequested = Protected(false)
        let monitor = try serve.map { serve throws -> RunMonitor in
            let monitor = try RunMonitor(runner: runner, options: serve.options, title: pipeline.name, pictureRate: serve.pictureRate,
                                         onStop: { stopRequested.withLock { $0 = true }; runner.stop() })
            let nodes = built.nodes.map(\.node)
            monitor.watchPictures(of: nodes, output: RunMonitor.pictureNode(among: nodes))
            // An encode sink cutting MPEG-TS segments is the run's HLS stream.
            if let sink = nodes.compactMap({ $0 as? FileSink }).first(where: { $0.segments.isSegmented && ($0.path as NSString).pathExtension.lowercased() == "ts" }) {
                monitor.watchSegments(folder: sink.segmentFolder) {
                    sink.finishedSegments.map { HLSPlaylist.Segment(file: $0.file, seconds: $0.seconds, sequence: $0.sequence) }
                }
            }
            for entry in built.nodes where entry.node.outputKind == .results || entry.node.framesCarryResults { monitor.watchResults(of: entry.node) }
            return monitor
        }
        defer { monitor?.stop() }
        // Outputs against inputs before anything is written, the stats of an early interrupt included.
        try runner.checkFiles()
        if let stopped = stoppedBeforeStart(run) { return stopped }
        events.withLock { $0 = monitor }

        if checkOnly {
            try runner.validate()
            print("\(pipeline.file ?? InlinePipeline.fileName): OK")
            for node in runner.nodes {
                let inputs = runner.inputs(of: node).map(\.description).joined(separator: ", ")
                let output = runner.output(of: node)?.description ?? "-"
                print("  \(node.name) (\(node.kind)): in [\(inputs)] → \(output)  [\(node.execution.rawValue)]")
            }
            for source in built.sources { try? source.finish(context: runner.context) }
            return 0
        }
        let quiet = arguments.has("quiet")
        try runner.validate()  // opens the inputs (cameras: say what the drivers granted) and loads the models
        for note in built.sources.compactMap(\.deviceNote) where !quiet {
            FileHandle.standardError.write(Data("\(note)\n".utf8))
        }
        if let stopped = stoppedBeforeStart(run) { return stopped }
        let interrupts = Interrupts.shared
        interrupts.onInterrupt { runner.stop() }

        // Hosted models: checked for a newer deployment once they have loaded (validation).
        let users = built.nodes.compactMap { $0.node as? any HotSwappableModelUser }
        let updateInterval = arguments.number("update-interval")
        let updates = ModelUpdateChecker(users: users, models: models, interval: updateInterval, hotSwap: arguments.has("hot-swap"), monitor: monitor)
        if users.contains(where: { $0.modelReferences.contains(where: ModelReference.isCollection) }) {
            try runner.validate()
            updates.start()
        } else if arguments.has("hot-swap") || updateInterval != nil {
            throw Arguments.UsageError(description: "--hot-swap and --update-interval apply to pipelines whose models come from a collection (model=collection:NAME/ENTRY)")
        }
        defer { updates.stop(wait: run.stopGrace) }

        if let monitor {
            try runner.validate()  // the node list the server reads is set before it serves
            monitor.start()
            FileHandle.standardError.write(Data("framegraph: serving http://\(monitor.server.options.address.urlHost):\(monitor.server.port)/ (metrics at /metrics)\n".utf8))
            monitor.event(["event": "start", "mode": run.mode.rawValue, "fps": run.fps, "pipeline": pipeline.name])
        }
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1, runner: runner)
        let report = try runner.run(progress: progress.show)
        progress.finish()
        monitor?.finish(report)  // the server serves the statistics file's figures from now on
        let statsWritten = arguments.value("stats").map { writeStats(report, to: $0) } ?? true
        if !quiet { print(report.table()) }
        for source in built.sources where report.failure == nil {  // a failure's own line names damage already
            if let note = source.damageNote { FileHandle.standardError.write(Data("framegraph: warning: \(note)\n".utf8)) }
        }
        for summary in built.sources.compactMap(\.deviceSummary) where !quiet { print(summary) }
        if !quiet { print(Self.writtenLine(runner: runner, stats: arguments.value("stats"))) }
        if let monitor, let serve, serve.linger > 0 {
            // The final figures stay up for a last scrape; a signal or POST /stop ends it sooner.
            let signals = fg_interrupts_count()
            let until = Date().addingTimeInterval(serve.linger)
            while Date() < until && fg_interrupts_count() == signals && !stopRequested.withLock({ $0 }) { usleep(50_000) }
            monitor.stop()
        }
        if let failure = report.failure {
            FileHandle.standardError.write(Data("framegraph: \(failure.message)\n".utf8))
            return 1
        }
        if interrupts.interrupted { return 130 }
        return statsWritten ? 0 : 1
    }

    /// The command line's changes to the pipeline (``PipelineChanges``, applied in its order).
    /// Returns whether the pipeline reads a camera or a network stream (the run is then live).
    private func rewrite(_ document: inout PipelineDocument, title: String) throws -> Bool {
        var changes = PipelineChanges()
        changes.camera = CameraCommandLine(path: arguments.value("camera"), size: arguments.value("camera-size"), fps: arguments.value("camera-fps"),
                                           format: arguments.value("camera-format"), reconnect: arguments.has("reconnect"))
        changes.inputs = try arguments.all("input") + (arguments.value("inputs").map(StreamInput.readList) ?? [])
        changes.batch = arguments.integer("batch")
        changes.network.allow = arguments.has("allow-network")
        changes.network.reconnect = arguments.flag("reconnect")
        changes.network.transport = arguments.value("stream-transport")
        changes.network.onLoss = arguments.value("on-loss")
        changes.network.credentialsFile = arguments.value("credentials")
        changes.loop = arguments.has("loop")
        changes.audio = arguments.value("audio")
        changes.output = arguments.value("output")
        changes.settings = arguments.all("set")
        changes.results = arguments.value("results")
        if arguments.has("preview") { changes.previewTitle = "FrameGraph: \(title)" }
        let applied = try changes.apply(to: &document)
        if case .nothingToShow(let why) = applied.preview {
            FileHandle.standardError.write(Data("framegraph: warning: --preview: \(why)\n".utf8))
        }
        return applied.hasCamera || applied.hasStream
    }

    /// The run's model service: the pipeline's folder first on the search path, the budget, hosted
    /// models through this machine's config.
    private func modelConfiguration(pipelineFile: String?) -> ModelService.Configuration {
        var configuration = ModelService.Configuration.standard(pipelineFile: pipelineFile)
        configuration.limits = ModelCommand.limits(arguments)
        configuration.machineConfigPath = arguments.value("machine-config")
        configuration.isCancelled = { Interrupts.shared.interrupted }
        return configuration
    }

    /// When an interrupt arrived before the run could start: writes stats that say so and returns 130.
    private func stoppedBeforeStart(_ options: RunOptions) -> Int32? {
        guard !checkOnly, Interrupts.shared.interrupted else { return nil }
        if let stats = arguments.value("stats") { writeStats(RunReport.beforeStart(options: options, failure: nil, interrupted: true), to: stats) }
        return 130
    }

    /// Writes the statistics beside their destination and renames them into place; a failure is
    /// reported, and makes the run's status 1 (the outputs are complete, the stats are not). Returns
    /// whether they were written.
    @discardableResult
    private func writeStats(_ report: RunReport, to path: String) -> Bool {
        do {
            try OutputFile.write(try report.json(), to: path)
            return true
        } catch {
            FileHandle.standardError.write(Data("framegraph: cannot write stats to \(path): \(describe(error))\n".utf8))
            return false
        }
    }

    /// "wrote: a.mp4, b.jsonl" — the files that exist after the run among those it was to write.
    static func writtenLine(runner: GraphRunner, stats: String?) -> String {
        var files: [String] = []
        for node in runner.nodes {
            for f in node.filesWritten where !files.contains(f) { files.append(f) }
        }
        if let trace = runner.context.options.traceURL?.relativePath { files.append(trace) }
        if let stats { files.append(stats) }
        let written = files.filter { FileManager.default.fileExists(atPath: $0) }.sorted()
        return written.isEmpty ? "wrote no files" : "wrote: " + written.joined(separator: ", ")
    }
}

/// The command line's values of the run options, by their names (`--stats`, `--frame-budget`).
private struct CommandLineValues: RunOptionValues {
    let arguments: Arguments
    func text(_ name: String) -> String? { arguments.value(name) }
    func number(_ name: String) -> Double? { arguments.number(name) }
    func integer(_ name: String) -> Int? { arguments.optionalInteger(name) }
    func spelling(_ name: String) -> String { "--" + name }
}
