import Foundation
import FrameGraph
import FrameGraphModels

/// A pipeline made from a description file: its nodes by name and its sources, ready for
/// ``GraphRunner``.
public struct Pipeline: @unchecked Sendable {
    /// Nodes in declaration order.
    public var nodes: [(name: String, type: String, node: Node)]
    public var sources: [SourceNode]

    /// The node called `name`.
    public func node(_ name: String) -> Node? { nodes.first { $0.name == name }?.node }

    /// Largest pipeline file read (far above any real one).
    public static let maxFileBytes: Int64 = 4 << 20

    /// Reads and parses a pipeline file without building it (so options can be overridden first).
    public static func parseFile(path: String) throws -> PipelineDocument {
        let data = try FileCheck.read(path, what: "pipeline file", maxBytes: maxFileBytes)
        guard let text = String(data: data, encoding: .utf8) else {
            throw PipelineError(file: path, line: 1, column: 1, message: "the file is not UTF-8 text")
        }
        return try PipelineParser.parse(text, file: path)
    }

    /// Loads and builds a pipeline file (see ``PipelineDocument`` for the format), after applying
    /// `overrides` (node, key, value).
    public static func load(path: String, catalog: NodeCatalog = .standard, models: ModelService? = nil,
                            overrides: [(node: String, key: String, value: String)] = []) throws -> Pipeline {
        var document = try parseFile(path: path)
        for o in overrides where !document.override(node: o.node, key: o.key, value: o.value) {
            throw PipelineError(file: path, line: 1, column: 1,
                                message: "--set names node '\(o.node)', which the pipeline does not declare\(didYouMean(o.node, document.declarations.map(\.name)))")
        }
        return try build(document, catalog: catalog, models: models)
    }

    /// Makes the nodes of `document` and connects them. Every node that loads models gets `models`
    /// (default: the standard service for this pipeline file: its folder first on the search path).
    public static func build(_ given: PipelineDocument, catalog: NodeCatalog = .standard, models: ModelService? = nil) throws -> Pipeline {
        var document = given
        // A `streams` list no command line replaced: one copy of the chain per stream.
        if let streams = try document.takeStreams() { try document.replicate(streams: streams) }
        let file = document.file
        let models = models ?? ModelService(.standard(pipelineFile: file))
        if document.declarations.count > RunOptions.maxNodesDefault {
            let d = document.declarations[RunOptions.maxNodesDefault]
            throw PipelineError(file: file, line: d.location.line, column: d.location.column,
                                message: "the pipeline declares \(document.declarations.count) nodes, more than the limit of \(RunOptions.maxNodesDefault)")
        }
        var nodes: [(name: String, type: String, node: Node)] = []
        for d in document.declarations {
            guard let type = catalog.types[d.type] else {
                throw PipelineError(file: file, line: d.typeLocation.line, column: d.typeLocation.column,
                                    message: "unknown node type '\(d.type)'\(didYouMean(d.type, catalog.names)) — known types: \(catalog.names.joined(separator: ", "))")
            }
            for o in d.options where !type.options.contains(where: { $0.name == o.key }) {
                let known = type.options.map(\.name)
                let message = "node '\(d.name)' (\(d.type)) has no option '\(o.key)'\(didYouMean(o.key, known))"
                    + (known.isEmpty ? " — it takes no options" : " — its options: \(known.joined(separator: ", "))")
                if let origin = o.origin { throw PipelineError(origin: origin, message: message) }
                throw PipelineError(file: file, line: o.location.line, column: o.location.column, message: message)
            }
            let values = OptionValues(declaration: d, specs: type.options, file: file, models: models)
            try values.validate()
            do {
                let node = try type.make(d.name, values)
                if let user = node as? any ModelUser { user.models = models }
                nodes.append((d.name, d.type, node))
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
        do {
            try connect(document.connections, lookup: lookup, file: file)
        } catch {
            for n in nodes { n.node.removeAllTargets() }
            throw error
        }
        let sources = nodes.compactMap { $0.node as? SourceNode }
        do {
            if sources.isEmpty {
                throw PipelineError(file: file, line: 1, column: 1, message: "the pipeline declares no source (file, camera or pattern)")
            }
            try checkReachable(nodes: nodes, sources: sources, document: document)
            try checkAcyclic(nodes: nodes, document: document)
        } catch {
            for n in nodes { n.node.removeAllTargets() }
            throw error
        }
        shareWorkers(nodes: nodes, document: document)
        return Pipeline(nodes: nodes, sources: sources)
    }

    /// A replicated pipeline (``PipelineDocument/replicate(streams:batch:)``): names each stream's
    /// source, and gives the copies of each worker node that can share (``WorkerSharing``: a network)
    /// one ``WorkerGroup`` — one worker thread, one model — led by the first stream's copy.
    static func shareWorkers(nodes: [(name: String, type: String, node: Node)], document: PipelineDocument) {
        guard !document.streamNames.isEmpty else { return }
        func node(_ name: String) -> Node? { nodes.first { $0.name == name }?.node }
        for template in document.streamNodeNames {
            let copies = document.streamNames.compactMap { stream -> (stream: String, node: Node)? in
                node("\(stream)/\(template)").map { (stream, $0) }
            }
            for copy in copies { (copy.node as? SourceNode)?.streamName = copy.stream }
            guard let leader = copies.first?.node as? any WorkerSharing, leader.execution == .worker else { continue }
            share(leader, with: copies.map(\.node), group: WorkerGroup(name: template, batchLimit: max(1, document.streamBatch)))
        }
    }

    private static func share<Member: WorkerSharing>(_ leader: Member, with copies: [Node], group: WorkerGroup) {
        for copy in copies {
            (copy as? Member)?.join(group, leader: leader)
        }
    }

    /// Frames must not flow in a circle: Kahn's algorithm over the declared nodes (iterative), and the
    /// nodes left over are named.
    static func checkAcyclic(nodes: [(name: String, type: String, node: Node)], document: PipelineDocument) throws {
        var indegree: [ObjectIdentifier: Int] = [:]
        for n in nodes { for t in n.node.targets { indegree[ObjectIdentifier(t.node), default: 0] += 1 } }
        var ready = nodes.filter { indegree[ObjectIdentifier($0.node), default: 0] == 0 }.map(\.node)
        var done = 0
        while let node = ready.popLast() {
            done += 1
            for t in node.targets {
                let id = ObjectIdentifier(t.node)
                indegree[id, default: 0] -= 1
                if indegree[id] == 0 { ready.append(t.node) }
            }
        }
        guard done < nodes.count else { return }
        // Left over: the loop and what hangs below it; name the nodes on the loop (those that reach
        // themselves), found by an iterative search within the leftovers.
        let leftover = nodes.filter { indegree[ObjectIdentifier($0.node), default: 0] > 0 }
        let leftoverIDs = Set(leftover.map { ObjectIdentifier($0.node) })
        func reachesItself(_ start: Node) -> Bool {
            var seen = Set<ObjectIdentifier>(), stack = start.targets.map(\.node)
            while let n = stack.popLast() {
                if n === start { return true }
                guard leftoverIDs.contains(ObjectIdentifier(n)), seen.insert(ObjectIdentifier(n)).inserted else { continue }
                stack.append(contentsOf: n.targets.map(\.node))
            }
            return false
        }
        let onLoop = leftover.filter { reachesItself($0.node) }
        let stuck = onLoop.isEmpty ? leftover : onLoop
        let d = document.declarations.first { $0.name == stuck.first?.name }
        throw PipelineError(file: document.file, line: d?.location.line ?? 1, column: d?.location.column ?? 1,
                            message: "frames would flow in a circle through \(stuck.map { "'\($0.name)'" }.joined(separator: ", ")): remove a connection of the loop")
    }

    /// Makes the connections of `connections`, resolving names with `lookup`.
    static func connect(_ connections: [PipelineDocument.Connection], lookup: (PipelineDocument.Endpoint) throws -> Node, file: String) throws {
        for c in connections {
            let from = try lookup(c.from), to = try lookup(c.to)
            if c.from.port != nil {
                throw PipelineError(file: file, line: c.from.location.line, column: c.from.location.column,
                                    message: "an output has no port name: write '\(c.from.node) -> …'")
            }
            if to.role == .source {
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
    }

    /// Every declared node must receive frames from a source: a node left out of the connections (or
    /// in a loop of its own) would silently do nothing. Iterative, so any graph size is fine.
    static func checkReachable(nodes: [(name: String, type: String, node: Node)], sources: [SourceNode],
                               document: PipelineDocument) throws {
        var reached = Set<ObjectIdentifier>()
        var stack: [Node] = sources
        while let node = stack.popLast() {
            guard reached.insert(ObjectIdentifier(node)).inserted else { continue }
            stack.append(contentsOf: node.targets.map(\.node))
        }
        let missing = nodes.filter { !reached.contains(ObjectIdentifier($0.node)) }
        guard let first = missing.first, let d = document.declarations.first(where: { $0.name == first.name }) else { return }
        let names = missing.map { "'\($0.name)'" }.joined(separator: ", ")
        throw PipelineError(file: document.file, line: d.location.line, column: d.location.column,
                            message: "node\(missing.count == 1 ? "" : "s") \(names) \(missing.count == 1 ? "is" : "are") not connected to any source: connect \(missing.count == 1 ? "it" : "them") (a -> \(first.name)) or remove \(missing.count == 1 ? "it" : "them")")
    }
}
