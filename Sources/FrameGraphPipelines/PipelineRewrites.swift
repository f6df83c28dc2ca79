import Foundation
import FrameGraph

/// The command line's changes to a pipeline, as typed transformations of its document (before it is
/// built), each an error naming the file when it has nothing to apply to. The CLI calls them; a
/// program may too.
///
/// ```swift
/// var document = try Pipeline.parseFile(path: "pipelines/face-detect.fg")
/// try document.applyInput("clip.mp4")
/// try document.applyResults("faces.jsonl")              // replaces the pipeline's results file, or adds one
/// try document.applyPreview(title: "face-detect", writeFiles: false)  // a window; no file written
/// ```
extension PipelineDocument {
    /// The types of sinks that write files.
    public static let fileSinkTypes: Set<String> = ["encode", "png", "results"]

    /// `--input PATH`: the path of every `file` source.
    public mutating func applyInput(_ path: String) throws {
        let sources = declarations.filter { $0.type == "file" }
        guard !sources.isEmpty else { throw usage("--input: \(file) has no 'file' source to read it") }
        for s in sources { _ = override(node: s.name, key: "path", value: path, origin: "--input") }
    }

    /// `--loop`: every `file` source loops.
    public mutating func applyLoop() throws {
        let sources = declarations.filter { $0.type == "file" }
        guard !sources.isEmpty else { throw usage("--loop: \(file) has no 'file' source to loop") }
        for s in sources { _ = override(node: s.name, key: "loop", value: "true", origin: "--loop") }
    }

    /// `--audio copy|drop|aac`: the audio of every `encode` sink.
    public mutating func applyAudio(_ mode: String) throws {
        let sinks = declarations.filter { $0.type == "encode" }
        guard !sinks.isEmpty else { throw usage("--audio: \(file) has no 'encode' sink") }
        for s in sinks { _ = override(node: s.name, key: "audio", value: mode, origin: "--audio") }
    }

    /// `--output PATH`: the path of the first `encode` or `png` sink.
    public mutating func applyOutput(_ path: String) throws {
        guard let sink = declarations.first(where: { $0.type == "encode" || $0.type == "png" }) else {
            throw usage("--output: \(file) has no 'encode' or 'png' sink to write it")
        }
        _ = override(node: sink.name, key: "path", value: path, origin: "--output")
    }

    /// `--results FILE`: the results file. A pipeline with `results` sinks writes the first to FILE
    /// and drops the others (their producers go to FILE too); one without gets a `results` sink fed by
    /// every node that emits results (``NodeType/emits`` in `catalog`).
    public mutating func applyResults(_ path: String, catalog: NodeCatalog = .standard) throws {
        let existing = declarations.filter { $0.type == "results" }
        let producers = resultsProducers(catalog: catalog)
        if existing.isEmpty {
            guard !producers.isEmpty else {
                throw usage("--results: \(file) has no node that produces results (a detector or classifier, such as detect-faces)")
            }
        } else {
            let names = Set(existing.map(\.name))
            declarations.removeAll { names.contains($0.name) }
            connections.removeAll { names.contains($0.to.node) }
        }
        let name = uniqueName("results")
        let here = Location(line: 1, column: 1)
        declarations.append(Declaration(name: name, type: "results", options: [
            Option(key: "path", value: path, location: here, valueLocation: here, origin: "--results"),
            Option(key: "ports", value: String(max(1, producers.count)), location: here, valueLocation: here, origin: "--results"),
        ], location: here, typeLocation: here))
        for (port, producer) in producers.enumerated() {
            connections.append(Connection(from: Endpoint(node: producer, port: nil, location: here),
                                          to: Endpoint(node: name, port: String(port), location: here)))
        }
    }

    /// What ``applyPreview(title:writeFiles:)`` did.
    public enum PreviewOutcome: Sendable, Equatable {
        /// A window shows the output of this node.
        case showing(node: String)
        /// Nothing to show: why.
        case nothingToShow(String)
    }

    /// `--preview`: a `display` sink showing what the pipeline's first video sink (encode, png or
    /// null) receives. `writeFiles` false (a preview-only run): every file-writing sink whose path the
    /// command line did not name becomes a `null` sink, so the run writes nothing it was not asked to.
    @discardableResult
    public mutating func applyPreview(title: String, writeFiles: Bool) throws -> PreviewOutcome {
        if !writeFiles {
            for d in declarations where Self.fileSinkTypes.contains(d.type) && d.options.first(where: { $0.key == "path" })?.origin == nil {
                discard(d.name)
            }
        }
        if declarations.contains(where: { $0.type == "display" }) { return .nothingToShow("the pipeline has a display window already") }
        guard let feeding = videoOutputNode else {
            return .nothingToShow("the pipeline has no video output to show")
        }
        let name = uniqueName("preview")
        let here = Location(line: 1, column: 1)
        declarations.append(Declaration(name: name, type: "display", options: [
            Option(key: "title", value: title, location: here, valueLocation: here, origin: "--preview"),
            Option(key: "optional", value: "true", location: here, valueLocation: here, origin: "--preview"),
        ], location: here, typeLocation: here))
        connections.append(Connection(from: Endpoint(node: feeding, port: nil, location: here), to: Endpoint(node: name, port: nil, location: here)))
        return .showing(node: feeding)
    }

    /// The node whose output the pipeline's first video sink (encode, png or null) receives: what a
    /// preview window shows and what a program's frame tap (the C library, Python) gets; nil when
    /// the pipeline has no video output.
    public var videoOutputNode: String? {
        let videoSinks = declarations.filter { ["encode", "png", "null"].contains($0.type) }.map(\.name)
        let links = connections
        return videoSinks.compactMap({ sink in links.first { $0.to.node == sink }?.from.node }).first
    }

    /// The nodes whose results a results file gets: every producer of the pipeline's `results` sinks
    /// (in the order of the connections) when it has some, else every node whose type emits results
    /// (``NodeType/emits`` in `catalog`). Empty when nothing produces results.
    public func resultsProducers(catalog: NodeCatalog = .standard) -> [String] {
        let existing = declarations.filter { $0.type == "results" }
        guard !existing.isEmpty else { return declarations.filter { catalog.types[$0.type]?.producesResults == true }.map(\.name) }
        var producers: [String] = []
        for c in connections where existing.contains(where: { $0.name == c.to.node }) && !producers.contains(c.from.node) {
            producers.append(c.from.node)
        }
        return producers
    }

    /// `--set NODE.KEY=VALUE` (each).
    public mutating func applySettings(_ assignments: [String]) throws {
        for assignment in assignments {
            let shown = assignment.count > 80 ? String(assignment.prefix(80)) + "…" : assignment
            guard let dot = assignment.firstIndex(of: "."), let eq = assignment.firstIndex(of: "="), dot < eq else {
                throw usage("--set expects NODE.KEY=VALUE, got '\(shown)'")
            }
            let node = String(assignment[..<dot])
            let key = String(assignment[assignment.index(after: dot)..<eq])
            let value = String(assignment[assignment.index(after: eq)...])
            guard override(node: node, key: key, value: value, origin: "--set \(shown)") else {
                let names = declarations.map(\.name)
                throw usage("--set: the pipeline has no node '\(node.prefix(40))'\(didYouMean(node, names)) (its nodes: \(names.joined(separator: ", ")))")
            }
        }
    }

    /// Turns the sink `name` into `null` sinks, one per connection into it (a null sink has one port
    /// and takes frames and results alike).
    mutating func discard(_ name: String) {
        let into = connections.indices.filter { connections[$0].to.node == name }
        guard let index = declarations.firstIndex(where: { $0.name == name }) else { return }
        let declaration = declarations.remove(at: index)
        for (k, c) in into.enumerated() {
            let replacement = k == 0 ? name : uniqueName(name)
            declarations.append(Declaration(name: replacement, type: "null", options: [], location: declaration.location,
                                            typeLocation: declaration.typeLocation))
            connections[c].to = Endpoint(node: replacement, port: nil, location: connections[c].to.location)
        }
    }

    /// `base`, or `base-2`, `base-3` … when taken.
    func uniqueName(_ base: String) -> String {
        var name = base, n = 1
        while declarations.contains(where: { $0.name == name }) {
            n += 1
            name = "\(base)-\(n)"
        }
        return name
    }

    private func usage(_ message: String) -> PipelineError {
        PipelineError(origin: "", message: message)
    }
}
