import NeuralGraph
/// The part of TFLite's schema (tensorflow/lite/schema/schema.fbs) the importer reads, decoded from a
/// ``FlatBufferReader`` into plain values. Field ids follow the schema; comments give its names.
struct TFLiteModelFile {
    let reader: FlatBufferReader
    /// Model.version (0).
    let version: UInt32
    /// Model.operator_codes (1).
    let operatorCodes: [TFLiteOperatorCode]
    /// Model.subgraphs (2), undecoded; ``subgraph(_:)`` decodes one.
    let subgraphs: FlatVector?
    /// Model.description (3).
    let description: String?
    /// Model.buffers (4), undecoded; ``buffer(_:)`` decodes one.
    let buffers: FlatVector?
    /// Model.metadata (6): name and buffer index of each entry.
    let metadata: [(name: String, buffer: Int)]

    var subgraphCount: Int { subgraphs?.count ?? 0 }

    init(reader: FlatBufferReader) throws(FlatBufferError) {
        self.reader = reader
        let root = try reader.rootTable()
        version = try root.scalar(0, default: UInt32(0))
        operatorCodes = try root.tables(1).map { t throws(FlatBufferError) in try TFLiteOperatorCode(t) }
        subgraphs = try root.vector(2, elementSize: 4)
        description = try root.string(3)
        buffers = try root.vector(4, elementSize: 4)
        metadata = try root.tables(6).map { t throws(FlatBufferError) in
            (try t.string(0) ?? "", Int(try t.scalar(1, default: UInt32(0))))
        }
    }

    /// Decodes subgraph `index`.
    func subgraph(_ index: Int) throws(FlatBufferError) -> TFLiteSubGraph {
        guard let subgraphs, index < subgraphs.count else {
            throw .outOfBounds(what: "subgraph \(index)", offset: 0, length: 0, bufferSize: reader.count)
        }
        return try TFLiteSubGraph(try subgraphs.table(index))
    }

    /// Where the data of buffer `index` lies in the file: Buffer.data (0) inline, or Buffer.offset (1) /
    /// size (2) for data stored after the flatbuffer (models over 2 GB). Nil when the buffer is empty.
    func buffer(_ index: Int) throws(FlatBufferError) -> Range<Int>? {
        guard let buffers, index >= 0, index < buffers.count else {
            throw .outOfBounds(what: "buffer \(index) of \(buffers?.count ?? 0)", offset: buffers?.position ?? 0,
                               length: 4, bufferSize: reader.count)
        }
        let table = try buffers.table(index)
        let offset: UInt64 = try table.scalar(1, default: 0)
        if offset > 1 {
            let size: UInt64 = try table.scalar(2, default: 0)
            guard offset <= UInt64(reader.count), size <= UInt64(reader.count) - offset else {
                throw .outOfBounds(what: "external data of buffer \(index)", offset: Int(clamping: offset),
                                   length: Int(clamping: size), bufferSize: reader.count)
            }
            return size == 0 ? nil : Int(offset)..<Int(offset + size)
        }
        guard let data = try table.vector(0, elementSize: 1), data.count > 0 else { return nil }
        return data.byteRange
    }
}

/// OperatorCode: deprecated_builtin_code (0, int8), custom_code (1), version (2), builtin_code (3, int32).
struct TFLiteOperatorCode {
    /// The operator: max(deprecated_builtin_code, builtin_code), as the schema prescribes.
    let builtin: Int
    let custom: String?
    let version: Int

    init(_ t: FlatTable) throws(FlatBufferError) {
        let deprecated: Int8 = try t.scalar(0, default: 0)
        custom = try t.string(1)
        version = Int(try t.scalar(2, default: Int32(1)))
        let code: Int32 = try t.scalar(3, default: 0)
        builtin = max(Int(deprecated), Int(code))
    }

    /// The name reports use: the builtin's name, or CUSTOM:<code>.
    var name: String {
        builtin == TFLiteBuiltin.custom ? "CUSTOM:\(custom ?? "?")" : TFLiteBuiltin.name(builtin)
    }
}

/// SubGraph: tensors (0), inputs (1), outputs (2), operators (3), name (4).
struct TFLiteSubGraph {
    let tensors: [TFLiteTensor]
    let inputs: [Int]
    let outputs: [Int]
    let operators: [TFLiteOperator]
    let name: String?

    init(_ t: FlatTable) throws(FlatBufferError) {
        tensors = try t.tables(0).map { t throws(FlatBufferError) in try TFLiteTensor(t) }
        inputs = try t.int32s(1)
        outputs = try t.int32s(2)
        operators = try t.tables(3).map { t throws(FlatBufferError) in try TFLiteOperator(t) }
        name = try t.string(4)
    }
}

/// Tensor: shape (0), type (1, TensorType), buffer (2), name (3), quantization (4), sparsity (6).
struct TFLiteTensor {
    let shape: [Int]
    let type: Int8
    let buffer: Int
    let name: String
    /// Whether QuantizationParameters.scale (2) is non-empty.
    let hasQuantizationScale: Bool
    /// QuantizationParameters: scale (2), zero_point (3), quantized_dimension (6); empty when none.
    let scales: [Float]
    let zeroPoints: [Int64]
    let quantizedDimension: Int
    /// Where the tensor table is (for error messages).
    let position: Int
    /// Sparsity parameters (6): the buffer holds only the stored values of a sparse constant.
    let sparsity: TFLiteSparsity?

    init(_ t: FlatTable) throws(FlatBufferError) {
        position = t.position
        if let s = try t.table(6) { sparsity = try TFLiteSparsity(s) } else { sparsity = nil }
        shape = try t.int32s(0)
        type = try t.scalar(1, default: 0)
        buffer = Int(try t.scalar(2, default: UInt32(0)))
        name = try t.string(3) ?? ""
        if let q = try t.table(4) {
            scales = try q.vector(2, elementSize: 4)?.floats() ?? []
            zeroPoints = try q.vector(3, elementSize: 8)?.int64s() ?? []
            quantizedDimension = Int(try q.scalar(6, default: Int32(0)))
        } else {
            (scales, zeroPoints, quantizedDimension) = ([], [], 0)
        }
        hasQuantizationScale = !scales.isEmpty
    }
}

/// Operator: opcode_index (0), inputs (1), outputs (2), builtin_options_type (3), builtin_options (4),
/// custom_options (5, bytes).
struct TFLiteOperator {
    let opcodeIndex: Int
    /// Tensor indices; -1 marks an omitted optional input.
    let inputs: [Int]
    let outputs: [Int]
    let optionsType: UInt8
    let options: FlatTable?
    /// Bytes of custom_options in the file.
    let customOptions: Range<Int>?
    let position: Int

    init(_ t: FlatTable) throws(FlatBufferError) {
        position = t.position
        opcodeIndex = Int(try t.scalar(0, default: UInt32(0)))
        inputs = try t.int32s(1)
        outputs = try t.int32s(2)
        (optionsType, options) = try t.union(type: 3, value: 4)
        customOptions = try t.vector(5, elementSize: 1)?.byteRange
    }
}

/// TFLite's TensorType values.
enum TFLiteTensorType {
    static let float32: Int8 = 0, float16: Int8 = 1, int32: Int8 = 2, uint8: Int8 = 3, int64: Int8 = 4
    static let string: Int8 = 5, bool: Int8 = 6, int16: Int8 = 7, complex64: Int8 = 8, int8: Int8 = 9
    static let float64: Int8 = 10, complex128: Int8 = 11, uint64: Int8 = 12, resource: Int8 = 13, variant: Int8 = 14
    static let uint32: Int8 = 15, uint16: Int8 = 16, int4: Int8 = 17, bfloat16: Int8 = 18

    static let names = ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16", "COMPLEX64", "INT8",
                        "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4", "BFLOAT16"]

    static func name(_ type: Int8) -> String {
        type >= 0 && Int(type) < names.count ? names[Int(type)] : "TYPE_\(type)"
    }

    /// Whether the type is one of the integer types quantized models use for activations and weights.
    static func isQuantizedInteger(_ type: Int8) -> Bool {
        type == uint8 || type == int8 || type == int16 || type == int4
    }

    /// The IR type of a TFLite type (int16 and int4 have none: FrameGraph runs int8 and uint8 models).
    static func elementType(_ type: Int8) -> ElementType {
        switch type {
        case float32: return .float32
        case float16: return .float16
        case int32: return .int32
        case int64: return .int64
        case int8: return .int8
        case uint8: return .uint8
        default: return .other
        }
    }
}
