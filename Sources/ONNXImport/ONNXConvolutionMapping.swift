import NeuralGraph

/// Conv, ConvTranspose, BatchNormalization (folded into the convolution before it when it can be),
/// pooling. Weights are re-laid out for the IR: OIHW → OHWI, depthwise [C×m, 1, H, W] → [1, H, W, C×m],
/// transposed IOHW → OHWI.
extension ONNXGraphBuilder {
    /// Two spatial values of attribute `name` (default `fallback`), each at least `minimum`.
    func pair(_ c: ONNXNodeContext, _ name: String, _ fallback: Int, minimum: Int = 1) throws -> (Int, Int) {
        guard let v = c.ints(name) else { return (fallback, fallback) }
        guard v.count == 2, v.allSatisfy({ $0 >= minimum && $0 < 1 << 20 }) else {
            throw c.invalid("attribute '\(name)' is \(v); expected two values ≥ \(minimum) (2-D)")
        }
        return (v[0], v[1])
    }

    /// Explicit padding (top, left, bottom, right) from `auto_pad` and `pads` for a window of
    /// `kernel` (dilated size) with `strides` over an input of `size` (H, W).
    func windowPadding(_ c: ONNXNodeContext, size: (Int, Int), kernel: (Int, Int), strides: (Int, Int)) throws -> [Int] {
        let mode = c.string("auto_pad", "NOTSET")
        switch mode {
        case "NOTSET", "":
            guard let pads = c.ints("pads") else { return [0, 0, 0, 0] }
            guard pads.count == 4, pads.allSatisfy({ $0 >= 0 && $0 < 1 << 20 }) else {
                throw c.invalid("attribute 'pads' is \(pads); expected four non-negative values (2-D)")
            }
            return pads
        case "VALID":
            return [0, 0, 0, 0]
        case "SAME_UPPER", "SAME_LOWER":
            func axis(_ input: Int, _ k: Int, _ s: Int) -> (Int, Int) {
                let out = (input + s - 1) / s
                let total = max(0, (out - 1) * s + k - input)
                return mode == "SAME_UPPER" ? (total / 2, total - total / 2) : (total - total / 2, total / 2)
            }
            let (t, b) = axis(size.0, kernel.0, strides.0), (l, r) = axis(size.1, kernel.1, strides.1)
            return [t, l, b, r]
        default:
            throw c.invalid("auto_pad '\(mode)' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
        }
    }

    /// Input 0 as a 4-D activation.
    mutating func spatialInput(_ c: ONNXNodeContext) throws -> (tensor: Int, shape: [Int]) {
        let x = try activation(c, 0)
        guard x.shape.count == 4 else {
            throw UnsupportedOperator("\(max(x.shape.count - 2, 0))-D input \(describe(x.shape)); only 2-D (NCHW) is supported")
        }
        return x
    }

    /// The weights input `k` as a 4-D constant.
    mutating func weights4D(_ c: ONNXNodeContext, _ k: Int) throws -> ONNXConstant {
        let w = try requiredConstant(c, k, "weights")
        guard w.shape.count == 4, w.shape.allSatisfy({ $0 >= 1 }) else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(k) ?? "W", expected: "4-D weights", got: describe(w.shape))
        }
        return w
    }

    /// The bias input `k` (`count` elements), or nil.
    mutating func bias(_ c: ONNXNodeContext, _ k: Int, count: Int) throws -> [Float]? {
        guard let b = try constant(c, k) else { return nil }
        guard b.count == count else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(k) ?? "B", expected: "[\(count)]", got: describe(b.shape))
        }
        return b.floats
    }

    mutating func mapConv(_ c: ONNXNodeContext) throws {
        let x = try spatialInput(c)
        let w = try weights4D(c, 1)
        let (n, channels, h, wd) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let (o, perGroup, kh, kw) = (w.shape[0], w.shape[1], w.shape[2], w.shape[3])
        let group = try c.int("group", 1)
        guard group >= 1, channels % group == 0, perGroup == channels / group, o % group == 0 else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(1) ?? "W",
                                           expected: "[outputs, \(channels)/group \(group), kh, kw] for \(channels) input channels",
                                           got: describe(w.shape))
        }
        if let k = c.ints("kernel_shape"), k != [kh, kw] { throw c.invalid("kernel_shape \(k) does not match the weights \(describe(w.shape))") }
        let (sh, sw) = try pair(c, "strides", 1), (dh, dw) = try pair(c, "dilations", 1)
        let pads = try windowPadding(c, size: (h, wd), kernel: ((kh - 1) * dh + 1, (kw - 1) * dw + 1), strides: (sh, sw))
        let padding = Padding.explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3])
        guard let oh = ShapeArithmetic.outputSize(input: h, window: kh, stride: sh, dilation: dh, padding: padding, vertical: true),
              let ow = ShapeArithmetic.outputSize(input: wd, window: kw, stride: sw, dilation: dw, padding: padding, vertical: false) else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(0) ?? "X",
                                           expected: "an input that fits the \(kh)×\(kw) kernel with pads \(pads)", got: describe(x.shape))
        }
        var p = ConvolutionParameters(strideH: sh, strideW: sw, dilationH: dh, dilationW: dw, padding: padding)
        let operation: NeuralOperation
        let weights: [Float], irShape: [Int]
        if group > 1 && group == channels {
            // Depthwise: ONNX [C × m, 1, kh, kw] → IR [1, kh, kw, C × m] (output channel c·m + j in both).
            p.depthMultiplier = o / channels
            weights = ONNXLayout.transpose(w.floats, shape: w.shape, permutation: [1, 2, 3, 0])
            irShape = [1, kh, kw, o]
            operation = .depthwiseConv2d(p)
        } else {
            // Plain and grouped: OIHW → OHWI (the IR's grouped convolution takes [O, kh, kw, I / group]).
            weights = ONNXLayout.transpose(w.floats, shape: w.shape, permutation: [0, 2, 3, 1])
            irShape = [o, kh, kw, perGroup]
            operation = .conv2d(p)
        }
        var inputs = [x.tensor, addConstant(weights, shape: irShape, name: c.inputName(1) ?? "W")]
        if let b = try bias(c, 2, count: o) { inputs.append(addConstant(b, shape: [o], name: c.inputName(2) ?? "B")) }
        let out = try emit(c, operation, inputs: inputs, shape: [n, o, oh, ow])
        convolutionOf[out] = graph.nodes.count - 1
    }

    mutating func mapConvTranspose(_ c: ONNXNodeContext) throws {
        let x = try spatialInput(c)
        let w = try weights4D(c, 1)
        let (n, channels, h, wd) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        guard try c.int("group", 1) == 1 else { throw UnsupportedOperator("grouped transposed convolution") }
        guard w.shape[0] == channels else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(1) ?? "W",
                                           expected: "[\(channels), outputs, kh, kw]", got: describe(w.shape))
        }
        let (o, kh, kw) = (w.shape[1], w.shape[2], w.shape[3])
        if let k = c.ints("kernel_shape"), k != [kh, kw] { throw c.invalid("kernel_shape \(k) does not match the weights \(describe(w.shape))") }
        let (sh, sw) = try pair(c, "strides", 1)
        guard try pair(c, "dilations", 1) == (1, 1) else { throw UnsupportedOperator("dilation") }
        let (ah, aw) = try pair(c, "output_padding", 0, minimum: 0)
        let fullH = (h - 1) * sh + kh, fullW = (wd - 1) * sw + kw
        var pads: [Int]
        let mode = c.string("auto_pad", "NOTSET")
        if let shape = c.ints("output_shape") {
            let target = shape.suffix(2)
            guard target.count == 2, let th = target.first, let tw = target.last else { throw c.invalid("output_shape \(shape) is not 2-D") }
            let totalH = fullH + ah - th, totalW = fullW + aw - tw
            guard totalH >= 0, totalW >= 0 else { throw UnsupportedOperator("output_shape \(shape) larger than the full output") }
            pads = mode == "SAME_UPPER" ? [totalH / 2, totalW / 2, totalH - totalH / 2, totalW - totalW / 2]
                                        : [totalH - totalH / 2, totalW - totalW / 2, totalH / 2, totalW / 2]
        } else if mode == "SAME_UPPER" || mode == "SAME_LOWER" {
            let totalH = max(0, fullH + ah - h * sh), totalW = max(0, fullW + aw - wd * sw)
            pads = mode == "SAME_UPPER" ? [totalH / 2, totalW / 2, totalH - totalH / 2, totalW - totalW / 2]
                                        : [totalH - totalH / 2, totalW - totalW / 2, totalH / 2, totalW / 2]
        } else {
            pads = try windowPadding(c, size: (h, wd), kernel: (kh, kw), strides: (sh, sw))
        }
        let oh = fullH + ah - pads[0] - pads[2], ow = fullW + aw - pads[1] - pads[3]
        guard oh >= 1, ow >= 1 else { throw c.invalid("pads \(pads) leave no output") }
        // The runtime derives the crop from the sizes: (full − out) split evenly, the odd row at the end,
        // and rows beyond the full size as output padding. Other placements cannot be expressed.
        for (pad, full, out, stride, axis) in [(pads[0], fullH, oh, sh, "height"), (pads[1], fullW, ow, sw, "width")] {
            let total = max(0, full - out)
            guard total / 2 == pad, out - (full - total) < max(stride, 1) else {
                throw UnsupportedOperator("pads \(pads) with output_padding (\(ah), \(aw)) along the \(axis): only a centred crop " +
                                          "(begin = (pads + pads − output_padding) / 2) is supported")
            }
        }
        var p = ConvolutionParameters(strideH: sh, strideW: sw, padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]))
        p.adjustH = ah
        p.adjustW = aw
        let weights = ONNXLayout.transpose(w.floats, shape: w.shape, permutation: [1, 2, 3, 0])
        var inputs = [x.tensor, addConstant(weights, shape: [o, kh, kw, channels], name: c.inputName(1) ?? "W")]
        if let b = try bias(c, 2, count: o) { inputs.append(addConstant(b, shape: [o], name: c.inputName(2) ?? "B")) }
        let out = try emit(c, .transposeConv2d(p), inputs: inputs, shape: [n, o, oh, ow])
        convolutionOf[out] = graph.nodes.count - 1
    }

    /// BatchNormalization (inference): folded into the preceding Conv/ConvTranspose when that is its
    /// only reader, otherwise a multiply and an add with per-channel constants.
    mutating func mapBatchNormalization(_ c: ONNXNodeContext) throws {
        guard try c.int("training_mode", 0) == 0 else { throw UnsupportedOperator("training_mode=1") }
        guard try c.int("spatial", 1) == 1 else { throw UnsupportedOperator("spatial=0") }
        guard c.node.outputs.dropFirst().allSatisfy({ $0.isEmpty }) else { throw UnsupportedOperator("training outputs (mean, var)") }
        let x = try activation(c, 0)
        guard x.shape.count >= 2 else { throw c.invalid("input \(describe(x.shape)) has no channel axis") }
        let channels = x.shape[1]
        var params: [[Float]] = []
        for (k, what) in [(1, "scale"), (2, "B"), (3, "mean"), (4, "var")] {
            let v = try requiredConstant(c, k, what)
            guard v.count == channels else {
                throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(k) ?? what, expected: "[\(channels)]", got: describe(v.shape))
            }
            params.append(v.floats)
        }
        let epsilon = try c.float("epsilon", 1e-5)
        let scale = (0..<channels).map { params[0][$0] / (params[3][$0] + epsilon).squareRoot() }
        let shift = (0..<channels).map { params[1][$0] - params[2][$0] * scale[$0] }

        if let inputName = c.inputName(0), uses[inputName] == 1, let nodeIndex = convolutionOf[x.tensor],
           try fold(scale: scale, shift: shift, into: nodeIndex) {
            graph.tensors[x.tensor].name = c.node.outputs[0]
            values[c.node.outputs[0]] = .activation(tensor: x.tensor, shape: x.shape)
            convolutionOf[x.tensor] = nil
            return
        }
        let shape = [1, channels] + Array(repeating: 1, count: x.shape.count - 2)
        let rank = x.shape.count
        let s = try constantOperand(ONNXConstant(shape: shape, values: .floats(scale)), rank: rank, name: "\(c.node.outputs[0])/scale")
        let t = try constantOperand(ONNXConstant(shape: shape, values: .floats(shift)), rank: rank, name: "\(c.node.outputs[0])/shift")
        let scaled = try emit(c, .multiply(.none), inputs: [x.tensor, s], shape: x.shape, name: "\(c.node.outputs[0])/scaled")
        try emit(c, .add(.none), inputs: [scaled, t], shape: x.shape)
    }

    /// Scales the weights of convolution node `nodeIndex` per output channel and folds `shift` into
    /// its bias. False when the node's weights are not what it expects.
    mutating func fold(scale: [Float], shift: [Float], into nodeIndex: Int) throws -> Bool {
        var node = graph.nodes[nodeIndex]
        guard node.inputs.count >= 2, let storage = graph.tensors[node.inputs[1]].constant else { return false }
        var w = storage.floats()
        let shape = graph.tensors[node.inputs[1]].shape
        let channels = scale.count
        switch node.operation {
        case .depthwiseConv2d:
            guard shape.last == channels, !w.isEmpty else { return false }
            for i in w.indices { w[i] *= scale[i % channels] }
        case .conv2d, .transposeConv2d:
            guard shape.first == channels, w.count % channels == 0 else { return false }
            let per = w.count / channels
            for i in w.indices { w[i] *= scale[i / per] }
        default:
            return false
        }
        var bias = [Float](repeating: 0, count: channels)
        if node.inputs.count > 2 {
            guard let b = graph.tensors[node.inputs[2]].constant?.floats(), b.count == channels else { return false }
            bias = b
        }
        let folded = (0..<channels).map { bias[$0] * scale[$0] + shift[$0] }
        graph.tensors[node.inputs[1]].constant = ConstantStorage(floats: w)
        if node.inputs.count > 2 {
            graph.tensors[node.inputs[2]].constant = ConstantStorage(floats: folded)
        } else {
            node.inputs.append(addConstant(folded, shape: [channels], name: "\(node.name)/bias"))
            graph.nodes[nodeIndex] = node
        }
        return true
    }

    mutating func mapPool(_ c: ONNXNodeContext) throws {
        let x = try spatialInput(c)
        let isMax = c.node.opType == "MaxPool"
        if isMax, c.node.outputs.count > 1, !c.node.outputs[1].isEmpty { throw UnsupportedOperator("Indices output") }
        guard let k = c.ints("kernel_shape"), k.count == 2, k.allSatisfy({ $0 >= 1 && $0 < 1 << 20 }) else {
            throw c.invalid("kernel_shape must hold two positive values (2-D pooling)")
        }
        guard try pair(c, "dilations", 1) == (1, 1) else { throw UnsupportedOperator("dilation") }
        let (sh, sw) = try pair(c, "strides", 1)
        let (h, w) = (x.shape[2], x.shape[3])
        var pads = try windowPadding(c, size: (h, w), kernel: (k[0], k[1]), strides: (sh, sw))
        let ceilMode = try c.int("ceil_mode", 0) != 0
        var extra = false
        func size(_ input: Int, _ kernel: Int, _ stride: Int, _ before: Int, _ after: inout Int) -> Int {
            let span = input + before + after - kernel
            guard span >= 0 else { return 0 }
            var out = span / stride + 1
            if ceilMode {
                out = (span + stride - 1) / stride + 1
                if (out - 1) * stride >= input + before { out -= 1 }   // the last window must start inside
                let missing = (out - 1) * stride + kernel - (input + before + after)
                if missing > 0 { after += missing; extra = true }
            }
            return out
        }
        let oh = size(h, k[0], sh, pads[0], &pads[2]), ow = size(w, k[1], sw, pads[1], &pads[3])
        guard oh >= 1, ow >= 1 else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(0) ?? "X",
                                           expected: "an input at least as large as the \(k[0])×\(k[1]) window", got: describe(x.shape))
        }
        if !isMax, try c.int("count_include_pad", 0) != 0, pads.contains(where: { $0 > 0 }) || extra {
            throw UnsupportedOperator("count_include_pad=1 with padding: the runtime's average leaves padding out")
        }
        let p = PoolingParameters(filterH: k[0], filterW: k[1], strideH: sh, strideW: sw,
                                  padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]))
        try emit(c, isMax ? .maxPool2d(p) : .averagePool2d(p), inputs: [x.tensor], shape: [x.shape[0], x.shape[1], oh, ow])
    }

    mutating func mapGlobalPool(_ c: ONNXNodeContext) throws {
        let x = try spatialInput(c)
        let out = [x.shape[0], x.shape[1], 1, 1]
        if c.node.opType == "GlobalAveragePool" {
            try emit(c, .mean(axes: [1, 2], keepDims: true), inputs: [x.tensor], shape: out)
        } else {
            let p = PoolingParameters(filterH: x.shape[2], filterW: x.shape[3], strideH: 1, strideW: 1, padding: .valid)
            try emit(c, .maxPool2d(p), inputs: [x.tensor], shape: out)
        }
    }
}
