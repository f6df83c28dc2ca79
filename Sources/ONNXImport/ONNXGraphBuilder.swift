import NeuralGraph

/// What a name in the ONNX graph stands for while the importer walks the nodes.
enum ONNXValue {
    /// An IR tensor computed at run time; `shape` is ONNX's (NCHW for 4-D; the IR tensor is NHWC).
    case activation(tensor: Int, shape: [Int])
    /// Data known at import (initializers, Constant nodes, folded values), in ONNX layout.
    case constant(ONNXConstant)
    /// Produced by an unsupported node: nodes that read it are skipped, so that every unsupported
    /// operator is still reported.
    case unavailable
}

/// Thrown inside an operator's mapping when the operator, or this use of it, cannot be imported; the
/// builder collects these and reports them all at once.
struct UnsupportedOperator: Error {
    /// Why ("group 3 of 12 channels"); empty when the operator type itself is unsupported.
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Turns a decoded ONNX graph into a ``NeuralGraph``: graph inputs become NHWC tensors, initializers
/// and Constant nodes become constants (decoded on first use), each node is mapped (see
/// ONNXOperatorMapping.swift) with its output shape computed and checked against `value_info`, and
/// every unsupported node is collected before failing.
struct ONNXGraphBuilder {
    let model: ONNXModelProto
    let proto: ONNXGraphProto
    let fileName: String
    let opset: Int
    var graph = NeuralGraph()
    var values: [String: ONNXValue] = [:]
    /// Initializers by name, decoded into `values` when first read.
    var initializers: [String: ONNXTensorProto] = [:]
    /// How many node inputs and graph outputs read each name.
    var uses: [String: Int] = [:]
    /// Static shapes from value_info and graph outputs, by name.
    var declaredShapes: [String: [Int]] = [:]
    /// IR node index of each convolution's output tensor, so that a BatchNormalization can be folded in.
    var convolutionOf: [Int: Int] = [:]
    /// Unsupported operators by description, in order of first appearance, with counts.
    var unsupported: [(name: String, count: Int)] = []
    /// Every node's outcome, in file order (for `model check`); the parts of an expanded QOperator
    /// node are not listed.
    var operators: [ImportedOperator] = []
    /// Nesting of ``importNode(_:index:)`` (the parts of an expanded node import at depth 1).
    var importDepth = 0
    /// Names of 4-D activations whose IR tensor holds ONNX's own element order (NHWC models' inputs
    /// and the outputs of their NCHW → NHWC Transposes) instead of the NCHW → NHWC permutation.
    var naturalOrder: Set<String> = []
    /// Notes for the metadata (symbolic batch dimensions fixed to 1).
    var notes: [String] = []

    /// Largest element count a tensor may have (larger ones are refused as damaged).
    static let maxElements = 1 << 40
    /// Largest constant the importer creates by broadcasting or folding (elements).
    static let maxFoldedElements = 1 << 24

    init(model: ONNXModelProto, fileName: String) throws(ModelError) {
        self.model = model
        self.fileName = fileName
        guard let graph = model.graph else {
            throw ModelError.malformed(file: fileName, reason: "the model has no graph (ModelProto.graph is missing)", offset: 0)
        }
        proto = graph
        guard let opset = model.defaultOpset, opset >= 1 else {
            throw ModelError.malformed(file: fileName, reason: "the model declares no opset version for the default ONNX domain",
                                       offset: 0)
        }
        self.opset = opset
    }

    func malformed(_ reason: String, at offset: Int?) -> ModelError {
        .malformed(file: fileName, reason: reason, offset: offset)
    }

    mutating func build() throws -> NeuralGraph {
        for t in proto.initializers where !t.name.isEmpty { initializers[t.name] = t }
        for info in proto.valueInfo + proto.outputs {
            if let shape = info.shape, let dims = Self.staticDims(shape) { declaredShapes[info.name] = dims }
        }
        try defineInputs()
        for node in proto.nodes { for name in node.inputs where !name.isEmpty { uses[name, default: 0] += 1 } }
        for output in proto.outputs { uses[output.name, default: 0] += 1 }

        for (index, node) in proto.nodes.enumerated() {
            let before = unsupported.map(\.count).reduce(0, +)
            let reasons = unsupported
            try importNode(node, index: index)
            let opName = node.domain.isEmpty || node.domain == "ai.onnx" ? node.opType : "\(node.domain):\(node.opType)"
            let name = node.name.isEmpty ? (node.outputs.first ?? "") : node.name
            if unsupported.map(\.count).reduce(0, +) > before {
                let reason = unsupported.first { u in !reasons.contains { $0.name == u.name && $0.count == u.count } }?.name ?? opName
                operators.append(ImportedOperator(index: index, type: opName, name: name, outcome: .unsupported(reason)))
            } else if node.outputs.allSatisfy({ o in if case .constant? = values[o] { return true } else { return o.isEmpty } }) {
                operators.append(ImportedOperator(index: index, type: opName, name: name, outcome: .folded("a constant, computed at import")))
            } else if node.outputs.contains(where: { o in if case .unavailable? = values[o] { return true } else { return false } }) {
                operators.append(ImportedOperator(index: index, type: opName, name: name, outcome: .unsupported("reads the output of an unsupported operator")))
            } else {
                operators.append(ImportedOperator(index: index, type: opName, name: name, outcome: .imported))
            }
        }
        guard unsupported.isEmpty else {
            throw ModelError.unsupportedOperations(file: fileName, operations: unsupported.map {
                $0.count == 1 ? $0.name : "\($0.name) ×\($0.count)"
            })
        }
        try defineOutputs()
        graph.metadata = metadata()
        return graph
    }

    // MARK: Inputs and outputs

    static func staticDims(_ shape: [ONNXDimension]) -> [Int]? {
        var dims: [Int] = []
        for d in shape {
            guard case .value(let v) = d, v >= 0, v <= Int64(Int32.max) else { return nil }
            dims.append(Int(v))
        }
        return dims
    }

    /// Graph inputs that are not initializers become the IR's inputs (NHWC for 4-D).
    mutating func defineInputs() throws {
        for input in proto.inputs where initializers[input.name] == nil {
            let label = "graph input '\(input.name)'"
            guard !input.name.isEmpty else { throw malformed("a graph input has no name", at: input.offset) }
            guard values[input.name] == nil else { throw malformed("\(label) is declared twice", at: input.offset) }
            guard input.elementType == ONNXDataType.float else {
                throw ModelError.invalidOperation(operation: label,
                                                  reason: "has element type \(ONNXDataType.name(input.elementType)); only FLOAT inputs are supported")
            }
            guard let dims = input.shape else {
                throw ModelError.invalidOperation(operation: label, reason: "has no shape; static shapes are needed (export with fixed input sizes)")
            }
            var shape: [Int] = []
            for (axis, d) in dims.enumerated() {
                switch d {
                case .value(let v) where v >= 1 && v <= Int64(Int32.max):
                    shape.append(Int(v))
                case .parameter where axis == 0, .unknown where axis == 0:
                    // A symbolic batch dimension ("batch_size", "N") is fixed to 1.
                    shape.append(1)
                    notes.append("\(input.name): batch dimension \(describeDimension(d)) fixed to 1")
                default:
                    throw ModelError.invalidOperation(
                        operation: label,
                        reason: "dimension \(axis) is \(describeDimension(d)); static shapes are needed (export with fixed input sizes, or fix it with onnxruntime's make_dynamic_shape_fixed)")
                }
            }
            try checkSize(shape, label: label, tensor: input.name)
            // An input that only feeds Transpose(perm [0, 3, 1, 2]) is NHWC already (tf2onnx exports):
            // it keeps its own order and the transposes become aliases.
            // Casts between (an fp16 model's input Cast) keep the order.
            func onlyTransposedToNCHW(_ name: String, depth: Int = 0) -> Bool {
                let readers = proto.nodes.filter { $0.inputs.contains(name) }
                return depth < 4 && !readers.isEmpty && readers.allSatisfy { r in
                    guard r.domain.isEmpty else { return false }
                    if r.opType == "Cast", let out = r.outputs.first { return onlyTransposedToNCHW(out, depth: depth + 1) }
                    return r.opType == "Transpose" && r.attribute("perm")?.ints == [0, 3, 1, 2]
                }
            }
            let natural = shape.count == 4 && onlyTransposedToNCHW(input.name)
            if natural { naturalOrder.insert(input.name) }
            let index = graph.addTensor(TensorValue(name: input.name, shape: natural ? shape : ONNXLayout.irShape(shape)))
            graph.inputs.append(index)
            values[input.name] = .activation(tensor: index, shape: shape)
        }
        func describeDimension(_ d: ONNXDimension) -> String {
            switch d {
            case .value(let v): return "\(v)"
            case .parameter(let p): return "symbolic ('\(p)')"
            case .unknown: return "unknown"
            }
        }
    }

    mutating func defineOutputs() throws {
        for output in proto.outputs {
            let label = "graph output '\(output.name)'"
            switch try value(output.name) {
            case .activation(let tensor, _)?:
                graph.outputs.append(tensor)
                if !graph.inputs.contains(tensor) { graph.tensors[tensor].name = output.name }
            case .constant?:
                throw ModelError.invalidOperation(operation: label, reason: "is a constant; there is nothing to compute")
            case .unavailable?, nil:
                throw malformed("\(label) is not produced by any node, initializer or graph input", at: output.offset)
            }
        }
        guard !graph.outputs.isEmpty else { throw malformed("the graph has no outputs", at: model.graphOffset) }
    }

    func checkSize(_ shape: [Int], label: String, tensor: String) throws {
        guard let n = ShapeArithmetic.elementCount(shape), n <= Self.maxElements else {
            throw ModelError.shapeMismatch(operation: label, tensor: tensor, expected: "at most \(Self.maxElements) elements",
                                           got: describe(shape))
        }
    }

    // MARK: Values

    /// What `name` stands for (decoding an initializer on first use), or nil when nothing defines it.
    mutating func value(_ name: String) throws -> ONNXValue? {
        if let v = values[name] { return v }
        guard let tensor = initializers[name] else { return nil }
        let c = try ONNXConstant(tensor, fileName: fileName)
        values[name] = .constant(c)
        return .constant(c)
    }

    /// Adds a float32 constant to the IR in the given (IR) shape.
    mutating func addConstant(_ values: [Float], shape: [Int], name: String) -> Int {
        graph.addTensor(TensorValue(name: name, shape: shape, constant: ConstantStorage(floats: values)))
    }

    // MARK: Nodes

    mutating func noteUnsupported(_ name: String) {
        if let k = unsupported.firstIndex(where: { $0.name == name }) {
            unsupported[k].count += 1
        } else {
            unsupported.append((name, 1))
        }
    }

    mutating func importNode(_ node: ONNXNodeProto, index: Int) throws {
        let opName = node.domain.isEmpty || node.domain == "ai.onnx" ? node.opType : "\(node.domain):\(node.opType)"
        guard !node.outputs.isEmpty, !node.outputs[0].isEmpty else {
            throw malformed("node #\(index) (\(opName)) has no output", at: node.offset)
        }
        func markUnavailable() { for o in node.outputs where !o.isEmpty { values[o] = .unavailable } }
        let qOperator = node.opType.hasPrefix("QLinear") && opName == node.opType || node.domain == "com.microsoft" && Self.microsoftQOperators.contains(node.opType)
        guard qOperator || opName == node.opType && Self.supportedOperators.contains(node.opType) else {
            noteUnsupported(opName)
            markUnavailable()
            return
        }
        for name in node.inputs where !name.isEmpty {
            switch try value(name) {
            case .unavailable?:
                markUnavailable()
                return
            case nil:
                throw malformed("node #\(index) '\(node.name)' (\(opName)) reads '\(name)', which is not a graph input, " +
                                "an initializer or an earlier node's output", at: node.offset)
            default: break
            }
        }
        var context = ONNXNodeContext(node: node, index: index)
        do {
            if qOperator { try mapQOperator(context) } else { try map(&context) }
        } catch let error as UnsupportedOperator {
            noteUnsupported(error.reason.isEmpty ? opName : "\(opName) (\(error.reason))")
            markUnavailable()
        }
    }

    /// Operator types the importer maps (a node of one of these may still be refused for its attributes).
    static let supportedOperators: Set<String> = [
        "Conv", "ConvTranspose", "BatchNormalization", "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "HardSigmoid",
        "HardSwish", "Clip", "Add", "Sub", "Mul", "Div", "Concat", "Resize", "Upsample", "MaxPool", "AveragePool",
        "GlobalAveragePool", "GlobalMaxPool", "Gemm", "MatMul", "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Softmax",
        "Pad", "Constant", "Identity", "Dropout", "Transpose", "ReduceMean", "QuantizeLinear", "DequantizeLinear", "Cast",
    ]

    // MARK: Metadata

    func metadata() -> [String: String] {
        var m: [String: String] = [
            "format": "ONNX", "onnx.ir_version": "\(model.irVersion)", "onnx.opset": "\(opset)",
            "layout": "NHWC (converted from ONNX's NCHW at import)",
        ]
        if !model.producerName.isEmpty {
            m["producer"] = model.producerVersion.isEmpty ? model.producerName : "\(model.producerName) \(model.producerVersion)"
        }
        if !proto.name.isEmpty { m["graph"] = proto.name }
        if !notes.isEmpty { m["notes"] = notes.joined(separator: "; ") }
        for entry in model.metadata where !entry.key.isEmpty { m["metadata.\(entry.key)"] = entry.value }
        return m
    }
}

/// The node being mapped, with accessors for its attributes.
struct ONNXNodeContext {
    let node: ONNXNodeProto
    let index: Int

    /// "Conv '/net/stem/Conv'" (or "Conv #3" when the node has no name), for errors.
    var label: String { node.name.isEmpty ? "\(node.opType) #\(index)" : "\(node.opType) '\(node.name)'" }
    /// The IR node's name.
    var irName: String { node.name.isEmpty ? "\(node.opType) #\(index) \(node.outputs[0])" : node.name }

    func invalid(_ reason: String) -> ModelError { .invalidOperation(operation: label, reason: reason) }

    func int(_ name: String, _ defaultValue: Int) throws -> Int {
        guard let a = node.attribute(name) else { return defaultValue }
        guard let i = a.i, let v = Int(exactly: i) else { throw invalid("attribute '\(name)' must be an integer") }
        return v
    }

    func float(_ name: String, _ defaultValue: Float) throws -> Float {
        guard let a = node.attribute(name) else { return defaultValue }
        if let f = a.f { return f }
        if let i = a.i { return Float(i) }
        throw invalid("attribute '\(name)' must be a float")
    }

    func ints(_ name: String) -> [Int]? {
        node.attribute(name).map { $0.ints.map { Int(clamping: $0) } }
    }

    func floats(_ name: String) -> [Float]? {
        node.attribute(name).map(\.floats)
    }

    func string(_ name: String, _ defaultValue: String) -> String {
        node.attribute(name)?.string ?? defaultValue
    }

    /// Name of input `k`, or nil when absent or omitted ("").
    func inputName(_ k: Int) -> String? {
        k < node.inputs.count && !node.inputs[k].isEmpty ? node.inputs[k] : nil
    }
}
