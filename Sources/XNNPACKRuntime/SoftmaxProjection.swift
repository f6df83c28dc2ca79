import CFrameGraphKernels
import CXNNPACK
import NeuralGraph

/// A softmax over the channels (optionally after a multiplication by a constant scalar, a
/// temperature) whose probabilities go only into a 1×1 convolution with few outputs: the annealed
/// mean that ends FrameGraph's colorizer (logits × 1/T → softmax over the a/b bins → a 1×1
/// convolution whose weights are the bin centres). FrameGraph's kernel (`fg_softmax_project`) does
/// all of it in one pass per row, without writing the probabilities.
struct SoftmaxProjectionGroup {
    /// The multiplication by a scalar before the softmax, if any.
    var multiply: Int?
    var softmax: Int
    var convolution: Int
    /// The logits (the softmax's input, or the multiplication's).
    var input: Int
    /// The convolution's output.
    var output: Int
    /// What the logits are multiplied by inside the softmax (its beta times the scalar).
    var scale: Float
    /// Values per row (softmax classes) and projection outputs.
    var classes: Int
    var outputs: Int
    var range: (Float, Float)

    var nodes: [Int] { (multiply.map { [$0] } ?? []) + [softmax, convolution] }
    /// The graph position the group runs at: its last node.
    var position: Int { convolution }

    /// Projections larger than this stay with the matrix kernels.
    static let largestProjection = 64

    /// The groups of `graph` (lowered for XNNPACK).
    static func groups(in graph: NeuralGraph, readers: GraphReaders) -> [SoftmaxProjectionGroup] {
        var groups: [SoftmaxProjectionGroup] = []
        for (index, node) in graph.nodes.enumerated() {
            guard case .softmax(let beta) = node.operation, beta.isFinite, node.inputs.count == 1, node.outputs.count == 1,
                  node.inputs[0] >= 0, let c = readers.onlyConsumer(node.outputs[0]) else { continue }
            let probabilities = graph.tensors[node.outputs[0]].shape
            guard probabilities.count == 4, probabilities.allSatisfy({ $0 > 0 }), let classes = probabilities.last,
                  case .conv2d(let p) = graph.nodes[c].operation, p.activation != .tanh, p.strideH == 1, p.strideW == 1,
                  graph.nodes[c].inputs.count >= 2, graph.nodes[c].inputs[0] == node.outputs[0], graph.nodes[c].outputs.count == 1 else { continue }
            let filter = graph.tensors[graph.nodes[c].inputs[1]].shape  // [O, 1, 1, I]
            let projected = graph.tensors[graph.nodes[c].outputs[0]].shape
            guard filter.count == 4, filter[1] == 1, filter[2] == 1, filter[3] == classes, filter[0] >= 1,
                  filter[0] <= largestProjection, graph.tensors[graph.nodes[c].inputs[1]].constant != nil,
                  projected == Array(probabilities.dropLast()) + [filter[0]] else { continue }
            if graph.nodes[c].inputs.count > 2, graph.nodes[c].inputs[2] >= 0 {
                guard let bias = graph.tensors[graph.nodes[c].inputs[2]].constant, bias.elementCount == filter[0] else { continue }
            }
            var group = SoftmaxProjectionGroup(multiply: nil, softmax: index, convolution: c, input: node.inputs[0],
                                               output: graph.nodes[c].outputs[0], scale: beta, classes: classes, outputs: filter[0],
                                               range: p.activation.range)
            // A multiplication of the logits by a constant scalar, read by the softmax alone.
            if let m = readers.producer(node.inputs[0]), readers.onlyConsumer(node.inputs[0]) == index,
               case .multiply(let activation) = graph.nodes[m].operation, activation == .none, graph.nodes[m].inputs.count == 2 {
                let ins = graph.nodes[m].inputs
                if let k = ins.firstIndex(where: { $0 >= 0 && graph.tensors[$0].constant?.elementCount == 1 }), ins[1 - k] >= 0,
                   graph.tensors[ins[1 - k]].shape == probabilities, let factor = graph.tensors[ins[k]].constant?.floats().first,
                   factor.isFinite {
                    group.multiply = m
                    group.input = ins[1 - k]
                    group.scale = beta * factor
                }
            }
            groups.append(group)
        }
        return groups
    }
}

/// A ``SoftmaxProjectionGroup`` bound to the predictor's buffers: the projection's weights packed
/// once, then one call of `fg_softmax_project` per prediction (or one part of the rows per thread).
final class SoftmaxProjectionKernel {
    let group: SoftmaxProjectionGroup
    private let packed: UnsafeMutablePointer<Float>
    private let bias: UnsafeMutablePointer<Float>?
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchCount: Int
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private let rows: Int
    private let parts: KernelParts
    private let rowsPerPart: Int

    init(_ group: SoftmaxProjectionGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
         threadpool: pthreadpool_t?) throws {
        self.group = group
        let node = graph.nodes[group.convolution]
        let bind = KernelBindings(graph: graph, buffers: buffers, constants: constants,
                                  label: "SOFTMAX+CONV_2D ('\(graph.nodes[group.softmax].name)')")
        input = try bind.buffer(group.input)
        output = try bind.buffer(group.output)
        let weights = try bind.constant(node.inputs[1])
        let projectionBias = try bind.bias(of: node)
        rows = graph.tensors[group.input].shape.dropLast().reduce(1, *)
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        // Split only when every part gets at least 256 rows.
        parts = KernelParts(count: min(threads, rows / 256), threadpool: threadpool)
        rowsPerPart = (rows + parts.count - 1) / parts.count
        let k = Int32(group.classes), n = Int32(group.outputs)
        scratchCount = fg_softmax_project_padded(k)
        // Nothing below throws: what is allocated is freed by deinit.
        packed = .allocate(capacity: scratchCount * group.outputs)
        fg_softmax_project_pack(weights, k, n, packed)
        if let projectionBias {
            bias = .allocate(capacity: group.outputs)
            bias?.update(from: projectionBias, count: group.outputs)
        } else {
            bias = nil
        }
        scratch = .allocate(capacity: scratchCount * parts.count)
        parts.bind { [unowned self] in self.run(part: $0) }
    }

    deinit {
        packed.deallocate()
        bias?.deallocate()
        scratch.deallocate()
    }

    func run() { parts.run() }

    /// Rows part·rowsPerPart … of the output, with scratch of its own.
    private func run(part: Int) {
        let first = part * rowsPerPart, end = min(rows, first + rowsPerPart)
        fg_softmax_project(input, first, end, Int32(group.classes), group.scale, packed, bias, Int32(group.outputs),
                           group.range.0, group.range.1, output, scratch + part * scratchCount, 1)
    }
}
