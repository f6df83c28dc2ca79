import Foundation
import FrameGraph
import FrameGraphCamera
import FrameGraphDisplay
import FrameGraphMedia
import FrameGraphModels
import FrameGraphPipelines
import ModelDeployment

/// `framegraph run` and `framegraph check`: load the pipeline, apply the command line, validate, run.
struct RunCommand {
    static let valued: Set<String> = ["input", "output", "mode", "fps", "policy", "stats", "trace", "set", "duration", "model-budget",
                                      "latency", "max-latency", "audio", "results",
                                      "camera", "camera-size", "camera-fps", "camera-format", "machine-config", "update-interval"]
    static let switches: Set<String> = ["loop", "quiet", "reconnect", "preview", "hot-swap"]

    let arguments: Arguments
    let checkOnly: Bool

    func execute() throws -> Int32 {
        guard let path = arguments.positional.dropFirst().first else {
            throw Arguments.UsageError(description: "\(checkOnly ? "check" : "run") needs a pipeline file, e.g. pipelines/transcode.fg")
        }
        var options = RunOptions()
        if let mode = arguments.value("mode") {
            guard let m = RunMode(rawValue: mode) else { throw Arguments.UsageError(description: "--mode expects live or offline, got '\(mode)'") }
            options.mode = m
        }
        if let policy = arguments.value("policy") {
            guard let p = TickPolicy(rawValue: policy) else { throw Arguments.UsageError(description: "--policy expects reuse or skip, got '\(policy)'") }
            options.tickPolicy = p
        }
        options.fps = try arguments.number("fps", in: RunCommand.fpsRange) ?? 30
        // Offline, --fps converts the output to that rate; without it the source's timing is kept.
        if options.mode == .offline, arguments.value("fps") != nil { options.outputRate = options.fps }
        if let trace = arguments.value("trace") { options.traceURL = URL(fileURLWithPath: trace) }
        let statsPath = arguments.value("stats")
        if let statsPath { options.otherOutputs[statsPath] = "--stats" }
        options.duration = try arguments.number("duration", in: RunCommand.durationRange)
        options.latency = try presentationDelay()

        // One model service for the run: the pipeline's folder first on the search path, the budget,
        // hosted models (`collection:NAME/ENTRY`) through this machine's config.
        var modelConfiguration = ModelService.Configuration.standard(pipelineFile: path)
        modelConfiguration.limits = try ModelCommand.limits(arguments)
        modelConfiguration.machineConfigPath = arguments.value("machine-config")
        let models = ModelService(modelConfiguration)
        let updateInterval = try arguments.number("update-interval", in: 1...86_400)
        var document = try Pipeline.parseFile(path: path)
        let camera = CameraCommandLine(path: arguments.value("camera"), size: arguments.value("camera-size"), fps: arguments.value("camera-fps"),
                                       format: arguments.value("camera-format"), reconnect: arguments.has("reconnect"))
        if camera.path != nil && arguments.value("input") != nil {
            throw Arguments.UsageError(description: "--input and --camera both name the source; give one of them")
        }
        // The camera first: it turns the file source into a camera, and `--set` then applies to that.
        let usesCamera = try camera.apply(to: &document)
        try applyOverrides(to: &document)
        if usesCamera {
            // A camera delivers in real time: the run is live.
            if arguments.value("mode") == "offline" {
                throw Arguments.UsageError(description: "--mode offline cannot read a camera: a camera is always live (leave --mode out); to process every frame, record to a file first and run that offline")
            }
            options.mode = .live
        }
        let pipeline = try Pipeline.build(document, models: models)
        if let resultsPath = arguments.value("results") {
            try attachResults(resultsPath, to: pipeline)
        }
        if arguments.has("preview") { attachPreview(to: pipeline, file: path) }
        let runner = try GraphRunner(sources: pipeline.sources, options: options)
        // Outputs against inputs before anything is written, the stats of an early interrupt included.
        try runner.checkFiles()
        if let stopped = stoppedBeforeStart(options, statsPath: statsPath) { return stopped }
        let cameras = pipeline.sources.compactMap { $0 as? CameraSource }
        for c in cameras {
            c.onStatus = { line in FileHandle.standardError.write(Data("framegraph: \(line)\n".utf8)) }
        }

        if checkOnly {
            try runner.validate()
            print("\(path): OK")
            for node in runner.nodes {
                let inputs = runner.inputs(of: node).map(\.description).joined(separator: ", ")
                let output = runner.output(of: node)?.description ?? "-"
                print("  \(node.name) (\(node.kind)): in [\(inputs)] → \(output)  [\(node.execution.rawValue)]")
            }
            for source in pipeline.sources { try? source.finish(context: runner.context) }
            return 0
        }

        if !cameras.isEmpty {
            try runner.validate()  // opens the cameras: say what the drivers granted
            for c in cameras where !arguments.has("quiet") {
                let granted = c.configuration.map { "\($0.summary)" } ?? "?"
                let differences = c.configuration?.differences(from: c.settings) ?? []
                FileHandle.standardError.write(Data("camera \(c.settings.path): \(granted)\(differences.isEmpty ? "" : " (granted \(differences.joined(separator: ", ")))")\n".utf8))
            }
        }
        if let stopped = stoppedBeforeStart(options, statsPath: statsPath) { return stopped }
        let interrupts = Interrupts.shared
        interrupts.onInterrupt { runner.stop() }
        let quiet = arguments.has("quiet")
        let showProgress = !quiet && isatty(STDERR_FILENO) == 1
        var progress: (@Sendable (RunReport) -> Void)?
        if showProgress {
            progress = { @Sendable (report: RunReport) in
                FileHandle.standardError.write(Data("\r\u{1B}[K\(report.progressLine())".utf8))
            }
        }
        // Collections are checked for a newer deployment once the models have loaded (validation).
        let users = pipeline.nodes.compactMap { $0.node as? any HotSwappableModelUser }
        let updates = ModelUpdateChecker(users: users, models: models, interval: updateInterval, hotSwap: arguments.has("hot-swap"),
                                         warn: { line in FileHandle.standardError.write(Data("framegraph: \(line)\n".utf8)) })
        if users.contains(where: { $0.modelReferences.contains(where: ModelReference.isCollection) }) {
            try runner.validate()
            updates.start()
        } else if arguments.has("hot-swap") || updateInterval != nil {
            throw Arguments.UsageError(description: "--hot-swap and --update-interval apply to pipelines whose models come from a collection (model=collection:NAME/ENTRY)")
        }
        defer { updates.stop() }
        let report = try runner.run(progress: progress)
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if let statsPath { writeStats(report, to: statsPath) }
        if !quiet { print(report.table()) }
        for source in pipeline.sources where report.failure == nil {  // a failure's own line names damage already
            if let note = source.damageNote { FileHandle.standardError.write(Data("framegraph: warning: \(note)\n".utf8)) }
        }
        for c in cameras where !quiet {
            let s = c.statistics
            print("camera \(c.settings.path): \(s.frames) frames, dropped at source \(s.droppedAtSource) (lost at the driver \(s.lostAtDriver), skipped for a newer one \(s.skippedForNewer), damaged \(s.damaged))\(s.reconnects > 0 ? ", reconnected \(s.reconnects)x" : "")")
        }
        if let failure = report.failure {
            FileHandle.standardError.write(Data("framegraph: \(failure.message)\n".utf8))
            return 1
        }
        return interrupts.interrupted ? 130 : 0
    }

    /// `--results FILE`: one results sink taking every node of the pipeline that emits results.
    private func attachResults(_ path: String, to pipeline: Pipeline) throws {
        let producers = pipeline.nodes.filter { $0.node.outputKind == .results }
        guard !producers.isEmpty else {
            throw Arguments.UsageError(description: "--results: the pipeline has no node that produces results (a detector or classifier, such as detect-faces)")
        }
        let sink = ResultsSink(name: "--results", path: path, ports: producers.count)
        for (port, producer) in producers.enumerated() { producer.node.addTarget(sink, port: port) }
    }

    /// `--preview`: a window showing what the pipeline's first video output receives. Without a
    /// display it warns and the run goes on; so does a window that cannot open.
    private func attachPreview(to pipeline: Pipeline, file: String) {
        func warn(_ line: String) { FileHandle.standardError.write(Data("framegraph: warning: --preview: \(line)\n".utf8)) }
        if pipeline.nodes.contains(where: { $0.node is DisplaySink }) {
            return warn("the pipeline has a display window already")
        }
        guard DisplaySink.displayAvailable else { return warn("\(DisplayError.noDisplay.description); the run goes on without it") }
        let videoSinks = pipeline.nodes.filter { $0.node.role == .sink && $0.node.inputKinds.first == .frames }
        let feeding = videoSinks.lazy.compactMap { sink in pipeline.nodes.first { $0.node.targets.contains { $0.node === sink.node } } }.first
        guard let upstream = feeding else { return warn("the pipeline has no video output to show") }
        let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        upstream.node.addTarget(DisplaySink(name: "preview", title: "FrameGraph: \(name)", optional: true))
    }

    /// `--latency auto|MS` (default auto) and `--max-latency MS` (default 250): when live frames are shown.
    private func presentationDelay() throws -> PresentationDelay {
        let maximum = (try arguments.number("max-latency", in: RunCommand.latencyRange) ?? PresentationDelay.standardAuto.maximum * 1000) / 1000
        guard let text = arguments.value("latency"), text != "auto" else { return .auto(maximum: maximum) }
        guard let ms = Double(text), ms.isFinite, RunCommand.latencyRange.contains(ms) else {
            throw Arguments.UsageError(description: "--latency expects auto or milliseconds from 0 to 5000, got '\(text)'")
        }
        return .fixed(ms / 1000)
    }

    /// Presentation delays `--latency` and `--max-latency` accept, in milliseconds.
    static let latencyRange = 0.0...5000.0

    /// Output clock rates `--fps` accepts.
    static let fpsRange = 0.1...1000.0
    /// Run lengths `--duration` accepts, in seconds (up to a year).
    static let durationRange = 0.001...31_536_000.0

    /// When an interrupt arrived before the run could start: writes stats that say so and returns 130.
    private func stoppedBeforeStart(_ options: RunOptions, statsPath: String?) -> Int32? {
        guard !checkOnly, Interrupts.shared.interrupted else { return nil }
        if let statsPath { writeStats(RunReport.beforeStart(options: options, failure: nil, interrupted: true), to: statsPath) }
        return 130
    }

    /// Writes the statistics beside their destination and renames them into place; a failure is
    /// reported, not fatal (the run's outputs are already complete).
    private func writeStats(_ report: RunReport, to path: String) {
        do {
            try OutputFile.write(try report.json(), to: path)
        } catch {
            FileHandle.standardError.write(Data("framegraph: cannot write stats to \(path): \(describe(error))\n".utf8))
        }
    }

    /// `--input`, `--output`, `--loop` and `--set` become option overrides on the document.
    private func applyOverrides(to document: inout PipelineDocument) throws {
        if let input = arguments.value("input") {
            let sources = document.declarations.filter { $0.type == "file" }
            guard !sources.isEmpty else {
                throw Arguments.UsageError(description: "--input: \(document.file) has no 'file' source to read it")
            }
            for s in sources { _ = document.override(node: s.name, key: "path", value: input, origin: "--input") }
        }
        if arguments.has("loop") {
            for s in document.declarations where s.type == "file" { _ = document.override(node: s.name, key: "loop", value: "true") }
        }
        if let audio = arguments.value("audio") {
            let sinks = document.declarations.filter { $0.type == "encode" }
            guard !sinks.isEmpty else { throw Arguments.UsageError(description: "--audio: \(document.file) has no 'encode' sink") }
            for s in sinks { _ = document.override(node: s.name, key: "audio", value: audio, origin: "--audio") }
        }
        if let output = arguments.value("output") {
            guard let sink = document.declarations.first(where: { $0.type == "encode" || $0.type == "png" }) else {
                throw Arguments.UsageError(description: "--output: \(document.file) has no 'encode' or 'png' sink to write it")
            }
            _ = document.override(node: sink.name, key: "path", value: output, origin: "--output")
        }
        for assignment in arguments.all("set") {
            guard let dot = assignment.firstIndex(of: "."), let eq = assignment.firstIndex(of: "="), dot < eq else {
                throw Arguments.UsageError(description: "--set expects NODE.KEY=VALUE, got '\(assignment)'")
            }
            let node = String(assignment[..<dot])
            let key = String(assignment[assignment.index(after: dot)..<eq])
            let value = String(assignment[assignment.index(after: eq)...])
            guard document.override(node: node, key: key, value: value, origin: "--set \(assignment)") else {
                let names = document.declarations.map(\.name)
                throw Arguments.UsageError(description: "--set: the pipeline has no node '\(node)' (its nodes: \(names.joined(separator: ", ")))")
            }
        }
    }
}
