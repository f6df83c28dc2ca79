import CXNNPACK
import NeuralGraph

/// A run of graph operations compiled into one XNNPACK subgraph runtime. Tensors that cross the
/// stage's border are external values bound once to buffers the predictor owns; constants point into
/// storage the predictor keeps alive; everything else is internal to XNNPACK.
final class XNNPACKStage {
    private var runtime: xnn_runtime_t?
    let nodeIndices: [Int]
    /// Weights this stage re-laid out (XNNPACK reads them when the runtime is created; kept for its life).
    private var ownedConstants: [ConstantStorage] = []

    /// Whether XNNPACK can run `node` (the rest run as native kernels).
    static func supports(_ node: NeuralNode, in graph: NeuralGraph) -> Bool {
        func isConstant(_ i: Int) -> Bool { graph.tensors[i].constant != nil }
        switch node.operation {
        case .conv2d(let p), .depthwiseConv2d(let p), .transposeConv2d(let p):
            return p.activation != .tanh && node.inputs.count >= 2 && node.inputs.dropFirst().allSatisfy(isConstant)
                && graph.tensors[node.inputs[0]].shape.count == 4
        case .fullyConnected(let a):
            return a != .tanh && node.inputs.dropFirst().allSatisfy(isConstant)
        case .add(let a), .subtract(let a), .multiply(let a), .divide(let a):
            return a != .tanh && node.inputs.allSatisfy { graph.tensors[$0].shape.count <= 4 }
        case .minimum, .maximum, .relu, .relu6, .reluN1To1, .clamp, .hardSwish, .logistic, .leakyRelu:
            return true
        case .prelu:
            return node.inputs.count == 2 && isConstant(node.inputs[1]) && graph.tensors[node.inputs[0]].shape.count == 4
        case .averagePool2d(let p), .maxPool2d(let p):
            return p.activation != .tanh
        case .mean(let axes, _):
            let shape = graph.tensors[node.inputs[0]].shape
            let rank = shape.count
            let out = graph.tensors[node.outputs[0]].shape
            // Over height and width: kept dimensions ([N, 1, 1, C]) or not ([N, C], pooled then reshaped).
            return rank == 4 && Set(axes.map { $0 < 0 ? $0 + rank : $0 }) == [1, 2]
                && (out == [shape[0], 1, 1, shape[3]] || out == [shape[0], shape[3]])
        case .pad(_, _), .reshape:
            return true
        case .resizeBilinear(let alignCorners, let halfPixel):
            return !(alignCorners && halfPixel) && graph.tensors[node.inputs[0]].shape.count == 4
        case .softmax(let beta):
            return beta == 1
        case .depthToSpace(let b):
            return b >= 1 && graph.tensors[node.inputs[0]].shape.count == 4
        case .quantize, .dequantize:
            return true
        case .tanh, .hardSigmoid, .concatenation, .resizeNearest, .power, .roundToFloat16, .detectionPostProcess:
            return false
        }
    }

    /// Whether XNNPACK defines `node` with its tensors' types (quantized ones included): checked by
    /// defining it in a scratch subgraph, so that what this XNNPACK build accepts decides, not a table.
    static func definable(_ node: NeuralNode, in graph: NeuralGraph, constants: [Int: ConstantStorage]) -> Bool {
        definitionProblem(node, in: graph, constants: constants) == nil
    }

    /// Why XNNPACK cannot define `node` with its tensors' types (nil when it can): the operation is
    /// not one of XNNPACK's, or XNNPACK refused the definition (its status and the value or node).
    static func definitionProblem(_ node: NeuralNode, in graph: NeuralGraph, constants: [Int: ConstantStorage]) -> String? {
        guard supports(node, in: graph) else { return "not an XNNPACK operation with these settings" }
        if let problem = quantizedScaleProblem(node, in: graph) { return problem }
        _ = XNNPACKLibrary.initialized
        var subgraph: xnn_subgraph_t?
        guard xnn_create_subgraph(0, 0, &subgraph) == xnn_status_success else { return "XNNPACK could not create a subgraph" }
        defer { xnn_delete_subgraph(subgraph) }
        var ids: [Int: UInt32] = [:]
        func value(_ tensor: Int, _ shape: [Int]?) throws -> UInt32 {
            if shape == nil, let id = ids[tensor] { return id }
            let id = try defineValue(graph.tensors[tensor], shape: shape, data: constants[tensor].map { UnsafeRawPointer($0.bytes) },
                                     external: XNN_INVALID_VALUE_ID, flags: 0, subgraph: subgraph)
            if shape == nil { ids[tensor] = id }
            return id
        }
        do {
            try define(node, index: 0, graph: graph, subgraph: subgraph, value: value)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Where a quantized operation's scales fall outside what this XNNPACK's integer kernels take
    /// (it asserts instead of refusing them when it creates the operator): a convolution's or fully
    /// connected layer's input × weight / output scale in [2⁻³², 256), an addition's input / output
    /// scales in [2⁻¹⁰, 2⁸), a multiplication's product / output scale in [2⁻¹⁶, 2⁸), a mean's or
    /// average pooling's input / (output × window) scale in [2⁻³², 256). Nil when they fit, or when
    /// the operation is not quantized.
    static func quantizedScaleProblem(_ node: NeuralNode, in graph: NeuralGraph) -> String? {
        func q(_ k: Int, outputs: Bool = false) -> Quantization? {
            let list = outputs ? node.outputs : node.inputs
            return k < list.count && list[k] >= 0 ? graph.tensors[list[k]].quantization : nil
        }
        guard let y = q(0, outputs: true), let x = q(0) else { return nil }
        func within(_ value: Float, _ low: Float, _ high: Float, _ what: String) -> String? {
            value >= low && value < high ? nil : "\(what) \(value) is outside this XNNPACK's integer range [\(low), \(high))"
        }
        switch node.operation {
        case .conv2d, .depthwiseConv2d, .transposeConv2d, .fullyConnected:
            guard let w = q(1) else { return nil }
            for s in w.scales {
                if let p = within(x.scale * s / y.scale, 0x1p-32, 256, "requantization scale") { return p }
            }
            return nil
        case .add, .subtract:
            guard let b = q(1) else { return nil }
            return within(x.scale / y.scale, 0x1p-10, 0x1p8, "input / output scale") ?? within(b.scale / y.scale, 0x1p-10, 0x1p8, "input / output scale")
        case .multiply:
            guard let b = q(1) else { return nil }
            return within(x.scale * b.scale / y.scale, 0x1p-16, 0x1p8, "product / output scale")
        case .mean:
            let shape = graph.tensors[node.inputs[0]].shape
            let window = shape.count == 4 ? Float(shape[1] * shape[2]) : 1
            return within(x.scale / (y.scale * window), 0x1p-32, 256, "input / (output × window) scale")
        case .averagePool2d(let p):
            return within(x.scale / (y.scale * Float(p.filterH * p.filterW)), 0x1p-32, 256, "input / (output × window) scale")
        default:
            return nil
        }
    }

    /// Defines one value: float32, or for a quantized tensor its integer type with its scale(s)
    /// and zero point (per-channel weights `qcint8`, biases `qint32`/`qcint32`).
    static func defineValue(_ t: TensorValue, shape override: [Int]?, data: UnsafeRawPointer?, external: UInt32, flags: UInt32,
                            subgraph: xnn_subgraph_t?) throws -> UInt32 {
        let dims = (override ?? t.shape).map { Int($0) }
        var id: UInt32 = XNN_INVALID_VALUE_ID
        let label = "define tensor '\(t.name)' \(t.shape)"
        guard let q = t.quantization else {
            try dims.withUnsafeBufferPointer { d in
                try xnnCheck(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, d.count, d.baseAddress, data, external, flags, &id), label)
            }
            return id
        }
        if q.scales.count > 1 || (q.axis != nil && data != nil && t.elementType != .uint8) {
            // A shape given for the definition keeps the channels first (weights seen as 1×1 filters).
            guard override == nil || (q.axis ?? 0) == 0 && dims.first == t.shape.first else {
                throw ModelError.runtime(operation: label, reason: "per-channel parameters on a reshaped tensor")
            }
            let type = t.elementType == .int32 ? xnn_datatype_qcint32 : xnn_datatype_qcint8
            let scales = q.scales.count > 1 ? q.scales : [Float](repeating: q.scale, count: dims[q.axis ?? 0])
            try dims.withUnsafeBufferPointer { d in
                try scales.withUnsafeBufferPointer { s in
                    try xnnCheck(xnn_define_channelwise_quantized_tensor_value(subgraph, type, s.baseAddress, d.count, q.axis ?? 0, d.baseAddress,
                                                                               data, external, flags, &id), label)
                }
            }
            return id
        }
        let type: xnn_datatype
        switch t.elementType {
        case .int8: type = xnn_datatype_qint8
        case .uint8: type = xnn_datatype_quint8
        case .int32: type = xnn_datatype_qint32
        default: throw ModelError.runtime(operation: label, reason: "a quantized \(t.elementType) tensor")
        }
        try dims.withUnsafeBufferPointer { d in
            try xnnCheck(xnn_define_quantized_tensor_value(subgraph, type, q.zeroPoint, q.scale, d.count, d.baseAddress, data, external, flags, &id), label)
        }
        return id
    }

    /// `realNumbers`: quantized tensors are defined as float32 (real numbers; `constants` then holds
    /// quantized weights dequantized): for a quantized operation this XNNPACK cannot run in integers,
    /// whose outputs the plan rounds to their quantized types afterwards.
    init(graph: NeuralGraph, nodeIndices: [Int], externals: [Int: UInt32], buffers: [Int: TensorBuffer],
         constants: [Int: ConstantStorage], threadpool: pthreadpool_t?, realNumbers: Bool = false) throws {
        self.nodeIndices = nodeIndices
        _ = XNNPACKLibrary.initialized
        var subgraph: xnn_subgraph_t?
        try xnnCheck(xnn_create_subgraph(UInt32(externals.count), 0, &subgraph), "create subgraph")
        defer { xnn_delete_subgraph(subgraph) }

        // Which externals this stage reads and which it writes.
        var produced: Set<Int> = []
        for i in nodeIndices { produced.formUnion(graph.nodes[i].outputs) }
        var ids: [Int: UInt32] = [:]

        /// Quantized tensors that cross the stage's border: inside they are quantized, outside (the
        /// predictor's buffers) real numbers; converts join the two. Those this stage writes are
        /// converted out after its operations.
        var convertsOut: [(inside: UInt32, outside: UInt32, name: String)] = []
        func value(_ tensor: Int, shape override: [Int]? = nil) throws -> UInt32 {
            if override == nil, let id = ids[tensor] { return id }
            var t = graph.tensors[tensor]
            if realNumbers { t.quantization = nil }
            var data: UnsafeRawPointer?
            var external: UInt32 = XNN_INVALID_VALUE_ID
            var flags: UInt32 = 0
            if let c = constants[tensor] {
                data = UnsafeRawPointer(c.bytes)
            } else if let e = externals[tensor] {
                external = e
                flags = produced.contains(tensor) ? UInt32(XNN_VALUE_FLAG_EXTERNAL_OUTPUT) : UInt32(XNN_VALUE_FLAG_EXTERNAL_INPUT)
            }
            if t.isQuantized, external != XNN_INVALID_VALUE_ID, override == nil {
                var real = t
                real.quantization = nil
                let outside = try Self.defineValue(real, shape: nil, data: nil, external: external, flags: flags, subgraph: subgraph)
                let inside = try Self.defineValue(t, shape: nil, data: nil, external: XNN_INVALID_VALUE_ID, flags: 0, subgraph: subgraph)
                if produced.contains(tensor) {
                    convertsOut.append((inside, outside, t.name))
                } else {
                    try xnnCheck(xnn_define_convert(subgraph, outside, inside, 0), "quantize '\(t.name)' on entry")
                }
                ids[tensor] = inside
                return inside
            }
            let id = try Self.defineValue(t, shape: override, data: data, external: external, flags: flags, subgraph: subgraph)
            if override == nil { ids[tensor] = id }
            return id
        }

        var owned: [ConstantStorage] = []
        for index in nodeIndices {
            let node = graph.nodes[index]
            if try Self.defineUpsamplingConvolution(node, graph: graph, constants: constants, subgraph: subgraph,
                                                    value: value, owned: &owned) {
                continue
            }
            try Self.define(node, index: index, graph: graph, subgraph: subgraph, value: value)
        }
        for c in convertsOut { try xnnCheck(xnn_define_convert(subgraph, c.inside, c.outside, 0), "dequantize '\(c.name)' on exit") }
        ownedConstants = owned
        var rt: xnn_runtime_t?
        try xnnCheck(xnn_create_runtime_v2(subgraph, threadpool, 0, &rt), "create runtime for operations \(nodeIndices.first ?? 0)…\(nodeIndices.last ?? 0)")
        runtime = rt
        let bound = externals.compactMap { tensor, id -> xnn_external_value? in
            guard ids[tensor] != nil, let b = buffers[tensor] else { return nil }
            return xnn_external_value(id: id, data: UnsafeMutableRawPointer(b.pointer))
        }
        try bound.withUnsafeBufferPointer { try xnnCheck(xnn_setup_runtime(runtime, $0.count, $0.baseAddress), "set up runtime") }
    }

    deinit { xnn_delete_runtime(runtime) }

    func run() throws {
        try xnnCheck(xnn_invoke_runtime(runtime), "run operations \(nodeIndices.first ?? 0)…\(nodeIndices.last ?? 0)")
    }

    /// A transposed convolution whose kernel equals its stride and that has no padding (MediaPipe's
    /// final 2×2/2 upsampling layer) is a 1×1 convolution to O·k·k channels followed by depth-to-space:
    /// the same arithmetic, and much faster in XNNPACK than its deconvolution for few output channels.
    /// Returns false when `node` is not such a layer.
    private static func defineUpsamplingConvolution(_ node: NeuralNode, graph: NeuralGraph, constants: [Int: ConstantStorage],
                                                    subgraph: xnn_subgraph_t?, value: (Int, [Int]?) throws -> UInt32,
                                                    owned: inout [ConstantStorage]) throws -> Bool {
        guard case .transposeConv2d(let p) = node.operation, node.inputs.count >= 2,
              let weights = constants[node.inputs[1]] else { return false }
        if case .explicit(let top, let left, let bottom, let right) = p.padding, top != 0 || left != 0 || bottom != 0 || right != 0 { return false }
        let filter = graph.tensors[node.inputs[1]].shape  // [O, k, k, I]
        let inShape = graph.tensors[node.inputs[0]].shape, outShape = graph.tensors[node.outputs[0]].shape
        guard filter.count == 4, inShape.count == 4, outShape.count == 4, p.strideH == p.strideW,
              filter[1] == p.strideH, filter[2] == p.strideW, p.strideH > 1,
              outShape[1] == inShape[1] * p.strideH, outShape[2] == inShape[2] * p.strideW, filter[3] == inShape[3] else { return false }
        let (o, k, i) = (filter[0], filter[1], filter[3])
        let w = weights.floats()
        var w1 = [Float](repeating: 0, count: o * k * k * i)
        for oc in 0..<o { for ky in 0..<k { for kx in 0..<k { for ic in 0..<i {
            w1[((ky * k + kx) * o + oc) * i + ic] = w[((oc * k + ky) * k + kx) * i + ic]
        } } } }
        let newWeights = ConstantStorage(floats: w1)
        owned.append(newWeights)
        var biasID = XNN_INVALID_VALUE_ID
        if node.inputs.count > 2, node.inputs[2] >= 0, let b = constants[node.inputs[2]] {
            let bias = b.floats()
            let newBias = ConstantStorage(floats: (0..<(k * k)).flatMap { _ in bias })
            owned.append(newBias)
            var id: UInt32 = 0
            try xnnCheck(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 1, [o * k * k], newBias.bytes, XNN_INVALID_VALUE_ID, 0, &id),
                         "define re-laid-out bias")
            biasID = id
        }
        var weightID: UInt32 = 0, middleID: UInt32 = 0
        try xnnCheck(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 4, [o * k * k, 1, 1, i], newWeights.bytes, XNN_INVALID_VALUE_ID, 0, &weightID),
                     "define re-laid-out weights")
        try xnnCheck(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 4, [inShape[0], inShape[1], inShape[2], o * k * k], nil,
                                             XNN_INVALID_VALUE_ID, 0, &middleID), "define upsampling intermediate")
        let (lo, hi) = p.activation.range
        try xnnCheck(xnn_define_convolution_2d(subgraph, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, i, o * k * k, lo, hi,
                                               try value(node.inputs[0], nil), weightID, biasID, middleID, 0),
                     "TRANSPOSE_CONV ('\(node.name)') as 1×1 convolution")
        try xnnCheck(xnn_define_depth_to_space(subgraph, middleID, try value(node.outputs[0], nil), try u32(k), 0),
                     "TRANSPOSE_CONV ('\(node.name)') as depth-to-space")
        return true
    }

    // swiftlint:disable:next function_body_length cyclomatic_complexity
    private static func define(_ node: NeuralNode, index: Int, graph: NeuralGraph, subgraph: xnn_subgraph_t?,
                               value: (Int, [Int]?) throws -> UInt32) throws {
        let label = "operation \(index) \(node.operation.name) ('\(node.name)')"
        func v(_ t: Int) throws -> UInt32 { try value(t, nil) }
        let input = node.inputs[0], output = node.outputs[0]
        let inShape = graph.tensors[input].shape, outShape = graph.tensors[output].shape
        func bias(_ i: Int) throws -> UInt32 {
            node.inputs.count > i && node.inputs[i] >= 0 ? try v(node.inputs[i]) : XNN_INVALID_VALUE_ID
        }
        var status = xnn_status_success
        switch node.operation {
        case .conv2d(let p):
            let filter = graph.tensors[node.inputs[1]].shape  // [O, H, W, I]
            let (pt, pb) = p.padding.amounts(input: inShape[1], output: outShape[1], kernel: filter[1], stride: p.strideH, dilation: p.dilationH, vertical: true)
            let (pl, pr) = p.padding.amounts(input: inShape[2], output: outShape[2], kernel: filter[2], stride: p.strideW, dilation: p.dilationW, vertical: false)
            let groups = max(1, inShape[3] / max(1, filter[3]))
            let (lo, hi) = p.activation.range
            status = xnn_define_convolution_2d(subgraph, try u32(pt), try u32(pr), try u32(pb), try u32(pl), try u32(filter[1]), try u32(filter[2]),
                                               try u32(p.strideH), try u32(p.strideW), try u32(p.dilationH), try u32(p.dilationW),
                                               try u32(groups), filter[3], filter[0] / groups, lo, hi,
                                               try v(input), try v(node.inputs[1]), try bias(2), try v(output), 0)
        case .depthwiseConv2d(let p):
            let filter = graph.tensors[node.inputs[1]].shape  // [1, H, W, C × multiplier]
            let (pt, pb) = p.padding.amounts(input: inShape[1], output: outShape[1], kernel: filter[1], stride: p.strideH, dilation: p.dilationH, vertical: true)
            let (pl, pr) = p.padding.amounts(input: inShape[2], output: outShape[2], kernel: filter[2], stride: p.strideW, dilation: p.dilationW, vertical: false)
            let (lo, hi) = p.activation.range
            status = xnn_define_depthwise_convolution_2d(subgraph, try u32(pt), try u32(pr), try u32(pb), try u32(pl), try u32(filter[1]), try u32(filter[2]),
                                                         try u32(p.strideH), try u32(p.strideW), try u32(p.dilationH), try u32(p.dilationW),
                                                         try u32(max(1, filter[3] / max(1, inShape[3]))), inShape[3], lo, hi,
                                                         try v(input), try v(node.inputs[1]), try bias(2), try v(output), 0)
        case .transposeConv2d(let p):
            let filter = graph.tensors[node.inputs[1]].shape  // [O, H, W, I]
            func axis(_ i: Int, _ o: Int, _ k: Int, _ s: Int, explicit: (Int, Int)?) -> (Int, Int, Int) {
                let full = (i - 1) * s + k
                if let (before, after) = explicit {
                    // Explicit padding (ONNX pads, MetalTensor's MPS offsets): what is left is the adjustment.
                    return (before, after, max(0, o - (full - before - after)))
                }
                let total = max(0, full - o)
                let adjustment = o - (full - total)
                return (total / 2, total - total / 2, max(0, adjustment))
            }
            var rows: (Int, Int)?, columns: (Int, Int)?
            if case .explicit(let top, let left, let bottom, let right) = p.padding { (rows, columns) = ((top, bottom), (left, right)) }
            let (pt, pb, ah) = axis(inShape[1], outShape[1], filter[1], p.strideH, explicit: rows)
            let (pl, pr, aw) = axis(inShape[2], outShape[2], filter[2], p.strideW, explicit: columns)
            let (lo, hi) = p.activation.range
            status = xnn_define_deconvolution_2d(subgraph, try u32(pt), try u32(pr), try u32(pb), try u32(pl), try u32(ah), try u32(aw),
                                                 try u32(filter[1]), try u32(filter[2]), try u32(p.strideH), try u32(p.strideW), 1, 1,
                                                 1, filter[3], filter[0], lo, hi,
                                                 try v(input), try v(node.inputs[1]), try bias(2), try v(output), 0)
        case .fullyConnected(let a) where graph.tensors[node.inputs[1]].quantization?.isPerChannel == true:
            // This XNNPACK's fully connected layer takes per-channel int8 weights only as a 1×1
            // convolution: [N, I] → [N, 1, 1, I] → convolution → [N, 1, 1, O] → [N, O].
            let weights = graph.tensors[node.inputs[1]].shape
            guard weights.count == 2, let inputs = inShape.last, inputs == weights[1] else {
                throw ModelError.runtime(operation: label, reason: "weights \(weights) do not fit input \(inShape)")
            }
            let rows = inShape.reduce(1, *) / max(1, inputs)
            func view(_ tensor: Int, _ shape: [Int]) throws -> UInt32 {
                var t = graph.tensors[tensor]
                t.shape = shape
                t.constant = nil
                return try defineValue(t, shape: nil, data: nil, external: XNN_INVALID_VALUE_ID, flags: 0, subgraph: subgraph)
            }
            let input4 = try view(input, [1, 1, rows, inputs]), output4 = try view(output, [1, 1, rows, weights[0]])
            try xnnCheck(withUnsafeTemporaryAllocation(of: Int.self, capacity: 4) { dims -> xnn_status in
                for (k, d) in [1, 1, rows, inputs].enumerated() { dims[k] = d }
                return xnn_define_static_reshape(subgraph, 4, dims.baseAddress, try v(input), input4, 0)
            }, label + " as a 1×1 convolution (input)")
            let (lo, hi) = a.range
            try xnnCheck(xnn_define_convolution_2d(subgraph, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, inputs, weights[0], lo, hi, input4,
                                                   try value(node.inputs[1], [weights[0], 1, 1, inputs]), try bias(2), output4, 0),
                         label + " as a 1×1 convolution")
            let outputID = try v(output)
            status = outShape.withUnsafeBufferPointer { xnn_define_static_reshape(subgraph, $0.count, $0.baseAddress, output4, outputID, 0) }
        case .fullyConnected(let a):
            let (lo, hi) = a.range
            status = xnn_define_fully_connected(subgraph, lo, hi, try v(input), try v(node.inputs[1]), try bias(2), try v(output),
                                                UInt32(XNN_FLAG_TENSORFLOW_RESHAPE_2D))
        case .add(let a):
            let (lo, hi) = a.range
            status = xnn_define_add2(subgraph, lo, hi, try v(input), try v(node.inputs[1]), try v(output), 0)
        case .subtract(let a):
            let (lo, hi) = a.range
            status = xnn_define_subtract(subgraph, lo, hi, try v(input), try v(node.inputs[1]), try v(output), 0)
        case .multiply(let a):
            let (lo, hi) = a.range
            status = xnn_define_multiply2(subgraph, lo, hi, try v(input), try v(node.inputs[1]), try v(output), 0)
        case .divide(let a):
            let (lo, hi) = a.range
            status = xnn_define_divide(subgraph, lo, hi, try v(input), try v(node.inputs[1]), try v(output), 0)
        case .minimum:
            status = xnn_define_minimum2(subgraph, try v(input), try v(node.inputs[1]), try v(output), 0)
        case .maximum:
            status = xnn_define_maximum2(subgraph, try v(input), try v(node.inputs[1]), try v(output), 0)
        case .relu:
            status = xnn_define_clamp(subgraph, 0, .infinity, try v(input), try v(output), 0)
        case .relu6:
            status = xnn_define_clamp(subgraph, 0, 6, try v(input), try v(output), 0)
        case .reluN1To1:
            status = xnn_define_clamp(subgraph, -1, 1, try v(input), try v(output), 0)
        case .clamp(let lo, let hi):
            status = xnn_define_clamp(subgraph, lo, hi, try v(input), try v(output), 0)
        case .hardSwish:
            status = xnn_define_hardswish(subgraph, try v(input), try v(output), 0)
        case .logistic:
            status = xnn_define_sigmoid(subgraph, try v(input), try v(output), 0)
        case .leakyRelu(let alpha):
            status = xnn_define_leaky_relu(subgraph, alpha, try v(input), try v(output), 0)
        case .prelu:
            let channels = inShape[3]
            status = xnn_define_prelu(subgraph, try v(input), try value(node.inputs[1], [channels]), try v(output), 0)
        case .averagePool2d(let p), .maxPool2d(let p):
            let (pt, pb) = p.padding.amounts(input: inShape[1], output: outShape[1], kernel: p.filterH, stride: p.strideH, dilation: 1, vertical: true)
            let (pl, pr) = p.padding.amounts(input: inShape[2], output: outShape[2], kernel: p.filterW, stride: p.strideW, dilation: 1, vertical: false)
            let (lo, hi) = p.activation.range
            if case .averagePool2d = node.operation {
                status = xnn_define_average_pooling_2d(subgraph, try u32(pt), try u32(pr), try u32(pb), try u32(pl), try u32(p.filterH), try u32(p.filterW),
                                                       try u32(p.strideH), try u32(p.strideW), lo, hi, try v(input), try v(output), 0)
            } else {
                status = xnn_define_max_pooling_2d(subgraph, try u32(pt), try u32(pr), try u32(pb), try u32(pl), try u32(p.filterH), try u32(p.filterW),
                                                   try u32(p.strideH), try u32(p.strideW), 1, 1, lo, hi, try v(input), try v(output), 0)
            }
        case .mean:
            let pooled = [inShape[0], 1, 1, inShape[3]]
            if outShape == pooled {
                status = xnn_define_global_average_pooling_2d(subgraph, -.infinity, .infinity, try v(input), try v(output), 0)
            } else {
                // Without kept dimensions: pool into a [N, 1, 1, C] intermediate, then reshape to [N, C].
                var pooledTensor = graph.tensors[output]
                pooledTensor.shape = pooled
                pooledTensor.name += "/pooled"
                let middle = try defineValue(pooledTensor, shape: nil, data: nil, external: XNN_INVALID_VALUE_ID, flags: 0, subgraph: subgraph)
                try xnnCheck(xnn_define_global_average_pooling_2d(subgraph, -.infinity, .infinity, try v(input), middle, 0), label)
                status = xnn_define_static_reshape(subgraph, outShape.count, outShape, middle, try v(output), 0)
            }
        case .pad(let paddings, let padValue):
            var before = paddings.map { $0.0 }, after = paddings.map { $0.1 }
            while before.count < 4 { before.append(0); after.append(0) }
            status = xnn_define_static_constant_pad(subgraph, before, after, padValue, try v(input), try v(output), 0)
        case .reshape:
            let from = try v(input), to = try v(output)
            status = xnn_define_static_reshape(subgraph, outShape.count, outShape, from, to, 0)
        case .resizeBilinear(let alignCorners, let halfPixel):
            let flags: Int32 = alignCorners ? XNN_FLAG_ALIGN_CORNERS : (halfPixel ? 0 : XNN_FLAG_TENSORFLOW_LEGACY_MODE)
            status = xnn_define_static_resize_bilinear_2d(subgraph, outShape[1], outShape[2], try v(input), try v(output), UInt32(flags))
        case .softmax:
            status = xnn_define_softmax(subgraph, try v(input), try v(output), 0)
        case .depthToSpace(let b):
            status = xnn_define_depth_to_space(subgraph, try v(input), try v(output), try u32(b), 0)
        case .quantize, .dequantize:
            status = xnn_define_convert(subgraph, try v(input), try v(output), 0)
        case .tanh, .hardSigmoid, .concatenation, .resizeNearest, .power, .roundToFloat16, .detectionPostProcess:
            throw ModelError.runtime(operation: label, reason: "not an XNNPACK operation")
        }
        try xnnCheck(status, label)
    }
}

/// A size or count for XNNPACK's `uint32_t` parameters: negative or huge values (a crafted model)
/// become a typed error instead of a trap in the conversion.
private func u32(_ value: Int) throws -> UInt32 {
    guard value >= 0, value <= Int(UInt32.max) else {
        throw ModelError.runtime(operation: "XNNPACK parameter", reason: "value \(value) is out of range (0…\(UInt32.max))")
    }
    return UInt32(value)
}
