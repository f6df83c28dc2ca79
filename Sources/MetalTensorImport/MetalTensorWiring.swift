import NeuralGraph

/// The edges of a MetalTensor graph resolved to input slots (format spec §3.2) and the order the
/// nodes run in (§3.3): explicit `indices` reserve their slots first, then each edge without one
/// takes the lowest free slot of its target in file order; an `arithmetic` node with a secondary
/// image or data keeps slot 1 for it; an `inverted_residual` always takes its input in slot 0. The
/// nodes run in data-flow order from the single `input` node; cycles, unknown targets, slots fed
/// twice or never, and outputs that are never reached are errors naming the node and key.
struct MetalTensorWiring {
    /// For each node, the source node of each input slot.
    private(set) var sources: [String: [Int: String]] = [:]
    /// The nodes that run, in an order where every node comes after its sources.
    private(set) var order: [String] = []
    let inputNode: String
    let outputNodes: [String]

    /// How many input slots a node has, and which of them the graph must feed.
    static func slots(of node: MetalTensorNode) throws(ModelError) -> (count: Int, fedByGraph: Set<Int>) {
        switch node.type {
        case .input: return (0, [])
        case .invertedResidual: return (1, [0])
        case .concatenate:
            let n = max(node.declaredInputs.count, 1)
            return (n, Set(0..<n))
        case .arithmetic:
            let secondary = node.keys.has("secondary_image") || node.keys.has("secondary_data")
            return (2, secondary ? [0] : [0, 1])
        default: return (max(node.declaredInputs.count, 1), [0])
        }
    }

    init(nodes: [MetalTensorNode], file: String) throws(ModelError) {
        let byName = Dictionary(nodes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        func fail(_ reason: String) -> ModelError { .malformed(file: file, reason: reason, offset: nil) }
        let inputs = nodes.filter { $0.type == .input }
        guard let input = inputs.first else { throw fail("there is no node of type 'input' (the network needs exactly one)") }
        guard inputs.count == 1 else {
            throw fail("there are \(inputs.count) input nodes (\(inputs.map { "'\($0.name)'" }.joined(separator: ", "))); MetalTensor would pick one at random, so exactly one is required")
        }
        inputNode = input.name
        outputNodes = nodes.filter { $0.type == .output }.map(\.name)
        guard !outputNodes.isEmpty else { throw fail("there is no node of type 'output' (nothing would be read back)") }

        // Cycles (outputs' own targets are never followed).
        var state: [String: Int] = [:]  // 1 on the stack, 2 done
        func visit(_ name: String, path: [String]) throws(ModelError) {
            if state[name] == 2 { return }
            if state[name] == 1 {
                let cycle = (path.drop(while: { $0 != name }) + [name]).joined(separator: " → ")
                throw fail("the targets form a cycle: \(cycle)")
            }
            state[name] = 1
            if let n = byName[name], n.type != .output {
                for t in n.targets { try visit(t, path: path + [name]) }
            }
            state[name] = 2
        }
        for n in nodes { try visit(n.name, path: []) }
        var slotInfo: [String: (count: Int, fedByGraph: Set<Int>)] = [:]
        for n in nodes { slotInfo[n.name] = try Self.slots(of: n) }
        // Every edge, explicit indices first.
        var pending: [(from: MetalTensorNode, to: String, index: Int?)] = []
        for n in nodes where n.type != .output {
            for (k, t) in n.targets.enumerated() {
                guard let target = byName[t] else {
                    throw n.keys.error("targets", "target '\(t.prefix(60))' is not a node of this plist")
                }
                guard target.type != .input else { throw n.keys.error("targets", "target '\(t)' is the input node, which takes no inputs") }
                pending.append((n, t, target.type == .invertedResidual ? 0 : n.indices?[k]))
            }
        }
        for edge in pending.filter({ $0.index != nil }) + pending.filter({ $0.index == nil }) {
            let info = slotInfo[edge.to] ?? (1, [0])
            var taken = sources[edge.to] ?? [:]
            let slot: Int
            if let i = edge.index {
                guard info.fedByGraph.contains(i) else {
                    throw edge.from.keys.error("indices", "slot \(i) of target '\(edge.to)' is not an input the graph feeds (it has \(info.fedByGraph.sorted()))")
                }
                slot = i
            } else {
                guard let free = info.fedByGraph.sorted().first(where: { taken[$0] == nil }) else {
                    throw edge.from.keys.error("targets", "target '\(edge.to)' has no free input slot left (every slot of it is already fed)")
                }
                slot = free
            }
            if let other = taken[slot] {
                throw edge.from.keys.error("indices", "slot \(slot) of target '\(edge.to)' is already fed by '\(other)'")
            }
            taken[slot] = edge.from.name
            sources[edge.to] = taken
        }
        // Data-flow order from the input.
        var done: Set<String> = [input.name]
        order = [input.name]
        var progress = true
        while progress {
            progress = false
            for n in nodes where !done.contains(n.name) {
                guard let info = slotInfo[n.name], let fed = sources[n.name], !fed.isEmpty else { continue }
                guard info.fedByGraph.allSatisfy({ fed[$0].map(done.contains) ?? false }) else { continue }
                done.insert(n.name)
                order.append(n.name)
                progress = true
            }
        }
        for o in outputNodes where !done.contains(o) {
            throw fail("output node '\(o)' is never reached from input '\(input.name)' (an input slot on the way is not fed)")
        }
    }
}
