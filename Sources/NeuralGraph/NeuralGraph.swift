/// A tensor of the graph: name, shape, element type, and data when it is a constant.
public struct TensorValue: Sendable {
    public var name: String
    /// Dimensions; activations are NHWC.
    public var shape: [Int]
    public var elementType: ElementType
    /// Set for weights and other constants (owned by the graph, aligned).
    public var constant: ConstantStorage?
    /// Set for quantized tensors (int8/uint8 activations and weights, int32 biases): how their
    /// integers stand for real numbers.
    public var quantization: Quantization?

    public init(name: String, shape: [Int], elementType: ElementType = .float32, constant: ConstantStorage? = nil,
                quantization: Quantization? = nil) {
        self.name = name
        self.shape = shape
        self.elementType = elementType
        self.constant = constant
        self.quantization = quantization
    }

    /// Whether the tensor is quantized (its integers stand for real numbers).
    public var isQuantized: Bool { quantization != nil }

    /// Number of elements.
    public var elementCount: Int { shape.reduce(1, *) }
}

/// One operation applied to tensors (by index into ``NeuralGraph/tensors``).
public struct NeuralNode: Sendable {
    public var operation: NeuralOperation
    public var inputs: [Int]
    public var outputs: [Int]
    /// The importer's name for it (TFLite: its index and output tensor; ONNX: the node name).
    public var name: String

    public init(operation: NeuralOperation, inputs: [Int], outputs: [Int], name: String) {
        self.operation = operation
        self.inputs = inputs
        self.outputs = outputs
        self.name = name
    }
}

/// A neural network in FrameGraph's intermediate representation: tensors (NHWC activations,
/// constants in aligned storage owned by the graph) and operations in execution order.
/// Importers (TFLite, ONNX) produce it; executors (XNNPACKRuntime) run it.
public struct NeuralGraph: Sendable {
    public var tensors: [TensorValue]
    public var nodes: [NeuralNode]
    /// Graph inputs and outputs (tensor indices).
    public var inputs: [Int]
    public var outputs: [Int]
    /// Free-form facts from the model file (format, description, metadata keys).
    public var metadata: [String: String]

    public init(tensors: [TensorValue] = [], nodes: [NeuralNode] = [], inputs: [Int] = [], outputs: [Int] = [],
                metadata: [String: String] = [:]) {
        self.tensors = tensors
        self.nodes = nodes
        self.inputs = inputs
        self.outputs = outputs
        self.metadata = metadata
    }

    /// Adds a tensor and returns its index.
    @discardableResult
    public mutating func addTensor(_ tensor: TensorValue) -> Int {
        tensors.append(tensor)
        return tensors.count - 1
    }

    /// Number of constant parameters (weights and biases): float and quantized elements.
    public var parameterCount: Int {
        tensors.filter { $0.constant != nil && ($0.elementType == .float32 || $0.elementType == .float16 || $0.isQuantized) }
            .reduce(0) { $0 + $1.elementCount }
    }
}

/// Errors found while importing or validating a model. Each names the operation and tensor involved.
public enum ModelError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The file is not a model of the expected format, or is damaged (with the byte offset when known).
    case malformed(file: String, reason: String, offset: Int?)
    /// Operations the runtime cannot run, all of them, by name and count.
    case unsupportedOperations(file: String, operations: [String])
    /// A quantized tensor of a type FrameGraph does not run (int16, int4).
    case quantizedModel(file: String, tensor: String)
    /// A tensor's shape does not fit the operation.
    case shapeMismatch(operation: String, tensor: String, expected: String, got: String)
    /// Something else about one operation is wrong.
    case invalidOperation(operation: String, reason: String)
    /// An input given at prediction time does not match the model's input.
    case inputMismatch(input: String, expected: String, got: String)
    /// The runtime (XNNPACK) refused the graph.
    case runtime(operation: String, reason: String)
    /// An encrypted model's team key could not be fetched from the key service (offline, refused,
    /// no key service configured); distinct from a damaged model.
    case keyFetch(keyID: String, reason: String)
    /// A model named by `reference` is in none of the `places` searched (each a folder or file, with
    /// why it was searched); `hint` says how to add a place.
    case notFound(reference: String, places: [String], hint: String)
    /// The model's tensors need more memory than the budget allows (`--model-budget`).
    case overBudget(file: String, neededBytes: Int, budgetBytes: Int, largest: String?)

    public var description: String {
        switch self {
        case .malformed(let file, let reason, let offset):
            return "\(file): not a valid model: \(reason)" + (offset.map { " (at byte \($0))" } ?? "")
        case .unsupportedOperations(let file, let operations):
            return "\(file): unsupported operations: \(operations.joined(separator: ", "))"
        case .quantizedModel(let file, let tensor):
            return "\(file): tensor '\(tensor)' has a quantized type FrameGraph does not run (it runs int8 and uint8 models, with int32 biases)"
        case .shapeMismatch(let operation, let tensor, let expected, let got):
            return "\(operation): tensor '\(tensor)' has shape \(got), expected \(expected)"
        case .invalidOperation(let operation, let reason):
            return "\(operation): \(reason)"
        case .inputMismatch(let input, let expected, let got):
            return "input '\(input)': expected \(expected), got \(got)"
        case .runtime(let operation, let reason):
            return "\(operation): \(reason)"
        case .keyFetch(let keyID, let reason):
            return "team key '\(keyID)': could not fetch it from the key service: \(reason)"
        case .notFound(let reference, let places, let hint):
            return "model not found: '\(reference)'; looked in: \(places.joined(separator: "; "))\(hint.isEmpty ? "" : "; \(hint)")"
        case .overBudget(let file, let needed, let budget, let largest):
            return "\(file): the model needs \(needed >> 20) MiB of tensors, over the memory budget of \(budget >> 20) MiB"
                + (largest.map { " (largest: \($0))" } ?? "") + "; raise it with --model-budget MB if this is intended"
        }
    }
}
