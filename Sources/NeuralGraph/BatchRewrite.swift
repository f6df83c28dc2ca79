/// The same graph for several images at once: the batch dimension of every activation set to N.
extension NeuralGraph {
    /// The graph with every activation (every tensor that is not a constant) whose leading dimension
    /// is 1 given `batch` there instead, so that one prediction runs `batch` images: input image k
    /// at element offset k × (one image's count), output k likewise. Constants (weights, biases,
    /// anchors) are unchanged.
    ///
    /// Throws when the graph does not take a batch this way: an input that is not of batch 1, or an
    /// operation whose shapes no longer fit (``validate()`` names it) — a reshape that folds the batch
    /// into another dimension, a detection post-process of one image. The caller runs one image per
    /// prediction then.
    ///
    /// ```swift
    /// let four = try graph.batched(4)     // [1, 256, 256, 3] → [4, 256, 256, 3]
    /// ```
    public func batched(_ batch: Int) throws(ModelError) -> NeuralGraph {
        guard batch >= 1 else { throw ModelError.invalidOperation(operation: "graph", reason: "a batch of \(batch) images") }
        guard batch > 1 else { return self }
        for index in inputs + outputs {
            guard tensors.indices.contains(index), tensors[index].shape.first == 1, tensors[index].shape.count >= 2 else {
                let shape = tensors.indices.contains(index) ? describe(tensors[index].shape) : "tensor \(index)"
                throw ModelError.invalidOperation(operation: "graph", reason: "input or output \(shape) has no batch dimension of 1")
            }
        }
        var g = self
        for i in g.tensors.indices where g.tensors[i].constant == nil && g.tensors[i].shape.count >= 2 && g.tensors[i].shape[0] == 1 {
            g.tensors[i].shape[0] = batch
        }
        for node in g.nodes {
            // An operation that reads no activation (a constant folded late) keeps its shapes; one whose
            // output did not get the batch (a reshape to rank 1) cannot be batched this way.
            for output in node.outputs where g.tensors.indices.contains(output) && g.tensors[output].constant == nil {
                guard g.tensors[output].shape.first == batch else {
                    throw ModelError.invalidOperation(operation: "\(node.operation.name) '\(node.name)'",
                                                      reason: "output \(describe(tensors[output].shape)) has no batch dimension")
                }
            }
        }
        try g.validate()
        return g
    }
}
