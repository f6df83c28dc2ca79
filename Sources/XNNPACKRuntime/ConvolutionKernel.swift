import CFrameGraphKernels
import NeuralGraph

/// A ``ConvolutionGroup`` bound to the predictor's buffers: weights packed once into 16-channel
/// panels, then one call of `fg_conv` per prediction.
final class ConvolutionKernel {
    let group: ConvolutionGroup
    private let packed: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    private var geometry: fg_conv_geometry
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private var epilogue: fg_pointwise_epilogue

    init(_ group: ConvolutionGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage]) throws {
        self.group = group
        let node = graph.nodes[group.convolution]
        let label = "CONV_2D ('\(node.name)')"
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
        input = try buffer(group.input)
        output = try buffer(group.output)
        let k = Int32(group.windowSize), n = Int32(group.outputChannels)
        geometry = group.geometry
        scratch = .allocate(capacity: max(1, fg_conv_scratch_count(&geometry)))
        let count = fg_pointwise_packed_count(k, n)
        packed = .allocate(capacity: count)
        let weights = try constant(node.inputs[1])
        let bias = node.inputs.count > 2 && node.inputs[2] >= 0 ? try constant(node.inputs[2]) : nil
        fg_pointwise_pack(weights, bias, k, n, packed)
        epilogue = fg_pointwise_epilogue(min1: group.convolutionRange.0, max1: group.convolutionRange.1,
                                         residual: nil, residual_stride: 0, residual_channels: 0,
                                         min2: group.additionRange.0, max2: group.additionRange.1,
                                         prelu_slopes: nil, hard_swish: group.hardSwish ? 1 : 0)
        if let r = group.residual {
            epilogue.residual = UnsafePointer(try buffer(r))
            epilogue.residual_stride = group.residualChannels
            epilogue.residual_channels = Int32(group.residualChannels)
        }
        if let s = group.preluSlopes { epilogue.prelu_slopes = UnsafePointer(try constant(s)) }
    }

    deinit {
        packed.deallocate()
        scratch.deallocate()
    }

    func run() {
        fg_conv(input, &geometry, packed, Int32(group.outputChannels), output, &epilogue, scratch, 1)
    }
}
