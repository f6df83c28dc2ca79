/// Shape arithmetic shared by ``NeuralGraph/validate()`` and importers: element counts and the output
/// size of windowed operations (convolution, pooling, transposed convolution). Every function checks
/// for overflow and returns nil for impossible values instead of trapping.
public enum ShapeArithmetic {
    /// Number of elements of `shape`, or nil when a dimension is negative or the product overflows.
    public static func elementCount(_ shape: [Int]) -> Int? {
        var count = 1
        for d in shape {
            guard d >= 0 else { return nil }
            let (p, o) = count.multipliedReportingOverflow(by: d)
            if o { return nil }
            count = p
        }
        return count
    }

    /// "[1, 256, 256, 3]".
    public static func describe(_ shape: [Int]) -> String {
        "[" + shape.map(String.init).joined(separator: ", ") + "]"
    }

    /// Output length along one axis of a convolution or pooling window: SAME gives ceil(input / stride),
    /// VALID ceil((input − effective window + 1) / stride), explicit floor((input + before + after −
    /// effective window) / stride) + 1, where the effective window is (window − 1) × dilation + 1.
    /// `before`/`after` are the explicit padding on this axis (ignored otherwise). Nil when not positive.
    public static func outputSize(input: Int, window: Int, stride: Int, dilation: Int, padding: Padding,
                                  vertical: Bool) -> Int? {
        guard input >= 0, window >= 1, stride >= 1, dilation >= 1,
              let effective = effectiveWindow(window, dilation) else { return nil }
        let size: Int
        switch padding {
        case .same:
            size = input / stride + (input % stride == 0 ? 0 : 1)
        case .valid:
            let span = input - effective + 1
            guard span > 0 else { return nil }
            size = span / stride + (span % stride == 0 ? 0 : 1)
        case .explicit(let top, let left, let bottom, let right):
            let (before, after) = vertical ? (top, bottom) : (left, right)
            guard before >= 0, after >= 0, before < Int32.max, after < Int32.max else { return nil }
            let padded = input + before + after
            guard padded >= effective else { return nil }
            size = (padded - effective) / stride + 1
        }
        return size > 0 ? size : nil
    }

    /// Output length along one axis of a transposed convolution: SAME gives input × stride, VALID
    /// (input − 1) × stride + effective window, explicit that minus the padding; `adjust` is added to all.
    public static func transposedOutputSize(input: Int, window: Int, stride: Int, dilation: Int, padding: Padding,
                                            adjust: Int, vertical: Bool) -> Int? {
        guard input >= 1, window >= 1, stride >= 1, dilation >= 1, adjust >= 0, adjust < Int32.max,
              let effective = effectiveWindow(window, dilation) else { return nil }
        let (scaled, o1) = input.multipliedReportingOverflow(by: stride)
        guard !o1 else { return nil }
        var size: Int
        switch padding {
        case .same:
            size = scaled
        case .valid:
            size = scaled - stride + effective
        case .explicit(let top, let left, let bottom, let right):
            let (before, after) = vertical ? (top, bottom) : (left, right)
            guard before >= 0, after >= 0, before < Int32.max, after < Int32.max else { return nil }
            size = scaled - stride + effective - before - after
        }
        let (total, o2) = size.addingReportingOverflow(adjust)
        guard !o2 else { return nil }
        size = total
        return size > 0 ? size : nil
    }

    static func effectiveWindow(_ window: Int, _ dilation: Int) -> Int? {
        let (span, overflow) = (window - 1).multipliedReportingOverflow(by: dilation)
        return overflow || span >= Int(Int32.max) * 1024 ? nil : span + 1
    }
}

extension NeuralGraph {
    /// Checks the whole graph before it runs: every tensor index is valid, every node has the inputs its
    /// operation needs with shapes that fit its parameters, and every node's declared output shape
    /// equals the shape computed from its inputs (convolutions with SAME/VALID/explicit padding and
    /// dilation, pooling, mean, pad, concatenation, reshape element counts, resize, NumPy broadcasting,
    /// PReLU, fully connected).
    ///
    /// Throws ``ModelError/shapeMismatch(operation:tensor:expected:got:)`` naming the operation
    /// (`CONV_2D #12 'name'`) and the tensor, or ``ModelError/invalidOperation(operation:reason:)``
    /// for a malformed node (missing inputs, zero stride, axis out of range).
    public func validate() throws(ModelError) {
        for (k, index) in (inputs + outputs).enumerated() where !tensors.indices.contains(index) {
            throw ModelError.invalidOperation(operation: "graph", reason: "graph \(k < inputs.count ? "input" : "output") refers to tensor \(index), but the graph has \(tensors.count) tensors")
        }
        for (index, node) in nodes.enumerated() {
            let label = "\(node.operation.name) #\(index) '\(node.name)'"
            for (k, t) in (node.inputs + node.outputs).enumerated() where !tensors.indices.contains(t) {
                throw ModelError.invalidOperation(operation: label, reason: "\(k < node.inputs.count ? "input" : "output") refers to tensor \(t), but the graph has \(tensors.count) tensors")
            }
            guard let outputIndex = node.outputs.first else {
                throw ModelError.invalidOperation(operation: label, reason: "has no output")
            }
            let output = tensors[outputIndex]
            let checker = ShapeChecker(graph: self, node: node, label: label)
            let expected = try checker.expectedOutput()
            switch expected {
            case .shape(let shape):
                guard shape == output.shape else {
                    throw ModelError.shapeMismatch(operation: label, tensor: output.name, expected: describe(shape),
                                                   got: describe(output.shape))
                }
            case .elementCount(let count):
                guard let got = elementCount(output.shape), got == count else {
                    throw ModelError.shapeMismatch(operation: label, tensor: output.name, expected: "\(count) elements",
                                                   got: describe(output.shape))
                }
            case .lastDimension(let last, let count):
                guard output.shape.last == last, let got = elementCount(output.shape), got == count else {
                    throw ModelError.shapeMismatch(operation: label, tensor: output.name,
                                                   expected: "[\(count / max(last, 1)), \(last)] (or the input's leading dimensions with \(last) last)",
                                                   got: describe(output.shape))
                }
            }
        }
    }
}

func describe(_ shape: [Int]) -> String { ShapeArithmetic.describe(shape) }

func elementCount(_ shape: [Int]) -> Int? { ShapeArithmetic.elementCount(shape) }

/// What a node's output must look like.
enum ExpectedShape {
    case shape([Int])
    /// Reshape: any shape with this many elements.
    case elementCount(Int)
    /// Fully connected: last dimension and total element count.
    case lastDimension(Int, count: Int)
}

/// Computes one node's expected output shape from its inputs and parameters.
struct ShapeChecker {
    let graph: NeuralGraph
    let node: NeuralNode
    let label: String

    func invalid(_ reason: String) -> ModelError { .invalidOperation(operation: label, reason: reason) }

    func mismatch(_ tensor: TensorValue, expected: String) -> ModelError {
        .shapeMismatch(operation: label, tensor: tensor.name, expected: expected, got: describe(tensor.shape))
    }

    /// Input `k` (must exist).
    func input(_ k: Int) throws(ModelError) -> TensorValue {
        guard k < node.inputs.count else {
            throw invalid("needs at least \(k + 1) inputs, has \(node.inputs.count)")
        }
        return graph.tensors[node.inputs[k]]
    }

    func requireInputs(_ range: ClosedRange<Int>) throws(ModelError) {
        guard range.contains(node.inputs.count) else {
            throw invalid("takes \(range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)") inputs, has \(node.inputs.count)")
        }
    }

    func rank4(_ t: TensorValue) throws(ModelError) -> [Int] {
        guard t.shape.count == 4 else { throw mismatch(t, expected: "rank 4 (NHWC)") }
        return t.shape
    }

    func expectedOutput() throws(ModelError) -> ExpectedShape {
        switch node.operation {
        case .conv2d(let p), .depthwiseConv2d(let p), .transposeConv2d(let p):
            return .shape(try convolution(p))
        case .fullyConnected:
            try requireInputs(2...3)
            let x = try input(0), w = try input(1)
            guard w.shape.count == 2, w.shape[0] > 0, w.shape[1] > 0 else { throw mismatch(w, expected: "[outputs, inputs]") }
            let (o, i) = (w.shape[0], w.shape[1])
            guard let n = elementCount(x.shape), n % i == 0 else {
                throw mismatch(x, expected: "a multiple of \(i) elements (weights take \(i) inputs)")
            }
            try checkBias(at: 2, count: o)
            let (total, overflow) = (n / i).multipliedReportingOverflow(by: o)
            guard !overflow else { throw invalid("output size overflows") }
            return .lastDimension(o, count: total)
        case .add, .subtract, .multiply, .divide, .minimum, .maximum:
            try requireInputs(2...2)
            return .shape(try broadcast(try input(0), try input(1)))
        case .prelu:
            try requireInputs(2...2)
            let x = try input(0), slope = try input(1)
            let shape = try broadcast(x, slope)
            guard shape == x.shape else { throw mismatch(slope, expected: "a slope that broadcasts to \(describe(x.shape))") }
            return .shape(shape)
        case .relu, .relu6, .reluN1To1, .leakyRelu, .hardSwish, .hardSigmoid, .logistic, .tanh, .clamp, .softmax, .power, .roundToFloat16,
             .quantize, .dequantize:
            try requireInputs(1...1)
            return .shape(try input(0).shape)
        case .detectionPostProcess(let p):
            return .shape(try detectionPostProcess(p))
        case .averagePool2d(let p), .maxPool2d(let p):
            try requireInputs(1...1)
            let x = try input(0)
            let s = try rank4(x)
            guard p.filterH >= 1, p.filterW >= 1, p.strideH >= 1, p.strideW >= 1 else {
                throw invalid("filter \(p.filterH)×\(p.filterW) and stride \(p.strideH)×\(p.strideW) must be at least 1")
            }
            try checkRuntimeLimits(["filter": [p.filterH, p.filterW], "stride": [p.strideH, p.strideW]])
            guard let h = ShapeArithmetic.outputSize(input: s[1], window: p.filterH, stride: p.strideH, dilation: 1,
                                                     padding: p.padding, vertical: true),
                  let w = ShapeArithmetic.outputSize(input: s[2], window: p.filterW, stride: p.strideW, dilation: 1,
                                                     padding: p.padding, vertical: false) else {
                throw mismatch(x, expected: "an input at least as large as the \(p.filterH)×\(p.filterW) window")
            }
            return .shape([s[0], h, w, s[3]])
        case .mean(let axes, let keepDims):
            try requireInputs(1...1)
            let x = try input(0)
            var reduced = Set<Int>()
            for a in axes {
                guard a >= 0, a < x.shape.count, reduced.insert(a).inserted else {
                    throw invalid("axes \(axes) must be distinct and within 0..<\(x.shape.count)")
                }
            }
            if keepDims { return .shape(x.shape.enumerated().map { reduced.contains($0.offset) ? 1 : $0.element }) }
            return .shape(x.shape.enumerated().filter { !reduced.contains($0.offset) }.map(\.element))
        case .pad(let paddings, _):
            try requireInputs(1...1)
            let x = try input(0)
            guard paddings.count == x.shape.count else {
                throw invalid("has \(paddings.count) padding pairs for a rank-\(x.shape.count) input")
            }
            var shape: [Int] = []
            for (d, (before, after)) in zip(x.shape, paddings) {
                guard before >= 0, after >= 0, before < Int32.max, after < Int32.max else {
                    throw invalid("paddings \(paddings) must be non-negative")
                }
                let (sum, overflow) = d.addingReportingOverflow(before + after)
                guard !overflow else { throw invalid("padded size overflows") }
                shape.append(sum)
            }
            return .shape(shape)
        case .reshape:
            try requireInputs(1...1)
            let x = try input(0)
            guard let n = elementCount(x.shape) else { throw mismatch(x, expected: "a shape with a finite element count") }
            return .elementCount(n)
        case .concatenation(let axis, _):
            guard !node.inputs.isEmpty else { throw invalid("has no inputs") }
            let first = try input(0)
            guard axis >= 0, axis < first.shape.count else {
                throw invalid("axis \(axis) is outside 0..<\(first.shape.count)")
            }
            var shape = first.shape
            for k in 1..<node.inputs.count {
                let t = try input(k)
                var expected = first.shape
                expected[axis] = t.shape.count == first.shape.count ? t.shape[axis] : -1
                guard t.shape == expected else {
                    throw mismatch(t, expected: "\(describe(first.shape)) except along axis \(axis)")
                }
                let (sum, overflow) = shape[axis].addingReportingOverflow(t.shape[axis])
                guard !overflow else { throw invalid("concatenated size overflows") }
                shape[axis] = sum
            }
            return .shape(shape)
        case .depthToSpace(let b):
            try requireInputs(1...1)
            let x = try input(0)
            let s = try rank4(x)
            try checkRuntimeLimits(["block": [b]])
            guard b >= 1, s[3] % (b * b) == 0 else { throw mismatch(x, expected: "channels divisible by \(b)² (block size \(b))") }
            let (h, o1) = s[1].multipliedReportingOverflow(by: b), (w, o2) = s[2].multipliedReportingOverflow(by: b)
            guard !o1, !o2 else { throw invalid("output size overflows") }
            return .shape([s[0], h, w, s[3] / (b * b)])
        case .resizeBilinear, .resizeNearest:
            try requireInputs(1...1)
            let x = try input(0)
            let s = try rank4(x)
            let out = graph.tensors[node.outputs[0]]
            guard out.shape.count == 4, out.shape[1] > 0, out.shape[2] > 0 else {
                throw mismatch(out, expected: "[\(s[0]), height, width, \(s[3])]")
            }
            return .shape([s[0], out.shape[1], out.shape[2], s[3]])
        }
    }

    /// Largest window, stride or dilation the runtime takes (XNNPACK keeps them in 32-bit fields and
    /// multiplies them; real networks use single digits).
    static let maxWindowParameter = 1 << 16

    /// Refuses windows, strides and dilations beyond ``maxWindowParameter``, naming which.
    func checkRuntimeLimits(_ values: KeyValuePairs<String, [Int]>) throws(ModelError) {
        for (name, pair) in values where pair.contains(where: { $0 > Self.maxWindowParameter }) {
            throw invalid("\(name) \(pair.map(String.init).joined(separator: "×")) is larger than the runtime's limit of \(Self.maxWindowParameter)")
        }
    }

    func checkBias(at k: Int, count: Int) throws(ModelError) {
        guard k < node.inputs.count else { return }
        let b = try input(k)
        guard elementCount(b.shape) == count else { throw mismatch(b, expected: "\(count) elements (one per output channel)") }
    }

    func convolution(_ p: ConvolutionParameters) throws(ModelError) -> [Int] {
        try requireInputs(2...3)
        let x = try input(0), f = try input(1)
        let s = try rank4(x), k = try rank4(f)
        guard p.strideH >= 1, p.strideW >= 1, p.dilationH >= 1, p.dilationW >= 1 else {
            throw invalid("stride \(p.strideH)×\(p.strideW) and dilation \(p.dilationH)×\(p.dilationW) must be at least 1")
        }
        guard k[1] >= 1, k[2] >= 1 else { throw mismatch(f, expected: "a kernel of at least 1×1") }
        try checkRuntimeLimits(["kernel": [k[1], k[2]], "stride": [p.strideH, p.strideW], "dilation": [p.dilationH, p.dilationW]])
        let channels: Int
        switch node.operation {
        case .depthwiseConv2d:
            let (c, overflow) = s[3].multipliedReportingOverflow(by: p.depthMultiplier)
            guard p.depthMultiplier >= 1, !overflow, k[0] == 1, k[3] == c else {
                throw mismatch(f, expected: "[1, h, w, \(s[3]) × \(p.depthMultiplier)] for \(s[3]) input channels")
            }
            channels = c
        case .transposeConv2d:
            guard k[3] == s[3], k[0] >= 1 else { throw mismatch(f, expected: "[outputs, h, w, \(s[3])]") }
            channels = k[0]
        default:
            guard k[3] >= 1, k[0] >= 1, s[3] % k[3] == 0 else {
                throw mismatch(f, expected: "[outputs, h, w, \(s[3])] (or a divisor of \(s[3]) for grouped convolution)")
            }
            channels = k[0]
        }
        try checkBias(at: 2, count: channels)
        let h: Int?, w: Int?
        if case .transposeConv2d = node.operation {
            h = ShapeArithmetic.transposedOutputSize(input: s[1], window: k[1], stride: p.strideH, dilation: p.dilationH,
                                                      padding: p.padding, adjust: p.adjustH, vertical: true)
            w = ShapeArithmetic.transposedOutputSize(input: s[2], window: k[2], stride: p.strideW, dilation: p.dilationW,
                                                      padding: p.padding, adjust: p.adjustW, vertical: false)
        } else {
            h = ShapeArithmetic.outputSize(input: s[1], window: k[1], stride: p.strideH, dilation: p.dilationH,
                                            padding: p.padding, vertical: true)
            w = ShapeArithmetic.outputSize(input: s[2], window: k[2], stride: p.strideW, dilation: p.dilationW,
                                            padding: p.padding, vertical: false)
        }
        guard let h, let w else {
            throw mismatch(x, expected: "an input that fits the \(k[1])×\(k[2]) kernel with padding \(p.padding)")
        }
        return [s[0], h, w, channels]
    }

    /// SSD post-processing: box encodings [1, N, ≥ 4], scores [1, N, classes (+ 1)], anchors [N, 4];
    /// four outputs [1, K, 4], [1, K], [1, K], [1]. Returns the first; checks the other three.
    func detectionPostProcess(_ p: DetectionPostProcessParameters) throws(ModelError) -> [Int] {
        try requireInputs(3...3)
        if let problem = p.problem { throw invalid(problem) }
        let boxes = try input(0), scores = try input(1), anchors = try input(2)
        guard boxes.shape.count == 3, boxes.shape[0] == 1, boxes.shape[2] >= 4 else {
            throw mismatch(boxes, expected: "[1, anchors, 4 or more] box encodings")
        }
        let n = boxes.shape[1]
        guard scores.shape.count == 3, scores.shape[0] == 1, scores.shape[1] == n,
              scores.shape[2] == p.classes || scores.shape[2] == p.classes + 1 else {
            throw mismatch(scores, expected: "[1, \(n), \(p.classes) or \(p.classes + 1)] class scores (num_classes \(p.classes), with or without background)")
        }
        guard anchors.shape == [n, 4] else { throw mismatch(anchors, expected: "[\(n), 4] anchors (y, x, h, w)") }
        let k = p.outputRows
        let expected = [[1, k, 4], [1, k], [1, k], [1]]
        guard node.outputs.count == 4 else { throw invalid("has \(node.outputs.count) outputs; boxes, classes, scores and count are 4") }
        for (t, shape) in zip(node.outputs.dropFirst(), expected.dropFirst()) where graph.tensors[t].shape != shape {
            throw mismatch(graph.tensors[t], expected: describe(shape))
        }
        return expected[0]
    }

    /// NumPy broadcasting of two shapes.
    func broadcast(_ a: TensorValue, _ b: TensorValue) throws(ModelError) -> [Int] {
        let rank = max(a.shape.count, b.shape.count)
        let pa = Array(repeating: 1, count: rank - a.shape.count) + a.shape
        let pb = Array(repeating: 1, count: rank - b.shape.count) + b.shape
        var shape: [Int] = []
        for (x, y) in zip(pa, pb) {
            guard x == y || x == 1 || y == 1 else {
                throw mismatch(b, expected: "a shape that broadcasts with \(describe(a.shape))")
            }
            shape.append(x == 1 ? y : x)
        }
        return shape
    }
}
