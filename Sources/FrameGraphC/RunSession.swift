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
/// node that feeds the first video sink and a ``ResultsTap`` on each results producer (per stream,
/// in a run with several), run on a thread of its own; items are read from its ``ItemQueue``.
/// Hosted models are checked for updates as the CLI checks them (``ModelUpdateChecker``); with
/// `serve_linger`, a run that reaches its end keeps serving its final figures that long (a stop ends
/// it), and ``wait(timeout:)`` waits for that too.
final class RunSession: @unchecked Sendable {
    let queue: ItemQueue
    /// Where the program's frames go, for a run opened with a program source.
    let program: ProgramSource?
    private let runner: GraphRunner
    private let thread: Thread
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Protected<(report: RunReport?, error: String?)>((nil, nil))
    private let joined = Protected(false)
    /// The HTTP server of a run opened with `serve` (stopped when the run ends, or after its linger).
    private let monitor: RunMonitor?
    /// Ends the server's linger, or keeps it from starting: a stop, or POST /stop.
    private let lingerEnd = DispatchSemaphore(value: 0)

    /// Builds, validates (files, models) and starts the run. `library` is this library's path: its
    /// checkout or install prefix holds the shipped pipelines and models.
    init(_ request: OpenRequest, library: String?) throws {
        let file = try ShippedPipelines.find(request.pipeline, executable: library)
        var document = try Pipeline.parseFile(path: file)
        let title = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let applied = try request.changes(title: title).apply(to: &document)
        var options = try request.runOptions(pipelineFile: file, hasLiveSource: applied.hasCamera || applied.hasStream)
        var catalog = NodeCatalog.standard
        var program: ProgramSource?
        if let size = try request.programSize() {
            guard document.streamNames.isEmpty, let source = document.declarations.first(where: { $0.type == "file" }) else {
                throw PipelineError(origin: file, message: "source program: the pipeline has no 'file' source to replace with the program's frames")
            }
            let made = ProgramSource(name: source.name, width: size.width, height: size.height, live: options.mode == .live)
            _ = document.retype(node: source.name, to: "program")
            catalog.register(NodeType(name: "program", role: .source, summary: "frames pushed by the program", options: []) { _, _ in made })
            program = made
        }
        self.program = program
        let warn: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("framegraph: warning: \(line)\n".utf8)) }
        options.warn = warn
        if case .nothingToShow(let why)? = applied.preview { warn("preview: \(why)") }
        // One lane of items per stream: its frames (what its first video sink receives) and its producers' results.
        let parts = document.streamNames.isEmpty ? [(stream: String?.none, part: document)] : document.streamNames.map { ($0, document.part(ofStream: $0)) }
        let lanes = try parts.map { stream, part throws -> ItemQueue.Lane in
            guard let output = part.videoOutputNode else {
                throw PipelineError(origin: file, message: "the pipeline has no video output (an encode, png or null sink) to read frames from")
            }
            return ItemQueue.Lane(stream: stream, producers: part.resultsProducers(), outputNode: output)
        }
        let serve = try request.text("serve").map { address throws -> ServeSettings in
            do {
                return try ServeSettings(address: address, token: request.text("serve_token"), tokenFile: request.text("serve_token_file"),
                                         clients: request.integer("serve_clients"), pictureRate: request.number("serve_fps"))
            } catch {
                throw RequestError(describe(error))
            }
        }
        if serve == nil, let other = ["serve_token", "serve_token_file", "serve_clients", "serve_fps", "serve_linger"].first(where: request.has) {
            throw RequestError("\(other) goes with serve=\"[ADDRESS:]PORT\"")
        }
        let environment = ProcessInfo.processInfo.environment
        var configuration = ModelService.Configuration(
            searchPath: .standard(pipelineFile: file, environment: environment, dataFolders: ModelSearchPath.dataFolders(executable: library)),
            environment: environment)
        if let budget = request.integer("model_budget") { configuration.limits = ModelLimits(memoryBudgetBytes: budget << 20) }
        configuration.machineConfigPath = request.text("machine_config")
        let models = ModelService(configuration)
        let built = try Pipeline.build(document, catalog: catalog, models: models)
        let frames = request.flag("frames") ?? true
        let conversion = request.text("rgb").flatMap(RGBConversion.init(rawValue:)) ?? .fast
        // Offline runs of the pipeline's own sources hand items over in bursts; frames pushed by the
        // program come back one by one (the program waits for each).
        let queue = ItemQueue(live: options.mode == .live, capacity: request.integer("queue") ?? 4, lanes: lanes,
                              converter: frames ? RGBConverter(conversion) : nil, batched: program == nil)
        self.queue = queue
        for (l, lane) in lanes.enumerated() {
            guard let feeding = built.node(lane.outputNode) else {
                throw PipelineError(origin: file, message: "no node '\(lane.outputNode)' to read frames from")
            }
            // Frames stay in the pipeline's format until the program asks for their pixels (RunItem.rgb).
            feeding.addTarget(FrameTap(name: "program-frames-\(l)", conversion: nil, requireEightBit: frames, handler: { queue.frame($0, lane: l) }))
            for (p, name) in lane.producers.enumerated() {
                built.node(name)?.addTarget(ResultsTap(name: "program-results-\(l)-\(p)", upstream: name,
                                                       handler: { queue.results($0, producer: p, lane: l) },
                                                       onFinish: { queue.producerFinished(p, lane: l) }))
            }
        }
        let runner = try GraphRunner(sources: built.sources, options: options)
        self.runner = runner
        let lingerEnd = self.lingerEnd
        let monitor = try serve.map { serve throws -> RunMonitor in
            do {
                let monitor = try RunMonitor(runner: runner, options: serve.options, title: URL(fileURLWithPath: file).lastPathComponent,
                                             pictureRate: serve.pictureRate, onStop: {
                                                 runner.stop()
                                                 lingerEnd.signal()
                                             })
                let nodes = built.nodes.map(\.node)
                monitor.watchPictures(of: nodes, output: RunMonitor.pictureNode(among: nodes))
                for entry in built.nodes where entry.node.outputKind == .results || entry.node.framesCarryResults { monitor.watchResults(of: entry.node) }
                return monitor
            } catch {
                throw RequestError(describe(error))
            }
        }
        self.monitor = monitor
        // Hosted models: checked for a newer deployment (and, with hot_swap, switched to) as the CLI does.
        let users = built.nodes.compactMap { $0.node as? any HotSwappableModelUser }
        let updates = ModelUpdateChecker(users: users, models: models, interval: request.number("update_interval"),
                                         hotSwap: request.flag("hot_swap") ?? false, monitor: monitor)
        do {
            if !updates.hasCollections && (request.flag("hot_swap") == true || request.has("update_interval")) {
                throw RequestError("hot_swap and update_interval apply to pipelines whose models come from a collection (model=collection:NAME/ENTRY)")
            }
            try runner.checkFiles()
            try runner.validate()  // opens the input, loads the models: their errors come from open
        } catch {
            monitor?.stop()
            for source in built.sources { try? source.finish(context: runner.context) }
            throw error
        }
        updates.start()
        if let monitor {
            monitor.start()
            monitor.event(["event": "start", "mode": options.mode.rawValue, "fps": options.fps, "pipeline": file])
        }
        let stats = request.text("stats")
        let linger = request.number("serve_linger") ?? 0
        let stopGrace = options.stopGrace
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
            updates.stop(wait: stopGrace)
            queue.finish()
            if monitor != nil && linger > 0 {
                // A run that reached its end: the final figures stay up for a last scrape; a stop or
                // POST /stop ends it sooner (one that stopped the run leaves no linger).
                _ = lingerEnd.wait(timeout: .now() + min(linger, 86_400))
            }
            monitor?.stop()
            done.signal()
        }
        thread.name = "framegraph: run"
        thread.start()
    }

    /// The address the run is served at (`serve`), once serving.
    var servedAt: String? {
        monitor.map { "http://\($0.server.options.address.urlHost):\($0.server.port)/" }
    }

    /// Asks the run to stop: sources stop, work in flight finishes, outputs are finalized; a server
    /// that lingers after the run (`serve_linger`) stops too.
    func stop() {
        lingerEnd.signal()
        program?.end()
        runner.stop()
        queue.close()
    }

    /// Waits up to `timeout` seconds for the run to end (and its server's linger); false when it is
    /// still running.
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
        // The final report once the run has ended (its server may still linger), else the report so far.
        let final = outcome.withLock { $0 }
        let ran = final.report != nil || final.error != nil
        let report = final.report ?? runner.report()
        var object = try JSONSerialization.jsonObject(with: try report.json()) as? [String: Any] ?? [:]
        let counts = queue.counts
        var program: [String: Any] = ["itemsDelivered": counts.delivered, "itemsDropped": counts.dropped,
                                      "readerWakeups": counts.readerWakeups, "rgbBuffersMade": queue.converter?.buffersMade ?? 0, "ended": ran]
        if let servedAt { program["served"] = servedAt }
        object["program"] = program
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
