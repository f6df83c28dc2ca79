import Foundation
import FrameGraph
import FrameGraphPipelines

/// `framegraph graph PIPELINE [-o FILE.dot|.svg|.png]`: the pipeline as a Graphviz picture — each
/// node with its type, options and lane (source, inline, worker, sink), each connection with the
/// port it enters. SVG and PNG go through Graphviz's `dot` when it is installed.
struct GraphCommand {
    let arguments: Arguments

    func execute() throws -> Int32 {
        var pipeline = try PipelineArgument.load(arguments)
        try pipeline.document.applySettings(arguments.all("set"))
        // Built (without models loading: that happens at validation) to know each node's lane and ports.
        let built = try Pipeline.build(pipeline.document)
        let dot = Self.dot(pipeline.document, built: built, title: pipeline.name)
        guard let output = arguments.value("output") else {
            print(dot)
            return 0
        }
        let ext = URL(fileURLWithPath: output).pathExtension.lowercased()
        let inputs = [pipeline.file].compactMap { $0 }.map { ($0, "the pipeline file") }
        try FileCheck.checkOutputs([(output, "graph -o")], inputs: inputs)
        switch ext {
        case "dot", "gv":
            try OutputFile.write(Data(dot.utf8), to: output)
        case "svg", "png":
            guard let program = Self.which("dot") else {
                throw Arguments.UsageError(description: "-o \(output): SVG and PNG need Graphviz's dot (apt install graphviz); -o FILE.dot writes the DOT text")
            }
            let data = try Self.render(dot, format: ext, with: program)
            try OutputFile.write(data, to: output)
        default:
            throw Arguments.UsageError(description: "-o \(output.prefix(80)): the picture is .dot, .svg or .png")
        }
        print("wrote: \(output)")
        return 0
    }

    /// The DOT text: one box per node (name, type, options, lane), one edge per connection.
    static func dot(_ document: PipelineDocument, built: Pipeline, title: String) -> String {
        func quote(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        var lines = ["digraph \(quote(title)) {", "  rankdir=LR;", "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=10];"]
        let colours: [Execution: String] = [.source: "#cfe8ff", .inline: "#f2f2f2", .worker: "#ffe2b8", .sink: "#d8f5d0"]
        for d in document.declarations {
            guard let node = built.node(d.name) else { continue }
            let options = d.options.map { "\($0.key)=\($0.value.count > 40 ? String($0.value.prefix(37)) + "…" : $0.value)" }
            let label = ([d.name, "\(d.type) [\(node.execution.rawValue)]"] + options).joined(separator: "\n")
            lines.append("  \(quote(d.name)) [label=\(quote(label)), fillcolor=\(quote(colours[node.execution] ?? "#ffffff"))];")
        }
        for c in document.connections {
            let port = c.to.port.map { " [label=\(quote($0))]" } ?? ""
            lines.append("  \(quote(c.from.node)) -> \(quote(c.to.node))\(port);")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    static func which(_ program: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(folder)/\(program)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs `dot -T<format>` on the text.
    static func render(_ dot: String, format: String, with program: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["-T\(format)"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(dot.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, !data.isEmpty else {
            throw Arguments.UsageError(description: "Graphviz's dot failed (status \(process.terminationStatus))")
        }
        return data
    }
}
