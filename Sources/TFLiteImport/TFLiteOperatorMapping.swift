import NeuralGraph

/// What one TFLite operator becomes.
enum MappedOperator {
    case node(NeuralNode)
    /// Folded away at import (DEQUANTIZE of a constant).
    case folded
    /// Not supported; the description is what the error lists ("GATHER", "PAD (non-constant paddings)").
    case unsupported(String)
}

extension TFLiteGraphBuilder {
    /// Maps operator `op` (number `index` in the subgraph) to an IR node.
    mutating func map(_ op: TFLiteOperator, index: Int) throws -> MappedOperator {
        let opcode = try code(of: op)
        let opName = opcode.name
        let outputIndex = op.outputs[0]
        let nodeName = "#\(index) \(subgraph.tensors[outputIndex].name)"

        /// TFLite tensor index of input `k`, or nil when it is absent or omitted (-1).
        func optionalInput(_ k: Int) -> Int? {
            k < op.inputs.count && op.inputs[k] >= 0 ? op.inputs[k] : nil
        }
        func input(_ k: Int) throws -> Int {
            guard let t = optionalInput(k) else {
                throw malformed("operator #\(index) (\(opName)) lacks its input \(k)", at: op.position)
            }
            return t
        }
        func shape(_ t: Int) -> [Int] { subgraph.tensors[t].shape }
        func activation(_ raw: Int8) -> FusedActivation? { TFLiteOptions.activation(raw) }
        /// The builtin options when their union tag is `type` (as TFLite's `builtin_options_as_…`, a
        /// table of another type counts as absent and the defaults apply).
        func options(_ type: UInt8) -> FlatTable? { op.optionsType == type ? op.options : nil }

        /// Builds the node from TFLite input tensors (data inputs only) and the operator's outputs.
        func node(_ operation: NeuralOperation, _ inputs: [Int]) throws -> MappedOperator {
            var irInputs: [Int] = []
            for t in inputs { irInputs.append(try tensor(t)) }
            var irOutputs: [Int] = []
            for t in op.outputs { irOutputs.append(try tensor(t)) }
            return .node(NeuralNode(operation: operation, inputs: irInputs, outputs: irOutputs, name: nodeName))
        }
        func unsupportedActivation(_ raw: Int8) -> MappedOperator { .unsupported("\(opName) (fused activation \(raw))") }

        switch opcode.builtin {
        case TFLiteBuiltin.conv2d:
            let o = try TFLiteOptions.Conv2D(options(TFLiteOptions.conv2DType))
            guard let padding = TFLiteOptions.padding(o.padding) else { return .unsupported("\(opName) (padding \(o.padding))") }
            guard let act = activation(o.activation) else { return unsupportedActivation(o.activation) }
            let p = ConvolutionParameters(strideH: o.strideH, strideW: o.strideW, dilationH: o.dilationH, dilationW: o.dilationW,
                                          padding: padding, activation: act)
            return try node(.conv2d(p), [try input(0), try input(1)] + [optionalInput(2)].compactMap { $0 })

        case TFLiteBuiltin.depthwiseConv2d:
            let o = try TFLiteOptions.DepthwiseConv2D(options(TFLiteOptions.depthwiseConv2DType))
            guard let padding = TFLiteOptions.padding(o.padding) else { return .unsupported("\(opName) (padding \(o.padding))") }
            guard let act = activation(o.activation) else { return unsupportedActivation(o.activation) }
            let x = try input(0), f = try input(1)
            // Older converters write an unreliable depth_multiplier; the shapes decide when they can.
            var multiplier = o.depthMultiplier
            if let c = shape(x).last, let fc = shape(f).last, c > 0, fc % c == 0, fc > 0 { multiplier = fc / c }
            let p = ConvolutionParameters(strideH: o.strideH, strideW: o.strideW, dilationH: o.dilationH, dilationW: o.dilationW,
                                          padding: padding, activation: act, depthMultiplier: multiplier)
            return try node(.depthwiseConv2d(p), [x, f] + [optionalInput(2)].compactMap { $0 })

        case TFLiteBuiltin.transposeConv:
            // Inputs: [output_shape, weights, input, bias?]; the IR takes [input, weights, bias?].
            let o = try TFLiteOptions.TransposeConv(options(TFLiteOptions.transposeConvType))
            guard let padding = TFLiteOptions.padding(o.padding) else { return .unsupported("\(opName) (padding \(o.padding))") }
            guard let act = activation(o.activation) else { return unsupportedActivation(o.activation) }
            let x = try input(2), f = try input(1)
            let p = transposedParameters(input: shape(x), filter: shape(f), output: shape(outputIndex),
                                         strideH: o.strideH, strideW: o.strideW, padding: padding, activation: act)
            return try node(.transposeConv2d(p), [x, f] + [optionalInput(3)].compactMap { $0 })

        case TFLiteBuiltin.custom where opcode.custom == "Convolution2DTransposeBias":
            // MediaPipe: inputs [input, weights [O, H, W, I], bias]; custom_options are three
            // little-endian int32: padding (TfLitePadding: 1 = SAME, 2 = VALID), stride_width, stride_height.
            guard let range = op.customOptions, range.count >= 12 else {
                throw malformed("operator #\(index) (\(opName)) needs 12 bytes of options (padding, stride w, stride h)",
                                at: op.position)
            }
            let r = model.reader
            let rawPadding = try r.read(Int32.self, at: range.lowerBound)
            let strideW = Int(try r.read(Int32.self, at: range.lowerBound + 4))
            let strideH = Int(try r.read(Int32.self, at: range.lowerBound + 8))
            let padding: Padding
            switch rawPadding {
            case 1: padding = .same
            case 2: padding = .valid
            default: return .unsupported("\(opName) (padding \(rawPadding))")
            }
            let x = try input(0), f = try input(1)
            let p = transposedParameters(input: shape(x), filter: shape(f), output: shape(outputIndex),
                                         strideH: strideH, strideW: strideW, padding: padding, activation: .none)
            return try node(.transposeConv2d(p), [x, f] + [optionalInput(2)].compactMap { $0 })

        case TFLiteBuiltin.custom where opcode.custom == "TFLite_Detection_PostProcess":
            guard op.outputs.count == 4 else {
                throw malformed("operator #\(index) (\(opName)) has \(op.outputs.count) outputs; boxes, classes, scores and count are 4", at: op.position)
            }
            let p = try detectionPostProcessParameters(op, index: index, name: opName)
            let mapped = try node(.detectionPostProcess(p), [try input(0), try input(1), try input(2)])
            // As LiteRT's Prepare: the outputs' shapes follow from the settings, whatever the file declares.
            if case .node(let n) = mapped {
                let k = p.outputRows
                for (t, shape) in zip(n.outputs, [[1, k, 4], [1, k], [1, k], [1]]) {
                    graph.tensors[t].shape = shape
                    graph.tensors[t].elementType = .float32
                    graph.tensors[t].quantization = nil
                }
            }
            return mapped

        case TFLiteBuiltin.fullyConnected:
            let o = try TFLiteOptions.FullyConnected(options(TFLiteOptions.fullyConnectedType))
            guard o.weightsFormat == 0 else { return .unsupported("\(opName) (shuffled weights)") }
            guard let act = activation(o.activation) else { return unsupportedActivation(o.activation) }
            return try node(.fullyConnected(activation: act), [try input(0), try input(1)] + [optionalInput(2)].compactMap { $0 })

        case TFLiteBuiltin.add, TFLiteBuiltin.sub, TFLiteBuiltin.mul, TFLiteBuiltin.div:
            let type: UInt8 = switch opcode.builtin {
            case TFLiteBuiltin.add: TFLiteOptions.addType
            case TFLiteBuiltin.sub: TFLiteOptions.subType
            case TFLiteBuiltin.mul: TFLiteOptions.mulType
            default: TFLiteOptions.divType
            }
            let raw = try TFLiteOptions.fusedActivation(options(type))
            guard let act = activation(raw) else { return unsupportedActivation(raw) }
            let operation: NeuralOperation
            switch opcode.builtin {
            case TFLiteBuiltin.add: operation = .add(act)
            case TFLiteBuiltin.sub: operation = .subtract(act)
            case TFLiteBuiltin.mul: operation = .multiply(act)
            default: operation = .divide(act)
            }
            return try node(operation, [try input(0), try input(1)])

        case TFLiteBuiltin.minimum: return try node(.minimum, [try input(0), try input(1)])
        case TFLiteBuiltin.maximum: return try node(.maximum, [try input(0), try input(1)])
        case TFLiteBuiltin.relu: return try node(.relu, [try input(0)])
        case TFLiteBuiltin.relu6: return try node(.relu6, [try input(0)])
        case TFLiteBuiltin.reluN1To1: return try node(.reluN1To1, [try input(0)])
        case TFLiteBuiltin.logistic: return try node(.logistic, [try input(0)])
        case TFLiteBuiltin.tanh: return try node(.tanh, [try input(0)])
        case TFLiteBuiltin.hardSwish: return try node(.hardSwish, [try input(0)])
        case TFLiteBuiltin.prelu: return try node(.prelu, [try input(0), try input(1)])
        case TFLiteBuiltin.leakyRelu:
            return try node(.leakyRelu(alpha: try TFLiteOptions.leakyReluAlpha(options(TFLiteOptions.leakyReluType))), [try input(0)])

        case TFLiteBuiltin.averagePool2d, TFLiteBuiltin.maxPool2d:
            let o = try TFLiteOptions.Pool2D(options(TFLiteOptions.pool2DType))
            guard let padding = TFLiteOptions.padding(o.padding) else { return .unsupported("\(opName) (padding \(o.padding))") }
            guard let act = activation(o.activation) else { return unsupportedActivation(o.activation) }
            let p = PoolingParameters(filterH: o.filterH, filterW: o.filterW, strideH: o.strideH, strideW: o.strideW,
                                      padding: padding, activation: act)
            return try node(opcode.builtin == TFLiteBuiltin.maxPool2d ? .maxPool2d(p) : .averagePool2d(p), [try input(0)])

        case TFLiteBuiltin.mean:
            let x = try input(0)
            guard let axes = try constantIntegers(try input(1)) else { return .unsupported("\(opName) (non-constant axes)") }
            let rank = shape(x).count
            let normalised = axes.map { $0 < 0 ? $0 + rank : $0 }
            return try node(.mean(axes: normalised, keepDims: try TFLiteOptions.keepDims(options(TFLiteOptions.reducerType))), [x])

        case TFLiteBuiltin.pad, TFLiteBuiltin.padV2:
            let x = try input(0)
            guard let flat = try constantIntegers(try input(1)), flat.count % 2 == 0 else {
                return .unsupported("\(opName) (non-constant paddings)")
            }
            let paddings = stride(from: 0, to: flat.count, by: 2).map { (flat[$0], flat[$0 + 1]) }
            var value: Float = 0
            if opcode.builtin == TFLiteBuiltin.padV2, let v = optionalInput(2) {
                guard let storage = try constant(v), storage.elementCount == 1,
                      storage.elementType == .float32 else { return .unsupported("\(opName) (non-constant pad value)") }
                value = storage.floats()[0]
            }
            return try node(.pad(paddings: paddings, value: value), [x])

        case TFLiteBuiltin.reshape:
            // The target shape is the output tensor's; the optional shape input is dropped.
            return try node(.reshape, [try input(0)])

        case TFLiteBuiltin.concatenation:
            let o = try TFLiteOptions.Concatenation(options(TFLiteOptions.concatenationType))
            guard let act = activation(o.activation) else { return unsupportedActivation(o.activation) }
            let rank = shape(outputIndex).count
            let axis = o.axis < 0 ? o.axis + rank : o.axis
            var inputs: [Int] = []
            for k in op.inputs.indices { inputs.append(try input(k)) }
            return try node(.concatenation(axis: axis, activation: act), inputs)

        case TFLiteBuiltin.resizeBilinear, TFLiteBuiltin.resizeNearestNeighbor:
            // The size input is dropped: the output tensor's shape says it.
            let nearest = opcode.builtin == TFLiteBuiltin.resizeNearestNeighbor
            let o = try TFLiteOptions.Resize(options(nearest ? TFLiteOptions.resizeNearestType : TFLiteOptions.resizeBilinearType), nearest: nearest)
            let operation: NeuralOperation = nearest
                ? .resizeNearest(alignCorners: o.alignCorners, halfPixelCenters: o.halfPixelCenters)
                : .resizeBilinear(alignCorners: o.alignCorners, halfPixelCenters: o.halfPixelCenters)
            return try node(operation, [try input(0)])

        case TFLiteBuiltin.softmax:
            return try node(.softmax(beta: try TFLiteOptions.softmaxBeta(options(TFLiteOptions.softmaxType))), [try input(0)])

        case TFLiteBuiltin.dequantize:
            return folded[outputIndex] != nil ? .folded : try node(.dequantize, [try input(0)])

        case TFLiteBuiltin.quantize:
            return try node(.quantize, [try input(0)])

        case TFLiteBuiltin.densify:
            return folded[outputIndex] != nil ? .folded : .unsupported("\(opName) (not a sparse constant)")

        case TFLiteBuiltin.depthToSpace:
            // DepthToSpaceOptions: block_size (0).
            let block = Int(try options(TFLiteOptions.depthToSpaceType)?.scalar(0, default: Int32(0)) ?? 0)
            return try node(.depthToSpace(blockSize: block), [try input(0)])

        default:
            return .unsupported(opName)
        }
    }

    /// Parameters of a transposed convolution whose output size is given by its output tensor: the
    /// padding mode stays SAME/VALID and the rows/columns the output has beyond that mode's size become
    /// `adjustH`/`adjustW` (when they are fewer than the stride; otherwise validation reports the mismatch).
    func transposedParameters(input: [Int], filter: [Int], output: [Int], strideH: Int, strideW: Int, padding: Padding,
                              activation: FusedActivation) -> ConvolutionParameters {
        var p = ConvolutionParameters(strideH: strideH, strideW: strideW, padding: padding, activation: activation)
        guard input.count == 4, filter.count == 4, output.count == 4 else { return p }
        if let h = ShapeArithmetic.transposedOutputSize(input: input[1], window: filter[1], stride: strideH, dilation: 1,
                                                         padding: padding, adjust: 0, vertical: true),
           output[1] > h, output[1] - h < strideH {
            p.adjustH = output[1] - h
        }
        if let w = ShapeArithmetic.transposedOutputSize(input: input[2], window: filter[2], stride: strideW, dilation: 1,
                                                         padding: padding, adjust: 0, vertical: false),
           output[2] > w, output[2] - w < strideW {
            p.adjustW = output[2] - w
        }
        return p
    }
}

extension TFLiteGraphBuilder {
    /// `TFLite_Detection_PostProcess`'s settings from its FlexBuffer options, with LiteRT's defaults
    /// (detections_per_class 100, use_regular_nms false); a missing or impossible required setting is
    /// an error naming it.
    func detectionPostProcessParameters(_ op: TFLiteOperator, index: Int, name: String) throws -> DetectionPostProcessParameters {
        guard let range = op.customOptions else {
            throw malformed("operator #\(index) (\(name)) has no options (max_detections, num_classes, scales …)", at: op.position)
        }
        let map: FlexBufferMap
        do { map = try FlexBufferMap(bytes: model.reader.bytes[range]) } catch {
            throw malformed("operator #\(index) (\(name)) options: \(error.reason)", at: range.lowerBound + error.offset)
        }
        func number(_ key: String, default fallback: Double? = nil) throws -> Double {
            guard let value = map[key]?.number ?? fallback else {
                throw malformed("operator #\(index) (\(name)) options lack '\(key)'", at: range.lowerBound)
            }
            return value
        }
        func integer(_ key: String, default fallback: Double? = nil) throws -> Int {
            let v = try number(key, default: fallback)
            guard let i = Int(exactly: v.rounded(.towardZero)), abs(i) <= 1 << 31 else {
                throw malformed("operator #\(index) (\(name)) option '\(key)' \(v) is not a 32-bit integer", at: range.lowerBound)
            }
            return i
        }
        let p = DetectionPostProcessParameters(
            maxDetections: try integer("max_detections"), maxClassesPerDetection: try integer("max_classes_per_detection"),
            detectionsPerClass: try integer("detections_per_class", default: 100), useRegularNMS: try number("use_regular_nms", default: 0) != 0,
            scoreThreshold: Float(try number("nms_score_threshold")), iouThreshold: Float(try number("nms_iou_threshold")),
            classes: try integer("num_classes"), yScale: Float(try number("y_scale")), xScale: Float(try number("x_scale")),
            hScale: Float(try number("h_scale")), wScale: Float(try number("w_scale")))
        if let problem = p.problem {
            throw malformed("operator #\(index) (\(name)): \(problem)", at: range.lowerBound)
        }
        return p
    }
}
