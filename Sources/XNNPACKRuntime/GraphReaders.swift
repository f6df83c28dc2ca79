import NeuralGraph

/// Who reads and who writes each tensor of a graph: what the finders of FrameGraph's own kernel
/// groups ask before fusing an operation into the one before it (an intermediate result may be
/// absorbed only when nothing else reads it). Built once per graph by ``ownKernelGroups(in:fuse:threads:)``.
struct GraphReaders {
    /// The nodes reading each tensor, in graph order (a node reading a tensor twice is listed twice).
    private var consumers: [Int: [Int]] = [:]
    /// The node writing each tensor.
    private var producers: [Int: Int] = [:]
    private let outputs: Set<Int>

    init(_ graph: NeuralGraph) {
        for (i, node) in graph.nodes.enumerated() {
            for t in node.inputs where t >= 0 { consumers[t, default: []].append(i) }
            for o in node.outputs { producers[o] = i }
        }
        outputs = Set(graph.outputs)
    }

    /// The single node reading `tensor`, when it is not also a graph output.
    func onlyConsumer(_ tensor: Int) -> Int? {
        guard !outputs.contains(tensor), let c = consumers[tensor], c.count == 1 else { return nil }
        return c[0]
    }

    /// The node writing `tensor` (nil for graph inputs and constants).
    func producer(_ tensor: Int) -> Int? { producers[tensor] }
}
