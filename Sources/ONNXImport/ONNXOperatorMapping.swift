import NeuralGraph

/// Operator dispatch and the element-wise, arithmetic, concatenation, softmax, pad, gemm and constant
/// operators. Convolutions, pooling and batch normalization are in ONNXConvolutionMapping.swift, resize
/// in ONNXResizeMapping.swift, reshapes in ONNXReshapeMapping.swift.
extension ONNXGraphBuilder {
    /// Maps one node: emits IR nodes, or records its outputs as constants or aliases. Throws
    /// ``UnsupportedOperator`` for what the IR cannot express, ``ModelError`` for a damaged node.
    mutating func map(_ c: inout ONNXNodeContext) throws {
        switch c.node.opType {
        case "Conv": try mapConv(c)
        case "ConvTranspose": try mapConvTranspose(c)
        case "BatchNormalization": try mapBatchNormalization(c)
        case "MaxPool", "AveragePool": try mapPool(c)
        case "GlobalAveragePool", "GlobalMaxPool": try mapGlobalPool(c)
        case "Relu": try mapUnary(c, .relu)
        case "Sigmoid": try mapUnary(c, .logistic)
        case "Tanh": try mapUnary(c, .tanh)
        case "HardSwish": try mapUnary(c, .hardSwish)
        case "LeakyRelu": try mapUnary(c, .leakyRelu(alpha: try c.float("alpha", 0.01)))
        case "HardSigmoid": try mapUnary(c, .hardSigmoid(alpha: try c.float("alpha", 0.2), beta: try c.float("beta", 0.5)))
        case "Clip": try mapClip(c)
        case "PRelu": try mapPRelu(c)
        case "Add": try mapBinary(c, .add(.none), +)
        case "Sub": try mapBinary(c, .subtract(.none), -)
        case "Mul": try mapBinary(c, .multiply(.none), *)
        case "Div": try mapBinary(c, .divide(.none), /)
        case "Concat": try mapConcat(c)
        case "Resize", "Upsample": try mapResize(c)
        case "Gemm": try mapGemm(c)
        case "MatMul": try mapMatMul(c)
        case "Flatten", "Reshape", "Squeeze", "Unsqueeze": try mapReshape(c)
        case "Softmax": try mapSoftmax(c)
        case "Pad": try mapPad(c)
        case "Constant": try mapConstant(c)
        case "Identity", "Dropout":
            guard let name = c.inputName(0), let v = try value(name) else { throw c.invalid("has no input") }
            values[c.node.outputs[0]] = v
            if naturalOrder.contains(name) { naturalOrder.insert(c.node.outputs[0]) }
        case "Transpose": try mapTranspose(c)
        case "QuantizeLinear": try mapQuantizeLinear(c)
        case "DequantizeLinear": try mapDequantizeLinear(c)
        case "Cast": try mapCast(c)
        case "ReduceMean": try mapReduceMean(c)
        default:
            throw UnsupportedOperator("")
        }
    }

    // MARK: Inputs and outputs of a node

    /// Input `k` as an activation (IR tensor and ONNX shape).
    mutating func activation(_ c: ONNXNodeContext, _ k: Int) throws -> (tensor: Int, shape: [Int]) {
        guard let name = c.inputName(k), let v = try value(name) else { throw c.invalid("lacks its input \(k)") }
        switch v {
        case .activation(let t, let s):
            try requireNCHW(name)
            return (t, s)
        case .constant: throw UnsupportedOperator("constant input '\(name)'; constant folding of this operator is not supported")
        case .unavailable: throw UnsupportedOperator("input '\(name)' is unavailable")
        }
    }

    /// Input `k` as a constant, or nil when it is absent.
    mutating func constant(_ c: ONNXNodeContext, _ k: Int) throws -> ONNXConstant? {
        guard let name = c.inputName(k) else { return nil }
        switch try value(name) {
        case .constant(let v)?: return v
        case .activation?: throw UnsupportedOperator("input \(k) '\(name)' is computed at run time; only a constant is supported there")
        default: throw c.invalid("lacks its input \(k) '\(name)'")
        }
    }

    /// Input `k` as a constant that must be present.
    mutating func requiredConstant(_ c: ONNXNodeContext, _ k: Int, _ what: String) throws -> ONNXConstant {
        guard let v = try constant(c, k) else { throw c.invalid("lacks its \(what) (input \(k))") }
        return v
    }

    /// Adds an IR node computing output `k` of `c` with ONNX shape `shape`, after checking the shape
    /// against the model's value_info; returns the output tensor.
    /// With `name`, the output is an intermediate tensor of that name (not recorded as the node's output).
    @discardableResult
    mutating func emit(_ c: ONNXNodeContext, _ operation: NeuralOperation, inputs: [Int], shape: [Int],
                       name intermediate: String? = nil) throws -> Int {
        let name = intermediate ?? c.node.outputs[0]
        try checkSize(shape, label: c.label, tensor: name)
        if intermediate == nil, let declared = declaredShapes[name], declared != shape, !declared.isEmpty || shape.reduce(1, *) != 1 {
            throw ModelError.shapeMismatch(operation: c.label, tensor: name, expected: "\(describe(declared)) (as the model declares)",
                                           got: "\(describe(shape)) (computed)")
        }
        var value = TensorValue(name: name, shape: ONNXLayout.irShape(shape))
        if case .reshape = operation, let input = inputs.first, graph.tensors[input].isQuantized {
            // A reshape of a quantized tensor is the same integers.
            value.elementType = graph.tensors[input].elementType
            value.quantization = graph.tensors[input].quantization
        }
        let output = graph.addTensor(value)
        graph.nodes.append(NeuralNode(operation: operation, inputs: inputs, outputs: [output], name: c.irName))
        if intermediate == nil { values[name] = .activation(tensor: output, shape: shape) }
        return output
    }

    /// Records output 0 of `c` as a constant.
    mutating func setConstant(_ c: ONNXNodeContext, _ constant: ONNXConstant) {
        values[c.node.outputs[0]] = .constant(constant)
    }

    /// A constant operand in the IR layout of an activation of rank `rank`, added to the graph.
    mutating func constantOperand(_ constant: ONNXConstant, rank: Int, name: String) throws -> Int {
        guard constant.shape.count <= max(rank, 4) else {
            throw UnsupportedOperator("constant '\(name)' of rank \(constant.shape.count) broadcast against rank \(rank)")
        }
        let (v, s) = ONNXLayout.irConstant(constant.floats, shape: constant.shape, rank: rank)
        return addConstant(v, shape: s, name: name)
    }

    // MARK: Element-wise

    mutating func mapUnary(_ c: ONNXNodeContext, _ operation: NeuralOperation) throws {
        let x = try activation(c, 0)
        try emit(c, operation, inputs: [x.tensor], shape: x.shape)
    }

    mutating func mapClip(_ c: ONNXNodeContext) throws {
        var lo = -Float.greatestFiniteMagnitude, hi = Float.greatestFiniteMagnitude
        if opset < 11 {
            lo = try c.float("min", lo)
            hi = try c.float("max", hi)
        } else {
            for (k, bound) in [(1, "min"), (2, "max")] {
                guard let v = try constant(c, k) else { continue }
                guard v.count == 1, let f = v.floats.first else { throw c.invalid("\(bound) must be a scalar, has shape \(describe(v.shape))") }
                if k == 1 { lo = f } else { hi = f }
            }
        }
        guard !(lo > hi), !lo.isNaN, !hi.isNaN else { throw c.invalid("min \(lo) is greater than max \(hi)") }
        let operation: NeuralOperation
        switch (lo, hi) {
        case (0, Float.greatestFiniteMagnitude), (0, .infinity): operation = .relu
        case (0, 6): operation = .relu6
        case (-1, 1): operation = .reluN1To1
        default: operation = .clamp(min: lo, max: hi)
        }
        try mapUnary(c, operation)
    }

    mutating func mapPRelu(_ c: ONNXNodeContext) throws {
        let x = try activation(c, 0)
        guard x.shape.count == 4 else { throw UnsupportedOperator("rank-\(x.shape.count) input; only 4-D inputs are supported") }
        let slope = try requiredConstant(c, 1, "slope")
        let channels = x.shape[1]
        let aligned = Array(repeating: 1, count: max(0, 4 - slope.shape.count)) + slope.shape
        let values: [Float]
        if slope.count == 1 {
            guard channels <= Self.maxFoldedElements else { throw c.invalid("has \(channels) channels") }
            values = Array(repeating: slope.floats[0], count: channels)
        } else if aligned.count == 4, aligned[1] == channels, aligned[0] == 1, aligned[2] == 1, aligned[3] == 1 {
            values = slope.floats
        } else {
            throw UnsupportedOperator("slope of shape \(describe(slope.shape)) is not per-channel for input \(describe(x.shape))")
        }
        let s = addConstant(values, shape: [channels], name: c.inputName(1) ?? "slope")
        try emit(c, .prelu, inputs: [x.tensor, s], shape: x.shape)
    }

    /// Add, Sub, Mul, Div with NumPy broadcasting; constant operands become IR constants in the
    /// activation's layout, and two constants are folded.
    mutating func mapBinary(_ c: ONNXNodeContext, _ operation: NeuralOperation, _ f: (Float, Float) -> Float) throws {
        guard let na = c.inputName(0), let nb = c.inputName(1), let a = try value(na), let b = try value(nb) else {
            throw c.invalid("needs two inputs")
        }
        func shape(_ v: ONNXValue) -> [Int] {
            switch v {
            case .activation(_, let s): return s
            case .constant(let k): return k.shape
            case .unavailable: return []
            }
        }
        guard let out = Self.broadcast(shape(a), shape(b)) else {
            throw c.invalid("input shapes \(describe(shape(a))) and \(describe(shape(b))) do not broadcast")
        }
        try requireNCHW(na)
        try requireNCHW(nb)
        if case .constant(let ka) = a, case .constant(let kb) = b {
            setConstant(c, try Self.fold(ka, kb, out, c, f))
            return
        }
        var operands: [Int] = []
        for (name, v) in [(na, a), (nb, b)] {
            switch v {
            case .activation(let t, let s):
                guard s.count == out.count else {
                    throw UnsupportedOperator("broadcasting a rank-\(s.count) activation against rank \(out.count)")
                }
                operands.append(t)
            case .constant(let k):
                operands.append(try constantOperand(k, rank: out.count, name: name))
            case .unavailable:
                throw UnsupportedOperator("input '\(name)' is unavailable")
            }
        }
        try emit(c, operation, inputs: operands, shape: out)
    }

    /// NumPy broadcasting of two shapes, or nil.
    static func broadcast(_ a: [Int], _ b: [Int]) -> [Int]? {
        let rank = max(a.count, b.count)
        let pa = Array(repeating: 1, count: rank - a.count) + a, pb = Array(repeating: 1, count: rank - b.count) + b
        var out: [Int] = []
        for (x, y) in zip(pa, pb) {
            guard x == y || x == 1 || y == 1 else { return nil }
            out.append(x == 1 ? y : x)
        }
        return out
    }

    /// Folds a binary operation of two constants (integers stay integers for add, sub and mul).
    static func fold(_ a: ONNXConstant, _ b: ONNXConstant, _ out: [Int], _ c: ONNXNodeContext,
                     _ f: (Float, Float) -> Float) throws -> ONNXConstant {
        guard let n = ShapeArithmetic.elementCount(out), n <= maxFoldedElements else {
            throw UnsupportedOperator("folding constants of shape \(describe(out)) (too large)")
        }
        let rank = out.count
        let pa = Array(repeating: 1, count: rank - a.shape.count) + a.shape
        let pb = Array(repeating: 1, count: rank - b.shape.count) + b.shape
        func index(_ flat: Int, _ shape: [Int]) -> Int {
            var rest = flat, result = 0, step = 1
            for d in stride(from: rank - 1, through: 0, by: -1) {
                let coordinate = rest % out[d]
                rest /= out[d]
                if shape[d] != 1 { result += coordinate * step }
                step *= shape[d]
            }
            return result
        }
        let fa = a.floats, fb = b.floats
        guard fa.count == ShapeArithmetic.elementCount(pa), fb.count == ShapeArithmetic.elementCount(pb) else {
            throw c.invalid("constant operands do not match their shapes")
        }
        let result = (0..<n).map { f(fa[index($0, pa)], fb[index($0, pb)]) }
        if a.isInteger, b.isInteger, ["Add", "Sub", "Mul"].contains(c.node.opType) {
            // Small integers (shapes, axes) are exact in Float up to 2^24.
            if result.allSatisfy({ abs($0) < 16_777_216 }) { return ONNXConstant(shape: out, values: .integers(result.map { Int($0) })) }
        }
        return ONNXConstant(shape: out, values: .floats(result))
    }

    // MARK: Concat, Softmax, Pad

    mutating func mapConcat(_ c: ONNXNodeContext) throws {
        guard let axisValue = c.node.attribute("axis")?.i else { throw c.invalid("lacks its 'axis' attribute") }
        let rawAxis = Int(clamping: axisValue)
        var parts: [(name: String, value: ONNXValue)] = []
        for k in c.node.inputs.indices {
            guard let name = c.inputName(k), let v = try value(name) else { continue }
            try requireNCHW(name)
            parts.append((name, v))
        }
        guard let first = parts.first else { throw c.invalid("has no inputs") }
        let firstShape: [Int]
        switch first.value {
        case .activation(_, let s): firstShape = s
        case .constant(let k): firstShape = k.shape
        case .unavailable: throw UnsupportedOperator("input unavailable")
        }
        let rank = firstShape.count
        let axis = rawAxis < 0 ? rawAxis + rank : rawAxis
        guard axis >= 0, axis < rank else { throw c.invalid("axis \(rawAxis) is outside the input's \(rank) dimensions") }
        var out = firstShape
        out[axis] = 0
        var inputs: [Int] = []
        let allConstant = parts.allSatisfy { if case .constant = $0.value { return true } else { return false } }
        for (name, v) in parts {
            let s: [Int]
            switch v {
            case .activation(let t, let shape):
                s = shape
                inputs.append(t)
            case .constant(let k):
                s = k.shape
                guard s.count == rank, !allConstant else { break }
                let (values, irShape) = ONNXLayout.irConstant(k.floats, shape: k.shape, rank: rank)
                inputs.append(addConstant(values, shape: irShape, name: name))
            case .unavailable: throw UnsupportedOperator("input unavailable")
            }
            var expected = firstShape
            expected[axis] = s.count == rank ? s[axis] : -1
            guard s == expected else {
                throw ModelError.shapeMismatch(operation: c.label, tensor: name, expected: "\(describe(firstShape)) except along axis \(axis)",
                                               got: describe(s))
            }
            out[axis] += s[axis]
        }
        if allConstant {
            // Shape vectors built from constants: concatenate them at import.
            guard rank == 1 else { throw UnsupportedOperator("concatenation of constants of rank \(rank)") }
            var ints: [Int] = [], floats: [Float] = [], integer = true
            for (_, v) in parts {
                guard case .constant(let k) = v else { continue }
                if let i = k.integers, k.isInteger { ints += i } else { integer = false }
                floats += k.floats
            }
            setConstant(c, ONNXConstant(shape: out, values: integer ? .integers(ints) : .floats(floats)))
            return
        }
        try emit(c, .concatenation(axis: ONNXLayout.irAxis(axis, rank: rank), activation: .none), inputs: inputs, shape: out)
    }

    mutating func mapSoftmax(_ c: ONNXNodeContext) throws {
        let x = try activation(c, 0)
        let rank = x.shape.count
        let raw = try c.int("axis", opset >= 13 ? -1 : 1)
        let axis = raw < 0 ? raw + rank : raw
        guard axis >= 0, axis < rank else { throw c.invalid("axis \(raw) is outside the input's \(rank) dimensions") }
        // Before opset 13 the input is flattened to 2-D at `axis`: the same as a softmax over one axis
        // only when the dimensions after it are 1.
        let trailing = x.shape[(axis + 1)...].reduce(1, *)
        let overIRLastAxis = ONNXLayout.irAxis(axis, rank: rank) == rank - 1
        guard overIRLastAxis, opset >= 13 || trailing == 1 else {
            throw UnsupportedOperator("axis \(raw) of a \(describe(x.shape)) input" +
                                      (rank == 4 ? "; only the channel axis (1) is supported" : "; only the last axis is supported") +
                                      (opset < 13 && trailing != 1 ? " with 1×1 trailing dimensions before opset 13" : ""))
        }
        try emit(c, .softmax(beta: 1), inputs: [x.tensor], shape: x.shape)
    }

    mutating func mapPad(_ c: ONNXNodeContext) throws {
        let mode = c.string("mode", "constant")
        guard mode == "constant" else { throw UnsupportedOperator("mode '\(mode)'; only 'constant' is supported") }
        let x = try activation(c, 0)
        let rank = x.shape.count
        let pads: [Int]
        var padValue: Float = 0
        if opset < 11 {
            guard let p = c.ints("pads") else { throw c.invalid("lacks its 'pads' attribute") }
            pads = p
            padValue = try c.float("value", 0)
        } else {
            guard let p = try requiredConstant(c, 1, "pads").integers else { throw c.invalid("pads are not integers") }
            pads = p
            if let v = try constant(c, 2) {
                guard v.count == 1 else { throw c.invalid("constant_value must be a scalar") }
                padValue = v.floats[0]
            }
            if c.inputName(3) != nil { throw UnsupportedOperator("'axes' input") }
        }
        guard pads.count == 2 * rank else { throw c.invalid("has \(pads.count) pads for a rank-\(rank) input (needs \(2 * rank))") }
        guard pads.allSatisfy({ $0 >= 0 && $0 < Int(Int32.max) }) else { throw UnsupportedOperator("negative pads \(pads) (cropping)") }
        let pairs = (0..<rank).map { (pads[$0], pads[$0 + rank]) }
        let out = zip(x.shape, pairs).map { $0 + $1.0 + $1.1 }
        let irPairs = rank == 4 ? [pairs[0], pairs[2], pairs[3], pairs[1]] : pairs
        try emit(c, .pad(paddings: irPairs, value: padValue), inputs: [x.tensor], shape: out)
    }

    // MARK: Gemm, MatMul

    mutating func mapGemm(_ c: ONNXNodeContext) throws {
        let a = try activation(c, 0)
        guard try c.int("transA", 0) == 0 else { throw UnsupportedOperator("transA=1") }
        guard a.shape.count == 2 else { throw c.invalid("input A has shape \(describe(a.shape)); Gemm takes 2-D inputs") }
        let b = try requiredConstant(c, 1, "B")
        guard b.shape.count == 2 else { throw c.invalid("B has shape \(describe(b.shape)); Gemm takes 2-D inputs") }
        let transB = try c.int("transB", 0) != 0
        let alpha = try c.float("alpha", 1), beta = try c.float("beta", 1)
        let (n, k) = transB ? (b.shape[0], b.shape[1]) : (b.shape[1], b.shape[0])
        guard k == a.shape[1] else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(1) ?? "B",
                                           expected: "\(a.shape[1]) inputs (A is \(describe(a.shape)))", got: describe(b.shape))
        }
        var weights = transB ? b.floats : ONNXLayout.transpose(b.floats, shape: b.shape, permutation: [1, 0])
        if alpha != 1 { weights = weights.map { $0 * alpha } }
        var inputs = [a.tensor, addConstant(weights, shape: [n, k], name: c.inputName(1) ?? "B")]
        if let bias = try constant(c, 2) {
            let values = bias.floats
            let row: [Float]
            if values.count == n && (bias.shape.count < 2 || bias.shape[bias.shape.count - 2] == 1) {
                row = values
            } else if values.count == 1 {
                row = Array(repeating: values[0], count: n)
            } else {
                throw UnsupportedOperator("C of shape \(describe(bias.shape)); only a per-output bias is supported")
            }
            inputs.append(addConstant(row.map { $0 * beta }, shape: [n], name: c.inputName(2) ?? "C"))
        }
        try emit(c, .fullyConnected(activation: .none), inputs: inputs, shape: [a.shape[0], n])
    }

    mutating func mapMatMul(_ c: ONNXNodeContext) throws {
        let a = try activation(c, 0)
        guard a.shape.count == 2 else { throw UnsupportedOperator("input of rank \(a.shape.count); only 2-D inputs are supported") }
        let b = try requiredConstant(c, 1, "B")
        guard b.shape.count == 2 else { throw UnsupportedOperator("B of rank \(b.shape.count); only a 2-D constant B is supported") }
        guard b.shape[0] == a.shape[1] else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.inputName(1) ?? "B",
                                           expected: "[\(a.shape[1]), outputs] (A is \(describe(a.shape)))", got: describe(b.shape))
        }
        let weights = ONNXLayout.transpose(b.floats, shape: b.shape, permutation: [1, 0])
        let w = addConstant(weights, shape: [b.shape[1], b.shape[0]], name: c.inputName(1) ?? "B")
        try emit(c, .fullyConnected(activation: .none), inputs: [a.tensor, w], shape: [a.shape[0], b.shape[1]])
    }

    // MARK: Constant

    mutating func mapConstant(_ c: ONNXNodeContext) throws {
        guard let a = c.node.attributes.first else { throw c.invalid("has no value attribute") }
        switch a.name {
        case "value":
            guard let t = a.t else { throw c.invalid("attribute 'value' holds no tensor") }
            setConstant(c, try ONNXConstant(t, fileName: fileName))
        case "value_float":
            setConstant(c, ONNXConstant(shape: [], values: .floats([a.f ?? 0])))
        case "value_floats":
            setConstant(c, ONNXConstant(shape: [a.floats.count], values: .floats(a.floats)))
        case "value_int":
            setConstant(c, ONNXConstant(shape: [], values: .integers([Int(clamping: a.i ?? 0)])))
        case "value_ints":
            setConstant(c, ONNXConstant(shape: [a.ints.count], values: .integers(a.ints.map { Int(clamping: $0) })))
        default:
            throw UnsupportedOperator("attribute '\(a.name)'")
        }
    }
}
