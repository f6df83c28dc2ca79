import CFrameGraphKernels
import NeuralGraph

/// A convolution and the operations after it that run in the same pass of FrameGraph's own kernels
/// (`fg_conv` for dense convolutions, `fg_dwconv_part` for depthwise ones): the convolution's bias and clamp, an addition of a residual (which may be a zero
/// channel pad of a smaller tensor), the addition's clamp, and a PReLU or hard-swish. MobileNet-style
/// blocks (MediaPipe's face and selfie models, EfficientNet-Lite, the colorizer) end this way.
struct ConvolutionGroup {
    /// Which kernel runs the convolution.
    enum Kind {
        /// An ungrouped convolution: a matrix product over windows (`fg_conv`).
        case dense
        /// A depthwise convolution with multiplier 1: one filter per channel (`fg_dwconv_part`).
        case depthwise
    }
    var kind: Kind = .dense
    /// The convolution node.
    var convolution: Int
    /// Nodes whose work the group does (the addition, its channel pad, the PReLU or hard-swish).
    var absorbed: [Int] = []
    /// The graph position the group runs at: its last node (every input exists by then).
    var position: Int { ([convolution] + absorbed).max() ?? convolution }
    /// Every node of the group.
    var nodes: [Int] { [convolution] + absorbed }
    var input: Int
    var output: Int
    /// Where the convolution's windows lie (input and output sizes, kernel, strides, padding).
    var geometry: fg_conv_geometry
    /// Output channels.
    var outputChannels: Int
    var convolutionRange: (Float, Float) = (-.infinity, .infinity)
    var residual: Int?
    var residualChannels = 0
    var additionRange: (Float, Float) = (-.infinity, .infinity)
    var preluSlopes: Int?
    var hardSwish = false
    /// Runs in 8-bit integers (a dense convolution: `fg_qconv_part` for 1×1, else `fg_qconv_windows_part`).
    var int8 = false
    /// Runs with bfloat16 products (a dense convolution: `fg_bconv_part` for 1×1, else
    /// `fg_bconv_windows_part`; ``Predictor/Precision/bfloat16``, on the convolutions ``paysInInt8`` picks).
    var bfloat16 = false
    /// A depthwise convolution that writes its output rounded to bfloat16 (`fg_dwconv_part_bf16`)
    /// for the 1×1 convolution with bfloat16 products that alone reads it (``readsBFloat16``):
    /// half the bytes, and no pass that rounds them (``ConvolutionFusion/bfloat16HandOffs(in:readers:)``).
    var writesBFloat16 = false
    /// A 1×1 convolution with bfloat16 products whose input rows are already bfloat16
    /// (`fg_bconv_part_rounded`), written by the depthwise convolution before it.
    var readsBFloat16 = false

    /// Whether ``Predictor/Precision/int8`` runs it in 8-bit integers: a dense convolution with at
    /// least `int8MinimumWeights` weights per window position (input × output channels). Smaller ones
    /// gain nothing and lose exactness: 1×1 convolutions of 16 → 16 channels over 128×128 pixels (the
    /// selfie models) are bound by moving their float rows in and out, not by their multiply-adds,
    /// and an RGB image's first layer (3 → 16 channels, 3×3) ran at 0.45 ms in int8 against
    /// 0.21 ms in float: copying and quantising its windows costs more than its products.
    /// Nor do convolutions of fewer than `int8MinimumProducts` multiply-adds per window position (a
    /// squeeze-and-excite block's 1×1 layers over one pixel): they cost microseconds, and their error
    /// scales whole channels. (EfficientNet-Lite0's 7×7 layers of hundreds of channels do gain.)
    var paysInInt8: Bool {
        let weights = Int(geometry.in_c) * outputChannels
        return kind == .dense && weights >= Self.int8MinimumWeights
            && Int(geometry.batch) * Int(geometry.out_h) * Int(geometry.out_w) * weights >= Self.int8MinimumProducts
    }
    static let int8MinimumProducts = 65536
    static let int8MinimumWeights = 1024

    /// A dense 1×1 convolution moved by 1 without padding: its input rows are the matrix rows.
    var isPointwise: Bool {
        let g = geometry
        return kind == .dense && g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0
            && g.pad_left == 0 && g.out_h == g.in_h && g.out_w == g.in_w
    }

    /// Values each output pixel's window holds (kernel height × width × input channels; per channel
    /// for a depthwise convolution).
    var windowSize: Int {
        Int(geometry.kernel_h) * Int(geometry.kernel_w) * (kind == .depthwise ? 1 : Int(geometry.in_c))
    }
}

/// Finds the convolutions of a graph that FrameGraph's own kernel runs, with what it can fuse.
enum ConvolutionFusion {
    /// `groups` with each depthwise convolution whose output only a 1×1 convolution with bfloat16
    /// products reads handing that output over in bfloat16 (``ConvolutionGroup/writesBFloat16``,
    /// ``ConvolutionGroup/readsBFloat16``): the values the 1×1 convolution multiplies are those it
    /// would round itself, bit for bit. Only where this processor runs both kernels' AVX-512 BF16
    /// builds (`fg_dwconv_bf16_supported`), and the 1×1 convolution has an even number of inputs.
    static func bfloat16HandOffs(in groups: [any OwnKernelGroup], readers: GraphReaders) -> [any OwnKernelGroup] {
        guard fg_bconv_has_simd() != 0 else { return groups }
        var readerOf: [Int: Int] = [:]
        for (i, g) in groups.enumerated() {
            if let p = g as? ConvolutionGroup, p.bfloat16, !p.int8, p.isPointwise, p.geometry.in_c % 2 == 0 { readerOf[p.input] = i }
        }
        var result = groups
        for (i, g) in groups.enumerated() {
            guard var d = g as? ConvolutionGroup, d.kind == .depthwise, let j = readerOf[d.output], var p = result[j] as? ConvolutionGroup,
                  readers.onlyConsumer(d.output) == p.convolution, p.residual != d.output,
                  withUnsafePointer(to: d.geometry, { fg_dwconv_bf16_supported($0) }) != 0 else { continue }
            d.writesBFloat16 = true
            p.readsBFloat16 = true
            result[i] = d
            result[j] = p
        }
        return result
    }

    /// Windows larger than this (values per output pixel) stay with XNNPACK: the kernel copies six
    /// windows at a time, and its weights panel should stay in the core's caches.
    static let largestWindow = 8192

    /// Groups of `graph` (lowered for XNNPACK). `fuse` = false keeps every group to its convolution
    /// alone (for timing operations one by one).
    static func groups(in graph: NeuralGraph, readers: GraphReaders, fuse: Bool) -> [ConvolutionGroup] {
        var groups: [ConvolutionGroup] = []
        for (index, node) in graph.nodes.enumerated() {
            guard var group = convolution(node, index: index, in: graph) else { continue }
            if fuse { extend(&group, graph: graph, readers: readers) }
            groups.append(group)
        }
        return groups
    }

    /// The group of an ungrouped 2-D convolution with constant weights (and bias) whose sizes the
    /// kernel takes.
    private static func convolution(_ node: NeuralNode, index: Int, in graph: NeuralGraph) -> ConvolutionGroup? {
        let p: ConvolutionParameters, kind: ConvolutionGroup.Kind
        switch node.operation {
        case .conv2d(let parameters): (p, kind) = (parameters, .dense)
        case .depthwiseConv2d(let parameters): (p, kind) = (parameters, .depthwise)
        default: return nil
        }
        guard p.activation != .tanh, node.inputs.count >= 2, node.inputs[0] >= 0, node.outputs.count == 1 else { return nil }
        let inShape = graph.tensors[node.inputs[0]].shape, outShape = graph.tensors[node.outputs[0]].shape
        // Dense: [O, H, W, I]; depthwise: [1, H, W, C] with one filter per channel (multiplier 1).
        let filter = graph.tensors[node.inputs[1]].shape
        guard inShape.count == 4, outShape.count == 4, filter.count == 4, inShape[0] == outShape[0],
              kind == .dense ? filter[3] == inShape[3] && filter[0] == outShape[3]
                             : filter[0] == 1 && filter[3] == inShape[3] && outShape[3] == inShape[3],
              graph.tensors[node.inputs[1]].constant != nil,
              [p.strideH, p.strideW, p.dilationH, p.dilationW].allSatisfy({ $0 >= 1 && $0 <= 64 }) else { return nil }
        if node.inputs.count > 2, node.inputs[2] >= 0 {
            guard let bias = graph.tensors[node.inputs[2]].constant, bias.elementCount == outShape[3] else { return nil }
        }
        let (top, _) = p.padding.amounts(input: inShape[1], output: outShape[1], kernel: filter[1], stride: p.strideH,
                                         dilation: p.dilationH, vertical: true)
        let (left, _) = p.padding.amounts(input: inShape[2], output: outShape[2], kernel: filter[2], stride: p.strideW,
                                          dilation: p.dilationW, vertical: false)
        let dims = inShape + outShape + [filter[1], filter[2], top, left]
        let window = filter[1] * filter[2] * (kind == .dense ? filter[3] : 1)
        guard dims.allSatisfy({ $0 >= 0 && $0 < Int(Int32.max) }), inShape.dropFirst().allSatisfy({ $0 > 0 }),
              outShape.allSatisfy({ $0 > 0 }), window > 0, window <= largestWindow,
              inShape[0] * outShape[1] * outShape[2] < Int(Int32.max) else { return nil }
        let geometry = fg_conv_geometry(batch: Int32(inShape[0]), in_h: Int32(inShape[1]), in_w: Int32(inShape[2]), in_c: Int32(inShape[3]),
                                        kernel_h: Int32(filter[1]), kernel_w: Int32(filter[2]),
                                        stride_h: Int32(p.strideH), stride_w: Int32(p.strideW),
                                        dilation_h: Int32(p.dilationH), dilation_w: Int32(p.dilationW),
                                        pad_top: Int32(top), pad_left: Int32(left), out_h: Int32(outShape[1]), out_w: Int32(outShape[2]))
        return ConvolutionGroup(kind: kind, convolution: index, input: node.inputs[0], output: node.outputs[0], geometry: geometry,
                                outputChannels: outShape[3], convolutionRange: p.activation.range)
    }

    /// Absorbs an addition of a same-shaped tensor (or of a zero channel pad of one) and then a PReLU
    /// or hard-swish, as long as each intermediate result has no other reader.
    private static func extend(_ group: inout ConvolutionGroup, graph: NeuralGraph, readers: GraphReaders) {
        let shape = graph.tensors[group.output].shape
        if let a = readers.onlyConsumer(group.output), case .add(let activation) = graph.nodes[a].operation, activation != .tanh {
            let add = graph.nodes[a]
            let others = add.inputs.filter { $0 != group.output }
            if add.inputs.count == 2, others.count == 1, let other = others.first, other >= 0,
               graph.tensors[add.outputs[0]].shape == shape, graph.tensors[other].constant == nil {
                if let padNode = channelPad(of: other, to: shape, graph: graph, readers: readers) {
                    group.residual = graph.nodes[padNode].inputs[0]
                    group.residualChannels = graph.tensors[graph.nodes[padNode].inputs[0]].shape[3]
                    group.absorbed.append(padNode)
                } else if graph.tensors[other].shape == shape {
                    group.residual = other
                    group.residualChannels = shape[3]
                }
                if group.residual != nil {
                    group.absorbed.append(a)
                    group.additionRange = activation.range
                    group.output = add.outputs[0]
                }
            }
        }
        guard let next = readers.onlyConsumer(group.output) else { return }
        let node = graph.nodes[next]
        switch node.operation {
        case .prelu where node.inputs.count == 2:
            guard let slopes = graph.tensors[node.inputs[1]].constant, slopes.elementCount == shape[3],
                  graph.tensors[node.inputs[1]].shape.dropLast().allSatisfy({ $0 == 1 }) else { return }
            group.preluSlopes = node.inputs[1]
        case .hardSwish:
            group.hardSwish = true
        default:
            return
        }
        group.absorbed.append(next)
        group.output = node.outputs[0]
    }

    /// The PAD node producing `tensor` when it pads only the channel axis at its end, with zeros,
    /// up to `shape`, and nothing else reads its result.
    private static func channelPad(of tensor: Int, to shape: [Int], graph: NeuralGraph, readers: GraphReaders) -> Int? {
        guard readers.onlyConsumer(tensor) != nil, let p = readers.producer(tensor),
              case .pad(let paddings, let value) = graph.nodes[p].operation, value == 0,
              paddings.count == 4, paddings[0] == (0, 0), paddings[1] == (0, 0), paddings[2] == (0, 0), paddings[3].0 == 0,
              let source = graph.nodes[p].inputs.first, source >= 0 else { return nil }
        let s = graph.tensors[source].shape
        guard s.count == 4, s[0] == shape[0], s[1] == shape[1], s[2] == shape[2], s[3] + paddings[3].1 == shape[3] else { return nil }
        return p
    }
}
