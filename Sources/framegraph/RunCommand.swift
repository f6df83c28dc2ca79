import Foundation
import FrameGraph
import FrameGraphPipelines

/// `framegraph run` and `framegraph check`: load the pipeline, apply the command line, validate, run.
struct RunCommand {
    static let valued: Set<String> = ["input", "output", "mode", "fps", "policy", "stats", "trace", "set", "duration"]
    static let switches: Set<String> = ["loop", "quiet"]

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
        options.fps = try arguments.number("fps") ?? 30
        if let trace = arguments.value("trace") { options.traceURL = URL(fileURLWithPath: trace) }

        var document = try Pipeline.parseFile(path: path)
        try applyOverrides(to: &document)
        let pipeline = try Pipeline.build(document)
        let runner = try GraphRunner(sources: pipeline.sources, options: options)

        if checkOnly {
            try runner.validate()
            print("\(path): OK")
            for node in runner.nodes {
                let inputs = runner.inputs(of: node).map(\.description).joined(separator: ", ")
                let output = runner.output(of: node)?.description ?? "-"
                print("  \(node.name) (\(node.kind)): in [\(inputs)] → \(output)\(isWorker(node) ? "  [worker]" : "")")
            }
            for source in pipeline.sources { try? source.finish(context: runner.context) }
            return 0
        }

        let interrupts = Interrupts { runner.stop() }
        if let limit = try arguments.number("duration") {
            let context = runner.context
            Thread.detachNewThread {
                context.clock.sleep(for: limit, lane: 9999)
                context.requestStop()
            }
        }
        let quiet = arguments.has("quiet")
        let showProgress = !quiet && isatty(STDERR_FILENO) == 1
        var progress: (@Sendable (RunReport) -> Void)?
        if showProgress {
            progress = { @Sendable (report: RunReport) in
                FileHandle.standardError.write(Data("\r\u{1B}[K\(report.progressLine())".utf8))
            }
        }
        let report = try runner.run(progress: progress)
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if let stats = arguments.value("stats") {
            do {
                try report.json().write(to: URL(fileURLWithPath: stats))
            } catch {
                FileHandle.standardError.write(Data("framegraph: cannot write stats to \(stats): \(error.localizedDescription)\n".utf8))
            }
        }
        if !quiet { print(report.table()) }
        if let failure = report.failure {
            FileHandle.standardError.write(Data("framegraph: \(failure.message)\n".utf8))
            return 1
        }
        return interrupts.interrupted ? 130 : 0
    }

    private func isWorker(_ node: Node) -> Bool {
        (node as? FilterNode)?.runsOnWorker ?? false
    }

    /// `--input`, `--output`, `--loop` and `--set` become option overrides on the document.
    private func applyOverrides(to document: inout PipelineDocument) throws {
        if let input = arguments.value("input") {
            let sources = document.declarations.filter { $0.type == "file" }
            guard !sources.isEmpty else {
                throw Arguments.UsageError(description: "--input: \(document.file) has no 'file' source to read it")
            }
            for s in sources { _ = document.override(node: s.name, key: "path", value: input) }
        }
        if arguments.has("loop") {
            for s in document.declarations where s.type == "file" { _ = document.override(node: s.name, key: "loop", value: "true") }
        }
        if let output = arguments.value("output") {
            guard let sink = document.declarations.first(where: { $0.type == "encode" || $0.type == "png" }) else {
                throw Arguments.UsageError(description: "--output: \(document.file) has no 'encode' or 'png' sink to write it")
            }
            _ = document.override(node: sink.name, key: "path", value: output)
        }
        for assignment in arguments.all("set") {
            guard let dot = assignment.firstIndex(of: "."), let eq = assignment.firstIndex(of: "="), dot < eq else {
                throw Arguments.UsageError(description: "--set expects NODE.KEY=VALUE, got '\(assignment)'")
            }
            let node = String(assignment[..<dot])
            let key = String(assignment[assignment.index(after: dot)..<eq])
            let value = String(assignment[assignment.index(after: eq)...])
            guard document.override(node: node, key: key, value: value) else {
                let names = document.declarations.map(\.name)
                throw Arguments.UsageError(description: "--set: the pipeline has no node '\(node)' (its nodes: \(names.joined(separator: ", ")))")
            }
        }
    }
}
