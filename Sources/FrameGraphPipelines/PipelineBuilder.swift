import Foundation
import FrameGraph

/// A pipeline made from a description file: its nodes by name and its sources, ready for
/// ``GraphRunner``.
public struct Pipeline: @unchecked Sendable {
    /// Nodes in declaration order.
    public var nodes: [(name: String, type: String, node: Node)]
    public var sources: [SourceNode]

    /// The node called `name`.
    public func node(_ name: String) -> Node? { nodes.first { $0.name == name }?.node }

    /// Reads and parses a pipeline file without building it (so options can be overridden first).
    public static func parseFile(path: String) throws -> PipelineDocument {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GraphError.io(path: path, reason: FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw PipelineError(file: path, line: 1, column: 1, message: "the file is not UTF-8 text")
        }
        return try PipelineParser.parse(text, file: path)
    }

    /// Loads and builds a pipeline file (see ``PipelineDocument`` for the format), after applying
    /// `overrides` (node, key, value).
    public static func load(path: String, catalog: NodeCatalog = .standard,
                            overrides: [(node: String, key: String, value: String)] = []) throws -> Pipeline {
        var document = try parseFile(path: path)
        for o in overrides where !document.override(node: o.node, key: o.key, value: o.value) {
            throw PipelineError(file: path, line: 1, column: 1,
                                message: "--set names node '\(o.node)', which the pipeline does not declare\(didYouMean(o.node, document.declarations.map(\.name)))")
        }
        return try build(document, catalog: catalog)
    }

    /// Makes the nodes of `document` and connects them.
    public static func build(_ document: PipelineDocument, catalog: NodeCatalog = .standard) throws -> Pipeline {
        let file = document.file
        var nodes: [(name: String, type: String, node: Node)] = []
        for d in document.declarations {
            guard let type = catalog.types[d.type] else {
                throw PipelineError(file: file, line: d.typeLocation.line, column: d.typeLocation.column,
                                    message: "unknown node type '\(d.type)'\(didYouMean(d.type, catalog.names)) — known types: \(catalog.names.joined(separator: ", "))")
            }
            for o in d.options where !type.options.contains(where: { $0.name == o.key }) {
                let known = type.options.map(\.name)
                throw PipelineError(file: file, line: o.location.line, column: o.location.column,
                                    message: "node '\(d.name)' (\(d.type)) has no option '\(o.key)'\(didYouMean(o.key, known))"
                                        + (known.isEmpty ? " — it takes no options" : " — its options: \(known.joined(separator: ", "))"))
            }
            let values = OptionValues(declaration: d, specs: type.options, file: file)
            do {
                nodes.append((d.name, d.type, try type.make(d.name, values)))
            } catch let error as GraphError {
                throw PipelineError(file: file, line: d.location.line, column: d.location.column, message: error.description)
            }
        }
        func lookup(_ e: PipelineDocument.Endpoint) throws -> Node {
            guard let node = nodes.first(where: { $0.name == e.node })?.node else {
                throw PipelineError(file: file, line: e.location.line, column: e.location.column,
                                    message: "unknown node '\(e.node)'\(didYouMean(e.node, nodes.map(\.name))) — declare it first: \(e.node) = TYPE …")
            }
            return node
        }
        for c in document.connections {
            let from = try lookup(c.from), to = try lookup(c.to)
            if c.from.port != nil {
                throw PipelineError(file: file, line: c.from.location.line, column: c.from.location.column,
                                    message: "an output has no port name: write '\(c.from.node) -> …'")
            }
            if to is SourceNode {
                throw PipelineError(file: file, line: c.to.location.line, column: c.to.location.column,
                                    message: "'\(c.to.node)' is a source: nothing can be connected into it")
            }
            var port = 0
            if let name = c.to.port {
                if let index = to.inputPorts.firstIndex(of: name) {
                    port = index
                } else if let number = Int(name), to.inputPorts.indices.contains(number) {
                    port = number
                } else {
                    throw PipelineError(file: file, line: c.to.location.line, column: c.to.location.column,
                                        message: "node '\(c.to.node)' has no input port '\(name)'\(didYouMean(name, to.inputPorts)) — its ports: \(to.inputPorts.joined(separator: ", "))")
                }
            }
            from.addTarget(to, port: port)
        }
        let sources = nodes.compactMap { $0.node as? SourceNode }
        if sources.isEmpty {
            throw PipelineError(file: file, line: 1, column: 1, message: "the pipeline declares no source (file, camera or pattern)")
        }
        return Pipeline(nodes: nodes, sources: sources)
    }
}
