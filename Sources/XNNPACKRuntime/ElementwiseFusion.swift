import CFrameGraphKernels
import CXNNPACK
import NeuralGraph

/// Two elementwise patterns of MediaPipe's segmentation decoders that FrameGraph's kernels run in one
/// pass over full-resolution tensors instead of two:
/// - a channel gate applied and a skip added: MUL(x, gate[1, 1, 1, C]) → ADD(·, y) (`fg_scale_add`);
/// - an addition whose only reader is a global average pool: ADD(x, y) → AVERAGE_POOL_2D over the
///   whole image or MEAN over height and width (`fg_add_mean`; the sum is never written).
struct ElementwiseGroup {
    enum Kind {
        case scaleAdd(gate: Int, skip: Int)
        case addMean(other: Int)
    }
    var kind: Kind
    /// The multiplication (scaleAdd) or the addition (addMean).
    var first: Int
    /// The addition (scaleAdd) or the pool (addMean).
    var second: Int
    var input: Int
    var output: Int
    /// Images, pixels per image, channels of the full-resolution tensors.
    var batch: Int
    var pixels: Int
    var channels: Int

    var nodes: [Int] { [first, second] }
    var position: Int { second }

    /// The groups of `graph` (lowered for XNNPACK).
    static func groups(in graph: NeuralGraph, readers: GraphReaders) -> [ElementwiseGroup] {
        func isActivation(_ t: Int) -> Bool { t >= 0 && graph.tensors[t].constant == nil }
        var groups: [ElementwiseGroup] = []
        for (index, node) in graph.nodes.enumerated() {
            guard node.inputs.count == 2, node.outputs.count == 1, node.inputs.allSatisfy(isActivation) else { continue }
            let shape = graph.tensors[node.outputs[0]].shape
            guard shape.count == 4, shape.allSatisfy({ $0 > 0 }), let next = readers.onlyConsumer(node.outputs[0]) else { continue }
            let (batch, pixels, channels) = (shape[0], shape[1] * shape[2], shape[3])
            let second = graph.nodes[next]
            switch node.operation {
            case .multiply(let activation) where activation == .none:
                // x · gate, the gate one value per channel of the same batch element.
                let a = graph.tensors[node.inputs[0]].shape, b = graph.tensors[node.inputs[1]].shape
                let gateShape = [1, 1, 1, channels]
                guard batch == 1, case .add(let addActivation) = second.operation, addActivation == .none, second.inputs.count == 2,
                      second.outputs.count == 1 else { continue }
                let (x, gate) = a == shape && b == gateShape ? (node.inputs[0], node.inputs[1])
                              : b == shape && a == gateShape ? (node.inputs[1], node.inputs[0]) : (-1, -1)
                guard x >= 0, let skip = second.inputs.first(where: { $0 != node.outputs[0] }), second.inputs.contains(node.outputs[0]),
                      isActivation(skip), graph.tensors[skip].shape == shape, graph.tensors[second.outputs[0]].shape == shape else { continue }
                groups.append(ElementwiseGroup(kind: .scaleAdd(gate: gate, skip: skip), first: index, second: next, input: x,
                                               output: second.outputs[0], batch: batch, pixels: pixels, channels: channels))
            case .add(let activation) where activation == .none:
                let pooled = second.outputs.count == 1 ? graph.tensors[second.outputs[0]].shape : []
                guard graph.tensors[node.inputs[0]].shape == shape, graph.tensors[node.inputs[1]].shape == shape,
                      pooled == [batch, 1, 1, channels] || pooled == [batch, channels] else { continue }
                switch second.operation {
                case .averagePool2d(let p) where p.activation == .none && p.filterH == shape[1] && p.filterW == shape[2]
                        && p.padding == .valid && pooled == [batch, 1, 1, channels]:
                    break
                case .mean(let axes, _) where Set(axes.map { $0 < 0 ? $0 + 4 : $0 }) == [1, 2]:
                    break
                default:
                    continue
                }
                groups.append(ElementwiseGroup(kind: .addMean(other: node.inputs[1]), first: index, second: next, input: node.inputs[0],
                                               output: second.outputs[0], batch: batch, pixels: pixels, channels: channels))
            default:
                continue
            }
        }
        return groups
    }
}

/// An ``ElementwiseGroup`` bound to the predictor's buffers.
final class ElementwiseKernel {
    let group: ElementwiseGroup
    private let input: UnsafeMutablePointer<Float>
    private let other: UnsafeMutablePointer<Float>
    private let gate: UnsafeMutablePointer<Float>?
    private let output: UnsafeMutablePointer<Float>

    init(_ group: ElementwiseGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer]) throws {
        self.group = group
        let label = group.nodes.map { graph.nodes[$0].operation.name }.joined(separator: "+") + " ('\(graph.nodes[group.first].name)')"
        let bind = KernelBindings(graph: graph, buffers: buffers, constants: [:], label: label)
        input = try bind.buffer(group.input)
        output = try bind.buffer(group.output)
        switch group.kind {
        case .scaleAdd(let g, let skip):
            gate = try bind.buffer(g)
            other = try bind.buffer(skip)
        case .addMean(let o):
            gate = nil
            other = try bind.buffer(o)
        }
    }

    func run() {
        let (pixels, channels) = (group.pixels, group.channels)
        switch group.kind {
        case .scaleAdd:
            guard let gate else { return }
            fg_scale_add(input, gate, other, pixels, channels, output, 1)
        case .addMean:
            for image in 0..<group.batch {
                let offset = image * pixels * channels
                fg_add_mean(input + offset, other + offset, pixels, channels, output + image * channels, 1)
            }
        }
    }
}

extension ElementwiseGroup: OwnKernelGroup {
    var boundaryTensors: [Int] {
        switch kind {
        case .scaleAdd(let gate, let skip): return [input, gate, skip, output]
        case .addMean(let other): return [input, other, output]
        }
    }
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel {
        try ElementwiseKernel(self, graph: graph, buffers: buffers)
    }
}

extension ElementwiseKernel: OwnKernel {
    var nodeIndices: [Int] { group.nodes }
}
