import NeuralGraph

/// What one of FrameGraph's own kernels is bound to when the predictor builds it: the buffers of the
/// tensors it reads and writes and the constants it packs. A missing one is an error that names the
/// kernel's operations and the tensor.
struct KernelBindings {
    let graph: NeuralGraph
    let buffers: [Int: TensorBuffer]
    let constants: [Int: ConstantStorage]
    /// The kernel's operations as errors name them, e.g. "CONV_2D ('conv_1')".
    let label: String

    func buffer(_ tensor: Int) throws -> UnsafeMutablePointer<Float> {
        guard let b = buffers[tensor] else {
            throw ModelError.runtime(operation: label, reason: "tensor '\(graph.tensors[tensor].name)' has no buffer")
        }
        return b.pointer
    }

    func constant(_ tensor: Int) throws -> UnsafeMutablePointer<Float> {
        guard let c = constants[tensor] else {
            throw ModelError.runtime(operation: label, reason: "tensor '\(graph.tensors[tensor].name)' is not a constant")
        }
        return c.floatPointer
    }

    /// A convolution node's bias (its third input), nil when it has none.
    func bias(of node: NeuralNode) throws -> UnsafeMutablePointer<Float>? {
        node.inputs.count > 2 && node.inputs[2] >= 0 ? try constant(node.inputs[2]) : nil
    }
}
