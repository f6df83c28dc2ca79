import Foundation
import FrameGraph
import FrameGraphMedia
import FrameGraphModels
import FrameGraphPipelines

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

    /// Builds, validates (files, models) and starts the run. `library` is this library's path: its
    /// checkout or install prefix holds the shipped pipelines and models.
    init(_ request: OpenRequest, library: String?) throws {
        let file = try ShippedPipelines.find(request.pipeline, executable: library)
        var document = try Pipeline.parseFile(path: file)
        let applied = try request.changes.apply(to: &document)
        var options = RunOptions()
        options.mode = try PipelineChanges.mode(requested: try request.requestedMode(), hasCamera: applied.hasCamera)
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
        options.duration = request.duration
        options.otherInputs[file] = "the run (the pipeline file)"
        options.warn = { line in FileHandle.standardError.write(Data("framegraph: warning: \(line)\n".utf8)) }
        guard let output = document.videoOutputNode else {
            throw PipelineError(origin: file, message: "the pipeline has no video output (an encode, png or null sink) to read frames from")
        }
        let producers = document.resultsProducers()
        let environment = ProcessInfo.processInfo.environment
        let configuration = ModelService.Configuration(
            searchPath: .standard(pipelineFile: file, environment: environment, dataFolders: ModelSearchPath.dataFolders(executable: library)),
            environment: environment)
        let built = try Pipeline.build(document, catalog: catalog, models: ModelService(configuration))
        let queue = ItemQueue(live: options.mode == .live, capacity: request.queue ?? 4, producers: producers, outputNode: output,
                              keepFrames: request.frames ?? true)
        self.queue = queue
        guard let feeding = built.node(output) else {
            throw PipelineError(origin: file, message: "no node '\(output)' to read frames from")
        }
        feeding.addTarget(FrameTap(name: "program-frames", convert: request.frames ?? true, handler: { queue.frame($0) }))
        for (p, name) in producers.enumerated() {
            built.node(name)?.addTarget(ResultsTap(name: "program-results-\(p)", upstream: name, handler: { queue.results($0, producer: p) },
                                                   onFinish: { queue.producerFinished(p) }))
        }
        runner = try GraphRunner(sources: built.sources, options: options)
        do {
            try runner.checkFiles()
            try runner.validate()  // opens the input, loads the models: their errors come from open
        } catch {
            for source in built.sources { try? source.finish(context: runner.context) }
            throw error
        }
        let runner = self.runner, outcome = self.outcome, done = self.done
        thread = Thread {
            do {
                let report = try runner.run()
                outcome.withLock { $0 = (report, report.failure.map(\.message)) }
            } catch {
                outcome.withLock { $0 = (nil, describe(error)) }
            }
            queue.finish()
            done.signal()
        }
        thread.name = "framegraph: run"
        thread.start()
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
        object["program"] = ["itemsDelivered": counts.delivered, "itemsDropped": counts.dropped, "ended": hasEnded]
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
