import CFrameGraphKernels
import CXNNPACK
import NeuralGraph

/// A transposed convolution whose kernel equals its stride and that has no padding (MediaPipe's
/// segmentation models end with a 2×2 / 2 one to a single channel), with a sigmoid after it when one
/// follows: FrameGraph's kernel (`fg_upsample_conv_part`) writes each input pixel's block of outputs
/// where it lies, the sigmoid applied on the way.
struct UpsamplingGroup {
    var convolution: Int
    /// The sigmoid (LOGISTIC) after it, if any.
    var sigmoid: Int?
    var input: Int
    var output: Int
    var geometry: fg_upsample_geometry

    var nodes: [Int] { [convolution] + (sigmoid.map { [$0] } ?? []) }
    var position: Int { sigmoid ?? convolution }

    /// The groups of `graph` (lowered for XNNPACK).
    static func groups(in graph: NeuralGraph, readers: GraphReaders) -> [UpsamplingGroup] {
        var groups: [UpsamplingGroup] = []
        for (index, node) in graph.nodes.enumerated() {
            guard case .transposeConv2d(let p) = node.operation, p.activation != .tanh, node.inputs.count >= 2, node.inputs[0] >= 0,
                  node.outputs.count == 1, graph.tensors[node.inputs[1]].constant != nil else { continue }
            if case .explicit(let top, let left, let bottom, let right) = p.padding, top != 0 || left != 0 || bottom != 0 || right != 0 { continue }
            let filter = graph.tensors[node.inputs[1]].shape  // [O, kh, kw, I]
            let inShape = graph.tensors[node.inputs[0]].shape, outShape = graph.tensors[node.outputs[0]].shape
            guard filter.count == 4, inShape.count == 4, outShape.count == 4, filter[1] == p.strideH, filter[2] == p.strideW,
                  p.strideH >= 1, p.strideW >= 1, filter[3] == inShape[3], outShape[0] == inShape[0], outShape[3] == filter[0],
                  outShape[1] == inShape[1] * p.strideH, outShape[2] == inShape[2] * p.strideW,
                  filter[0] * filter[1] * filter[2] <= Int(FG_UPSAMPLE_MAX_OUTPUTS),
                  (inShape + outShape).allSatisfy({ $0 > 0 && $0 < Int(Int32.max) }) else { continue }
            if node.inputs.count > 2, node.inputs[2] >= 0 {
                guard let bias = graph.tensors[node.inputs[2]].constant, bias.elementCount == filter[0] else { continue }
            }
            let (lo, hi) = p.activation.range
            var group = UpsamplingGroup(convolution: index, sigmoid: nil, input: node.inputs[0], output: node.outputs[0],
                                        geometry: fg_upsample_geometry(batch: Int32(inShape[0]), in_h: Int32(inShape[1]), in_w: Int32(inShape[2]),
                                                                       in_c: Int32(inShape[3]), out_c: Int32(filter[0]),
                                                                       kernel_h: Int32(filter[1]), kernel_w: Int32(filter[2]),
                                                                       min: lo, max: hi, sigmoid: 0))
            if let c = readers.onlyConsumer(node.outputs[0]), case .logistic = graph.nodes[c].operation,
               graph.nodes[c].outputs.count == 1 {
                group.sigmoid = c
                group.output = graph.nodes[c].outputs[0]
                group.geometry.sigmoid = 1
            }
            groups.append(group)
        }
        return groups
    }
}

/// An ``UpsamplingGroup`` bound to the predictor's buffers: weights packed once, then one call of the
/// kernel per prediction (or one part of the input pixels per thread).
final class UpsamplingKernel {
    let group: UpsamplingGroup
    private let packed: UnsafeMutablePointer<Float>
    private let geometry: UnsafeMutablePointer<fg_upsample_geometry>
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private let parts: KernelParts
    private let pixelsPerPart: Int

    init(_ group: UpsamplingGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
         threadpool: pthreadpool_t?) throws {
        self.group = group
        let node = graph.nodes[group.convolution]
        let bind = KernelBindings(graph: graph, buffers: buffers, constants: constants, label: "TRANSPOSE_CONV ('\(node.name)')")
        input = try bind.buffer(group.input)
        output = try bind.buffer(group.output)
        let weights = try bind.constant(node.inputs[1])
        let bias = try bind.bias(of: node)
        let g = group.geometry
        let outputsPerPixel = Int(g.out_c * g.kernel_h * g.kernel_w)
        // Nothing below throws: what is allocated is freed by deinit.
        geometry = .allocate(capacity: 1)
        geometry.initialize(to: g)
        packed = .allocate(capacity: fg_upsample_conv_packed_count(g.in_c, Int32(outputsPerPixel)))
        fg_upsample_conv_pack(weights, bias, g.out_c, g.kernel_h, g.kernel_w, g.in_c, packed)
        let pixels = fg_upsample_conv_pixels(geometry)
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        // Split only when every part gets at least 1024 input pixels.
        parts = KernelParts(count: min(threads, pixels / 1024), threadpool: threadpool)
        pixelsPerPart = (pixels + parts.count - 1) / parts.count
        parts.bind { [unowned self] in
            let first = $0 * self.pixelsPerPart
            fg_upsample_conv_part(self.input, self.geometry, self.packed, self.output, first, first + self.pixelsPerPart, 1)
        }
    }

    deinit {
        packed.deallocate()
        geometry.deallocate()
    }

    func run() { parts.run() }
}
