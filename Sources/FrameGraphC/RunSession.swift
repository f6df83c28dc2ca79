import Foundation
import FrameGraph
import FrameGraphMedia
import FrameGraphModels
import FrameGraphPipelines
import FrameGraphServe
import ModelDeployment
import NeuralGraph

/// One run opened by a program through the C library: the pipeline built as the CLI builds it
/// (``ShippedPipelines``, ``PipelineChanges``, the standard model service), a ``FrameTap`` on the
/// node that feeds the first video sink and a ``ResultsTap`` on each results producer, run on a
/// thread of its own; items are read from its ``ItemQueue``.
final class RunSession: @unchecked Sendable {
    let queue: ItemQueue
    /// Where the program's frames go, for a run opened with a program source.
    let program: ProgramSource?
    private let runner: GraphRunner
    private let thread: Thread
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Protected<(report: RunReport?, error: String?)>((nil, nil))
    private let joined = Protected(false)
    /// The HTTP server of a run opened with `serve` (stopped when the run ends).
    private let monitor: RunMonitor?

    /// Builds, validates (files, models) and starts the run. `library` is this library's path: its
    /// checkout or install prefix holds the shipped pipelines and models.
    init(_ request: OpenRequest, library: String?) throws {
        let file = try ShippedPipelines.find(request.pipeline, executable: library)
        var document = try Pipeline.parseFile(path: file)
        let applied = try request.changes.apply(to: &document)
        var options = try request.runOptions(pipelineFile: file, hasLiveSource: applied.hasCamera || applied.hasStream)
        var catalog = NodeCatalog.standard
        var program: ProgramSource?
        if let size = try request.programSize() {
            guard let source = document.declarations.first(where: { $0.type == "file" }) else {
                throw PipelineError(origin: file, message: "source program: the pipeline has no 'file' source to replace with the program's frames")
            }
            let made = ProgramSource(name: source.name, width: size.width, height: size.height, live: options.mode == .live)
            _ = document.retype(node: source.name, to: "program")
            catalog.register(NodeType(name: "program", role: .source, summary: "frames pushed by the program", options: []) { _, _ in made })
            program = made
        }
        self.program = program
        options.warn = { line in FileHandle.standardError.write(Data("framegraph: warning: \(line)\n".utf8)) }
        guard let output = document.videoOutputNode else {
            throw PipelineError(origin: file, message: "the pipeline has no video output (an encode, png or null sink) to read frames from")
        }
        let serve = try request.text("serve").map { address throws -> ServeSettings in
            do {
                return try ServeSettings(address: address, token: request.text("serve_token"), tokenFile: request.text("serve_token_file"),
                                         clients: request.integer("serve_clients"), pictureRate: request.number("serve_fps"))
            } catch {
                throw RequestError(describe(error))
            }
        }
        if serve == nil, let other = ["serve_token", "serve_token_file", "serve_clients", "serve_fps"].first(where: request.has) {
            throw RequestError("\(other) goes with serve=\"[ADDRESS:]PORT\"")
        }
        let producers = document.resultsProducers()
        let environment = ProcessInfo.processInfo.environment
        var configuration = ModelService.Configuration(
            searchPath: .standard(pipelineFile: file, environment: environment, dataFolders: ModelSearchPath.dataFolders(executable: library)),
            environment: environment)
        if let budget = request.integer("model_budget") { configuration.limits = ModelLimits(memoryBudgetBytes: budget << 20) }
        configuration.machineConfigPath = request.text("machine_config")
        options.otherInputs[MachineConfig.location(explicit: request.text("machine_config"))] = "the run (the machine config)"
        let built = try Pipeline.build(document, catalog: catalog, models: ModelService(configuration))
        let frames = request.flag("frames") ?? true
        let conversion = request.text("rgb").flatMap(RGBConversion.init(rawValue:)) ?? .fast
        let queue = ItemQueue(live: options.mode == .live, capacity: request.integer("queue") ?? 4, producers: producers, outputNode: output,
                              converter: frames ? RGBConverter(conversion) : nil)
        self.queue = queue
        guard let feeding = built.node(output) else {
            throw PipelineError(origin: file, message: "no node '\(output)' to read frames from")
        }
        // Frames stay in the pipeline's format until the program asks for their pixels (RunItem.rgb).
        feeding.addTarget(FrameTap(name: "program-frames", conversion: nil, requireEightBit: frames, handler: { queue.frame($0) }))
        for (p, name) in producers.enumerated() {
            built.node(name)?.addTarget(ResultsTap(name: "program-results-\(p)", upstream: name, handler: { queue.results($0, producer: p) },
                                                   onFinish: { queue.producerFinished(p) }))
        }
        let runner = try GraphRunner(sources: built.sources, options: options)
        self.runner = runner
        let monitor = try serve.map { serve throws -> RunMonitor in
            do {
                let monitor = try RunMonitor(runner: runner, options: serve.options, title: URL(fileURLWithPath: file).lastPathComponent,
                                             pictureRate: serve.pictureRate, onStop: { runner.stop() })
                let nodes = built.nodes.map(\.node)
                monitor.watchPictures(of: nodes, output: RunMonitor.pictureNode(among: nodes))
                for entry in built.nodes where entry.node.outputKind == .results || entry.node.framesCarryResults { monitor.watchResults(of: entry.node) }
                return monitor
            } catch {
                throw RequestError(describe(error))
            }
        }
        self.monitor = monitor
        do {
            try runner.checkFiles()
            try runner.validate()  // opens the input, loads the models: their errors come from open
        } catch {
            monitor?.stop()
            for source in built.sources { try? source.finish(context: runner.context) }
            throw error
        }
        if let monitor {
            monitor.start()
            monitor.event(["event": "start", "mode": options.mode.rawValue, "fps": options.fps, "pipeline": file])
        }
        let stats = request.text("stats")
        let outcome = self.outcome, done = self.done
        thread = Thread {
            do {
                let report = try runner.run()
                monitor?.finish(report)
                var failure = report.failure.map(\.message)
                if let stats {
                    do {
                        try OutputFile.write(try report.json(), to: stats)
                    } catch {
                        failure = failure ?? "cannot write stats to \(stats): \(describe(error))"
                    }
                }
                outcome.withLock { $0 = (report, failure) }
            } catch {
                outcome.withLock { $0 = (nil, describe(error)) }
            }
            monitor?.stop()
            queue.finish()
            done.signal()
        }
        thread.name = "framegraph: run"
        thread.start()
    }

    /// The address the run is served at (`serve`), once serving.
    var servedAt: String? {
        monitor.map { "http://\($0.server.options.address.urlHost):\($0.server.port)/" }
    }

    /// Asks the run to stop: sources stop, work in flight finishes, outputs are finalized.
    func stop() {
        program?.end()
        runner.stop()
        queue.close()
    }

    /// Waits up to `timeout` seconds for the run to end; false when it is still running.
    func wait(timeout: Double) -> Bool {
        if joined.withLock({ $0 }) { return true }
        if timeout.isInfinite {
            done.wait()
        } else {
            guard done.wait(timeout: .now() + max(0, min(timeout, 86_400))) == .success else { return false }
        }
        joined.withLock { $0 = true }
        return true
    }

    /// Whether the run has ended.
    var hasEnded: Bool { wait(timeout: 0) }

    /// Why the run failed (one line), nil while it runs or when it did not.
    var failure: String? { outcome.withLock { $0.error } }

    /// The statistics as JSON: the final report once the run has ended, else the report so far.
    func statsJSON() throws -> String {
        let report = hasEnded ? (outcome.withLock { $0.report } ?? runner.report()) : runner.report()
        var object = try JSONSerialization.jsonObject(with: try report.json()) as? [String: Any] ?? [:]
        let counts = queue.counts
        var program: [String: Any] = ["itemsDelivered": counts.delivered, "itemsDropped": counts.dropped, "ended": hasEnded]
        if let servedAt { program["served"] = servedAt }
        object["program"] = program
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
