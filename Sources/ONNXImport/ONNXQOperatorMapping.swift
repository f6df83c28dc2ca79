import NeuralGraph

/// onnxruntime's QOperator form (QLinearConv, QLinearMatMul and com.microsoft's QGemm, QLinearAdd,
/// QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearSoftmax, QLinearSigmoid,
/// QLinearLeakyRelu, QLinearConcat): each node is expanded into the QDQ form it stands for —
/// DequantizeLinear of its quantized inputs, the float operator with the node's own attributes, and
/// QuantizeLinear to its output's scale and zero point — and those are imported as any QDQ model's
/// (activations rounded to their quantized types exactly as onnxruntime rounds them). An int32 bias
/// becomes the float bias it stands for: B × input scale × weight scale.
extension ONNXGraphBuilder {
    /// The com.microsoft operators the expansion takes.
    static let microsoftQOperators: Set<String> = [
        "QGemm", "QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearSoftmax",
        "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat",
    ]

    mutating func mapQOperator(_ c: ONNXNodeContext) throws {
        let node = c.node
        let base = "\(node.name.isEmpty ? "\(node.opType)#\(c.index)" : node.name)/"
        var expanded: [ONNXNodeProto] = []
        func input(_ k: Int) -> String { k < node.inputs.count ? node.inputs[k] : "" }
        func add(_ opType: String, _ inputs: [String], _ output: String, _ attributes: [ONNXAttribute] = []) {
            expanded.append(ONNXNodeProto(synthetic: opType, inputs: inputs, outputs: [output], name: base + opType,
                                          attributes: attributes, offset: node.offset))
        }
        /// DequantizeLinear of input k with its scale (k + 1) and zero point (k + 2); the float value's name.
        func dequantized(_ k: Int, axis: Int? = nil) -> String {
            let out = base + "x\(k)"
            add("DequantizeLinear", [input(k), input(k + 1), input(k + 2)], out,
                axis.map { [ONNXAttribute(synthetic: "axis", int: $0, offset: node.offset)] } ?? [])
            return out
        }
        /// QuantizeLinear of `value` to the node's output with scale input k and zero point k + 1.
        func quantized(_ value: String, scale k: Int) {
            add("QuantizeLinear", [value, input(k), input(k + 1)], node.outputs[0])
        }
        /// The float bias an int32 bias input stands for, as a constant named for this node.
        func floatBias(_ k: Int, inputScale: Int, weightScale: Int) throws -> String? {
            guard !input(k).isEmpty, let b = try value(input(k)) else { return nil }
            guard case .constant(let integers) = b, let values = integers.integers else {
                throw UnsupportedOperator("a bias that is not a constant of integers")
            }
            guard case .constant(let xs)? = try value(input(inputScale)), case .constant(let ws)? = try value(input(weightScale)),
                  xs.count == 1 else { throw UnsupportedOperator("scales that are not constants") }
            let w = ws.floats, x = xs.floats[0]
            guard w.count == 1 || w.count == values.count else { throw c.invalid("\(w.count) weight scales for a bias of \(values.count)") }
            let name = base + "bias"
            self.values[name] = .constant(ONNXConstant(shape: [values.count], values: .floats(values.enumerated().map { i, v in
                Float(v) * (x * w[w.count == 1 ? 0 : i])
            })))
            return name
        }
        func perChannel(_ k: Int) throws -> Bool {
            if case .constant(let s)? = try value(input(k)) { return s.count > 1 }
            return false
        }

        switch node.opType {
        case "QLinearConv":
            // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B
            let x = dequantized(0), w = dequantized(3, axis: try perChannel(4) ? 0 : nil)
            let b = try floatBias(8, inputScale: 1, weightScale: 4)
            add("Conv", [x, w] + (b.map { [$0] } ?? []), base + "y", node.attributes)
            quantized(base + "y", scale: 6)
        case "QLinearMatMul":
            // a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp (b's scales per column: axis 1)
            let a = dequantized(0), b = dequantized(3, axis: try perChannel(4) ? 1 : nil)
            add("MatMul", [a, b], base + "y")
            quantized(base + "y", scale: 6)
        case "QGemm":
            // A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale?, y_zp?; alpha, transA, transB
            let transB = try c.int("transB", 0) != 0
            let a = dequantized(0), b = dequantized(3, axis: try perChannel(4) ? (transB ? 0 : 1) : nil)
            let bias = try floatBias(6, inputScale: 1, weightScale: 4)
            let floatOutput = input(7).isEmpty
            add("Gemm", [a, b] + (bias.map { [$0] } ?? []), floatOutput ? node.outputs[0] : base + "y", node.attributes)
            if !floatOutput { quantized(base + "y", scale: 7) }
        case "QLinearAdd", "QLinearMul":
            // A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp
            let a = dequantized(0), b = dequantized(3)
            add(node.opType == "QLinearAdd" ? "Add" : "Mul", [a, b], base + "y")
            quantized(base + "y", scale: 6)
        case "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearSoftmax", "QLinearSigmoid", "QLinearLeakyRelu":
            // X, X_scale, X_zp, Y_scale, Y_zp
            guard try c.int("channels_last", 0) == 0 else { throw UnsupportedOperator("channels_last") }
            let floatOperator = ["QLinearGlobalAveragePool": "GlobalAveragePool", "QLinearAveragePool": "AveragePool",
                                 "QLinearSoftmax": "Softmax", "QLinearSigmoid": "Sigmoid", "QLinearLeakyRelu": "LeakyRelu"][node.opType] ?? ""
            let attributes = node.attributes.filter { !["channels_last", "opset"].contains($0.name) }
            add(floatOperator, [dequantized(0)], base + "y", attributes)
            quantized(base + "y", scale: 3)
        case "QLinearConcat":
            // Y_scale, Y_zp, then (X, X_scale, X_zp) per input
            guard node.inputs.count >= 5, (node.inputs.count - 2) % 3 == 0 else { throw c.invalid("takes Y_scale, Y_zp and triples of inputs") }
            let parts = stride(from: 2, to: node.inputs.count, by: 3).map { dequantized($0) }
            add("Concat", parts, base + "y", node.attributes)
            quantized(base + "y", scale: 0)
        default:
            throw UnsupportedOperator("")
        }
        for n in expanded { try importNode(n, index: c.index) }
        if let failed = expanded.first(where: { n in n.outputs.contains { name in if case .unavailable? = values[name] { return true } else { return false } } }) {
            throw UnsupportedOperator("its \(failed.opType) part")
        }
    }
}

extension ONNXNodeProto {
    /// A node made at import from another (a QOperator's parts), reported at that node's `offset`.
    init(synthetic opType: String, inputs: [String], outputs: [String], name: String, attributes: [ONNXAttribute], offset: Int) {
        self.offset = offset
        self.opType = opType
        self.inputs = inputs
        self.outputs = outputs
        self.name = name
        self.attributes = attributes
    }
}

extension ONNXAttribute {
    /// An integer attribute made at import.
    init(synthetic name: String, int: Int, offset: Int) {
        self.offset = offset
        self.name = name
        self.type = Kind.int.rawValue
        self.i = Int64(int)
    }
}
