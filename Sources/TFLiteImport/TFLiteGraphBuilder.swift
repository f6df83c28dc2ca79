import Foundation
import NeuralGraph

/// Turns a decoded TFLite model's first subgraph into a ``NeuralGraph``: checks indices, shapes and
/// quantization, copies constants, folds constant DEQUANTIZE nodes, maps operators (see
/// TFLiteOperatorMapping.swift) and collects every unsupported operator before failing.
struct TFLiteGraphBuilder {
    let model: TFLiteModelFile
    let fileName: String
    let subgraph: TFLiteSubGraph
    var graph = NeuralGraph()
    /// TFLite tensor index → IR tensor index (IR tensors are created when first used, so constants that
    /// became parameters and folded float16 weights do not appear).
    var irIndex: [Int: Int] = [:]
    /// Constants made at import (folded DEQUANTIZE outputs), by TFLite tensor index.
    var folded: [Int: ConstantStorage] = [:]
    /// Constants copied from buffers, by buffer index and TFLite type (tensors may share a buffer).
    var copied: [Int: ConstantStorage] = [:]
    /// Bytes copied from buffers so far; more than the file holds means buffers alias each other.
    var bytesCopied = 0
    /// Unsupported operators by description, in order of first appearance, with counts.
    var unsupported: [(name: String, count: Int)] = []
    /// Position of each description in `unsupported`.
    var unsupportedIndex: [String: Int] = [:]
    /// Every operator's outcome, in file order (for `model check`).
    var operators: [ImportedOperator] = []

    /// Largest element count a tensor may declare (larger ones are refused as damaged).
    static let maxElements = 1 << 40

    init(model: TFLiteModelFile, fileName: String) throws {
        self.model = model
        self.fileName = fileName
        guard model.subgraphCount > 0 else { throw ModelError.malformed(file: fileName, reason: "the model has no subgraphs", offset: nil) }
        subgraph = try model.subgraph(0)
    }

    func malformed(_ reason: String, at offset: Int?) -> ModelError {
        .malformed(file: fileName, reason: reason, offset: offset)
    }

    /// The name of operator `op`'s code, e.g. CONV_2D or CUSTOM:Convolution2DTransposeBias.
    func code(of op: TFLiteOperator) throws -> TFLiteOperatorCode {
        guard op.opcodeIndex < model.operatorCodes.count else {
            throw malformed("operator uses opcode \(op.opcodeIndex), but the model has \(model.operatorCodes.count)", at: op.position)
        }
        return model.operatorCodes[op.opcodeIndex]
    }

    mutating func build() throws -> NeuralGraph {
        try checkStructure()
        try checkQuantization()
        try foldConstantConversions()
        var mapped: [(index: Int, node: NeuralNode)] = []
        for (index, op) in subgraph.operators.enumerated() {
            let type = (try? code(of: op).name) ?? "?"
            let name = op.outputs.first.map { subgraph.tensors[$0].name } ?? ""
            switch try map(op, index: index) {
            case .node(let node):
                mapped.append((index, node))
                operators.append(ImportedOperator(index: index, type: type, name: name, outcome: .imported))
            case .folded:
                operators.append(ImportedOperator(index: index, type: type, name: name, outcome: .folded("a constant, computed at import")))
            case .unsupported(let description):
                noteUnsupported(description)
                operators.append(ImportedOperator(index: index, type: type, name: name, outcome: .unsupported(description)))
            }
        }
        guard unsupported.isEmpty else {
            throw ModelError.unsupportedOperations(file: fileName, operations: unsupported.map {
                $0.count == 1 ? $0.name : "\($0.name) ×\($0.count)"
            })
        }
        for (_, node) in mapped { graph.nodes.append(node) }
        graph.inputs = try subgraph.inputs.map { t throws in try tensor(t) }
        graph.outputs = try subgraph.outputs.map { t throws in try tensor(t) }
        try checkActivationTypes()
        graph.metadata = metadata()
        return graph
    }

    mutating func noteUnsupported(_ name: String) {
        if let k = unsupportedIndex[name] {
            unsupported[k].count += 1
        } else {
            unsupportedIndex[name] = unsupported.count
            unsupported.append((name, 1))
        }
    }

    // MARK: Checks

    /// Tensor indices in range, shapes non-negative and of sane size.
    func checkStructure() throws {
        let count = subgraph.tensors.count
        for (k, t) in (subgraph.inputs + subgraph.outputs).enumerated() where !(0..<count).contains(t) {
            throw malformed("subgraph input/output \(k) refers to tensor \(t), but there are \(count) tensors", at: nil)
        }
        for (index, op) in subgraph.operators.enumerated() {
            for t in op.inputs where t != -1 && !(0..<count).contains(t) {
                throw malformed("operator #\(index) refers to tensor \(t), but there are \(count) tensors", at: op.position)
            }
            for t in op.outputs where !(0..<count).contains(t) {
                throw malformed("operator #\(index) writes tensor \(t), but there are \(count) tensors", at: op.position)
            }
            guard !op.outputs.isEmpty else { throw malformed("operator #\(index) has no outputs", at: op.position) }
        }
        for t in subgraph.tensors {
            guard t.shape.count <= 8, let n = ShapeArithmetic.elementCount(t.shape), n <= Self.maxElements else {
                throw malformed("tensor '\(t.name)' has an impossible shape \(t.shape)", at: t.position)
            }
        }
    }

    /// Checks every quantized tensor's parameters (scale positive and finite, zero point within its
    /// type, per-channel counts matching the channel axis), and refuses the quantized types FrameGraph
    /// does not run (int16, int4) — before anything is allocated.
    func checkQuantization() throws {
        var used = Set(subgraph.inputs + subgraph.outputs)
        for op in subgraph.operators {
            used.formUnion(op.inputs.filter { $0 >= 0 })
            used.formUnion(op.outputs)
        }
        for index in used.sorted() {
            let t = subgraph.tensors[index]
            if t.type == TFLiteTensorType.int16 || t.type == TFLiteTensorType.int4 {
                throw ModelError.quantizedModel(file: fileName, tensor: t.name)
            }
            if let z = t.zeroPoints.first(where: { Int32(exactly: $0) == nil }) {
                throw malformed("tensor '\(t.name)': quantization: zero point \(z) is outside 32 bits", at: t.position)
            }
            if let problem = quantization(index).flatMap({ q in q.problem(type: TFLiteTensorType.elementType(t.type), shape: t.shape) }) {
                throw malformed("tensor '\(t.name)': quantization: \(problem)", at: t.position)
            }
        }
    }

    /// Tensor `index`'s quantization, for the integer types (int8, uint8, int32); nil for others and
    /// when the file gives none.
    func quantization(_ index: Int) -> Quantization? {
        let t = subgraph.tensors[index]
        guard t.type == TFLiteTensorType.int8 || t.type == TFLiteTensorType.uint8 || t.type == TFLiteTensorType.int32, !t.scales.isEmpty else { return nil }
        let zeroPoints = (t.zeroPoints.isEmpty ? [Int64](repeating: 0, count: t.scales.count) : t.zeroPoints).map { Int32(clamping: $0) }
        return Quantization(scales: t.scales, zeroPoints: zeroPoints, axis: t.scales.count > 1 ? t.quantizedDimension : nil)
    }

    /// Every activation (non-constant tensor) a node touches must be float32, or a quantized int8 or
    /// uint8 tensor.
    func checkActivationTypes() throws {
        for (index, node) in graph.nodes.enumerated() {
            for t in node.inputs + node.outputs where t >= 0 && graph.tensors[t].constant == nil {
                let v = graph.tensors[t]
                if v.elementType == .float32 || (v.isQuantized && (v.elementType == .int8 || v.elementType == .uint8)) { continue }
                throw ModelError.invalidOperation(
                    operation: "\(node.operation.name) #\(index) '\(node.name)'",
                    reason: "tensor '\(v.name)' is \(v.elementType)\(v.isQuantized ? "" : " without quantization"); activations are float32, or quantized int8 or uint8")
            }
        }
    }

    // MARK: Constants

    /// The bytes of tensor `index`'s buffer, or nil when it has none (an activation).
    func bufferRange(of index: Int) throws -> Range<Int>? {
        let t = subgraph.tensors[index]
        guard t.buffer != 0 else { return nil }
        return try model.buffer(t.buffer)
    }

    /// Whether tensor `index` holds constant data (from a buffer or folded at import).
    func isConstant(_ index: Int) throws -> Bool {
        try folded[index] != nil || bufferRange(of: index) != nil
    }

    /// Tensor `index`'s data as aligned storage (float16 converted to float32), or nil for an activation.
    mutating func constant(_ index: Int) throws -> ConstantStorage? {
        if let storage = folded[index] { return storage }
        guard let range = try bufferRange(of: index) else { return nil }
        let t = subgraph.tensors[index]
        let key = t.buffer &* 32 &+ Int(t.type & 31)
        if let storage = copied[key] { return storage }
        let elements = ShapeArithmetic.elementCount(t.shape) ?? 0
        let size: Int
        let type: ElementType
        switch t.type {
        case TFLiteTensorType.float32: (size, type) = (4, .float32)
        case TFLiteTensorType.float16: (size, type) = (2, .float16)
        case TFLiteTensorType.int32: (size, type) = (4, .int32)
        case TFLiteTensorType.int64: (size, type) = (8, .int64)
        case TFLiteTensorType.int8: (size, type) = (1, .int8)
        case TFLiteTensorType.uint8: (size, type) = (1, .uint8)
        default: (size, type) = (0, .other)
        }
        if let sparsity = t.sparsity {
            return try densify(index, sparsity: sparsity, range: range, elementSize: size)
        }
        if size > 0 && range.count != elements * size {
            throw malformed("tensor '\(t.name)' has \(elements) \(TFLiteTensorType.name(t.type)) elements, but its buffer \(t.buffer) holds \(range.count) bytes",
                            at: range.lowerBound)
        }
        bytesCopied += range.count
        guard bytesCopied <= model.reader.count else {
            throw malformed("constant buffers overlap (more bytes referenced than the file holds)", at: range.lowerBound)
        }
        let storage = model.reader.bytes.withUnsafeBytes { raw in
            let slice = UnsafeRawBufferPointer(rebasing: raw[range])
            return type == .float16 ? Self.float32(fromFloat16: slice) : ConstantStorage(copying: slice, elementType: type)
        }
        copied[key] = storage
        return storage
    }

    /// A sparse float constant expanded to its dense shape (TFLite's DENSIFY done at import).
    mutating func densify(_ index: Int, sparsity: TFLiteSparsity, range: Range<Int>, elementSize: Int) throws -> ConstantStorage {
        let t = subgraph.tensors[index]
        guard elementSize == 2 || elementSize == 4, t.type == TFLiteTensorType.float16 || t.type == TFLiteTensorType.float32 else {
            throw malformed("sparse tensor '\(t.name)' is \(TFLiteTensorType.name(t.type)); only float32 and float16 sparse constants are read", at: t.position)
        }
        guard range.count % elementSize == 0 else {
            throw malformed("sparse tensor '\(t.name)': its buffer of \(range.count) bytes is not whole \(TFLiteTensorType.name(t.type)) values", at: range.lowerBound)
        }
        bytesCopied += range.count
        let values: [Float] = model.reader.bytes.withUnsafeBytes { raw in
            let slice = UnsafeRawBufferPointer(rebasing: raw[range])
            return elementSize == 2 ? Self.floats(fromFloat16: slice)
                                    : (0..<(range.count / 4)).map { Float(bitPattern: UInt32(littleEndian: slice.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self))) }
        }
        switch sparsity.densify(values, shape: t.shape) {
        case .success(let dense):
            let storage = ConstantStorage(floats: dense)
            folded[index] = storage
            return storage
        case .failure(let error):
            throw malformed("sparse tensor '\(t.name)': \(error.reason)", at: t.position)
        }
    }

    /// Converts little-endian float16 bytes to float32 storage.
    static func float32(fromFloat16 bytes: UnsafeRawBufferPointer) -> ConstantStorage {
        ConstantStorage(floats: floats(fromFloat16: bytes))
    }

    /// Little-endian float16 bytes as float32 values.
    static func floats(fromFloat16 bytes: UnsafeRawBufferPointer) -> [Float] {
        (0..<(bytes.count / 2)).map { Float(Float16(bitPattern: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self)))) }
    }

    /// Integer constants (shape, axis and padding vectors), or nil when the tensor is not a constant
    /// int32/int64 vector.
    mutating func constantIntegers(_ index: Int) throws -> [Int]? {
        guard let storage = try constant(index), storage.elementType == .int32 || storage.elementType == .int64 else { return nil }
        return storage.integers()
    }

    /// Folds the operators that only change how a constant is stored — DENSIFY of a sparse constant
    /// (expanded at import) and DEQUANTIZE of a float16, float32 or quantized int8/uint8 constant — in
    /// execution order (a DEQUANTIZE reading a DENSIFY's output then folds too): each output becomes a
    /// float32 constant.
    mutating func foldConstantConversions() throws {
        for op in subgraph.operators {
            let builtin = try code(of: op).builtin
            guard builtin == TFLiteBuiltin.densify || builtin == TFLiteBuiltin.dequantize,
                  op.inputs.count == 1, op.inputs[0] >= 0, op.outputs.count == 1 else { continue }
            let input = subgraph.tensors[op.inputs[0]]
            if builtin == TFLiteBuiltin.densify {
                guard input.sparsity != nil else { continue }
            } else {
                guard input.type == TFLiteTensorType.float16 || input.type == TFLiteTensorType.float32
                    || ((input.type == TFLiteTensorType.int8 || input.type == TFLiteTensorType.uint8) && quantization(op.inputs[0]) != nil) else { continue }
            }
            guard var storage = try constant(op.inputs[0]) else { continue }
            if let q = quantization(op.inputs[0]), storage.elementType == .int8 || storage.elementType == .uint8 {
                // A quantized constant (a weight) dequantized once, at import.
                storage = ConstantStorage(floats: q.dequantize(storage.integers(), shape: input.shape))
            }
            let output = subgraph.tensors[op.outputs[0]]
            guard ShapeArithmetic.elementCount(output.shape) == storage.elementCount else {
                let name = builtin == TFLiteBuiltin.densify ? "DENSIFY" : "DEQUANTIZE"
                throw malformed("\(name) output '\(output.name)' has shape \(output.shape) but its input has \(storage.elementCount) elements",
                                at: op.position)
            }
            folded[op.outputs[0]] = storage
        }
    }

    // MARK: Tensors

    /// The IR tensor for TFLite tensor `index`, created on first use.
    mutating func tensor(_ index: Int) throws -> Int {
        if let existing = irIndex[index] { return existing }
        let t = subgraph.tensors[index]
        let storage = try constant(index)
        let type = storage?.elementType ?? TFLiteTensorType.elementType(t.type)
        // A folded constant (a dequantized weight) is float32: its old quantization no longer applies.
        let quantization = type == .float32 || type == .float16 ? nil : quantization(index)
        let ir = graph.addTensor(TensorValue(name: t.name, shape: t.shape, elementType: type, constant: storage, quantization: quantization))
        irIndex[index] = ir
        return ir
    }

    // MARK: Metadata

    func metadata() -> [String: String] {
        var m: [String: String] = ["format": "TFLite", "tflite.version": "\(model.version)"]
        if let d = model.description { m["description"] = d }
        if let name = subgraph.name, !name.isEmpty { m["subgraph"] = name }
        if model.subgraphCount > 1 {
            m["subgraphs"] = "\(model.subgraphCount) (only the first is imported)"
        }
        if !model.metadata.isEmpty {
            m["metadata"] = model.metadata.map(\.name).joined(separator: ", ")
        }
        for entry in model.metadata {
            // Short printable values (min_runtime_version "1.5.0") are recorded as they are.
            guard let range = try? model.buffer(entry.buffer), range.count <= 64 else { continue }
            let bytes = model.reader.bytes[range].prefix { $0 != 0 }
            if !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                m["metadata.\(entry.name)"] = String(decoding: bytes, as: UTF8.self)
            }
        }
        return m
    }
}
