import NeuralGraph

/// TensorProto: dims (1), data_type (2), float_data (4), int32_data (5), int64_data (7), name (8),
/// raw_data (9), external_data (13), data_location (14). The data stays in the file's buffer until
/// ``ONNXConstant/init(_:fileName:)`` decodes it.
struct ONNXTensorProto {
    var dims: [Int64] = []
    var dataType: Int64 = 0
    var floatData: [Float] = []
    /// int32_data: int32, and float16/bfloat16/int8/uint8/bool bit patterns.
    var int32Data: [Int64] = []
    var int64Data: [Int64] = []
    var name = ""
    /// raw_data: little-endian elements (a slice of the file's buffer, not a copy).
    var rawData: ArraySlice<UInt8>?
    /// Offset of raw_data's payload.
    var rawDataOffset = 0
    /// external_data present, or data_location EXTERNAL (1).
    var isExternal = false
    /// Byte offset of the TensorProto.
    let offset: Int

    init(_ reader: ProtobufReader, offset: Int) throws(ProtobufError) {
        self.offset = offset
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, _) where field.wireType == .varint || field.wireType == .lengthDelimited:
                try r.appendInt64s(to: &dims, wireType: field.wireType, field: "TensorProto.dims", offset: field.offset)
            case (2, .varint): dataType = try r.int64()
            case (4, _) where field.wireType == .fixed32 || field.wireType == .lengthDelimited:
                try r.appendFloats(to: &floatData, wireType: field.wireType, field: "TensorProto.float_data", offset: field.offset)
            case (5, _) where field.wireType == .varint || field.wireType == .lengthDelimited:
                try r.appendInt64s(to: &int32Data, wireType: field.wireType, field: "TensorProto.int32_data", offset: field.offset)
            case (7, _) where field.wireType == .varint || field.wireType == .lengthDelimited:
                try r.appendInt64s(to: &int64Data, wireType: field.wireType, field: "TensorProto.int64_data", offset: field.offset)
            case (8, .lengthDelimited): name = try r.string()
            case (9, .lengthDelimited):
                let range = try r.lengthDelimited()
                rawData = r.bytes[range]
                rawDataOffset = range.lowerBound
            case (13, .lengthDelimited): isExternal = true; try r.skip(field.wireType)
            case (14, .varint): if try r.int64() == 1 { isExternal = true }
            default: try r.skip(field.wireType)
            }
        }
    }
}

/// TensorProto.DataType values and names.
enum ONNXDataType {
    static let float: Int64 = 1, uint8: Int64 = 2, int8: Int64 = 3, int32: Int64 = 6, int64: Int64 = 7
    static let float16: Int64 = 10, double: Int64 = 11

    static func name(_ type: Int64) -> String {
        let names: [Int64: String] = [0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
                                      7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32",
                                      13: "UINT64", 14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16"]
        return names[type] ?? "type \(type)"
    }
}

/// A constant tensor in ONNX layout (NCHW for 4-D), decoded: initializers, Constant nodes, and values
/// folded at import. Float16 becomes float32; int32 and int64 become Int.
struct ONNXConstant {
    enum Values {
        case floats([Float])
        case integers([Int])
    }

    var shape: [Int]
    var values: Values
    /// What the integers were stored as (int8/uint8 for quantized data; int32/int64; float32 for floats).
    var elementType: ElementType

    init(shape: [Int], values: Values, elementType: ElementType? = nil) {
        self.shape = shape
        self.values = values
        switch values {
        case .floats: self.elementType = elementType ?? .float32
        case .integers: self.elementType = elementType ?? .int64
        }
    }

    /// Number of elements.
    var count: Int {
        switch values {
        case .floats(let v): return v.count
        case .integers(let v): return v.count
        }
    }

    /// The elements as Float.
    var floats: [Float] {
        switch values {
        case .floats(let v): return v
        case .integers(let v): return v.map { Float($0) }
        }
    }

    /// The elements as Int (floats truncated), or nil for non-finite floats.
    var integers: [Int]? {
        switch values {
        case .integers(let v): return v
        case .floats(let v):
            var result: [Int] = []
            for x in v {
                guard x.isFinite, abs(x) < 9e18 else { return nil }
                result.append(Int(x))
            }
            return result
        }
    }

    var isInteger: Bool {
        if case .integers = values { return true }
        return false
    }

    /// Decodes `tensor`'s data. Throws ``ModelError/malformed(file:reason:offset:)`` when the data does
    /// not match the dimensions, and a clear refusal for external data and unsupported element types.
    init(_ tensor: ONNXTensorProto, fileName: String) throws(ModelError) {
        let label = "tensor '\(tensor.name)'"
        guard !tensor.isExternal else {
            throw ModelError.invalidOperation(
                operation: label,
                reason: "its data is stored in an external file, which is not supported; save the model with all data inside " +
                        "(onnx.save_model(model, path, save_as_external_data=False))")
        }
        var shape: [Int] = []
        for d in tensor.dims {
            guard d >= 0, d <= Int64(Int32.max) else {
                throw ModelError.malformed(file: fileName, reason: "\(label) has a negative or huge dimension \(d)", offset: tensor.offset)
            }
            shape.append(Int(d))
        }
        guard let count = ShapeArithmetic.elementCount(shape) else {
            throw ModelError.malformed(file: fileName, reason: "\(label) has an impossible shape \(describe(shape))", offset: tensor.offset)
        }
        func mismatch(_ got: Int, _ unit: String) -> ModelError {
            .malformed(file: fileName, reason: "\(label) has shape \(describe(shape)) (\(count) elements) but holds \(got) \(unit)",
                       offset: tensor.rawData != nil ? tensor.rawDataOffset : tensor.offset)
        }
        let raw = tensor.rawData
        func rawElements(_ size: Int) throws(ModelError) -> ArraySlice<UInt8>? {
            guard let raw else { return nil }
            guard raw.count % size == 0, raw.count / size == count else {
                throw mismatch(raw.count, "bytes of raw data (\(size) per element)")
            }
            return raw
        }
        func littleEndian(_ bytes: ArraySlice<UInt8>, _ index: Int, _ size: Int) -> UInt64 {
            var v: UInt64 = 0
            let base = bytes.startIndex + index * size
            for k in 0..<size { v |= UInt64(bytes[base + k]) << (8 * UInt64(k)) }
            return v
        }
        switch tensor.dataType {
        case ONNXDataType.float:
            if let raw = try rawElements(4) {
                values = .floats((0..<count).map { Float(bitPattern: UInt32(truncatingIfNeeded: littleEndian(raw, $0, 4))) })
            } else {
                guard tensor.floatData.count == count else { throw mismatch(tensor.floatData.count, "float_data values") }
                values = .floats(tensor.floatData)
            }
        case ONNXDataType.float16:
            if let raw = try rawElements(2) {
                values = .floats((0..<count).map { Float(Float16(bitPattern: UInt16(truncatingIfNeeded: littleEndian(raw, $0, 2)))) })
            } else {
                guard tensor.int32Data.count == count else { throw mismatch(tensor.int32Data.count, "int32_data values") }
                values = .floats(tensor.int32Data.map { Float(Float16(bitPattern: UInt16(truncatingIfNeeded: $0))) })
            }
        case ONNXDataType.int32:
            if let raw = try rawElements(4) {
                values = .integers((0..<count).map { Int(Int32(bitPattern: UInt32(truncatingIfNeeded: littleEndian(raw, $0, 4)))) })
            } else {
                guard tensor.int32Data.count == count else { throw mismatch(tensor.int32Data.count, "int32_data values") }
                values = .integers(tensor.int32Data.map { Int(Int32(truncatingIfNeeded: $0)) })
            }
        case ONNXDataType.int64:
            if let raw = try rawElements(8) {
                values = .integers((0..<count).map { Int(Int64(bitPattern: littleEndian(raw, $0, 8))) })
            } else {
                guard tensor.int64Data.count == count else { throw mismatch(tensor.int64Data.count, "int64_data values") }
                values = .integers(tensor.int64Data.map { Int($0) })
            }
        case ONNXDataType.int8, ONNXDataType.uint8:
            let signed = tensor.dataType == ONNXDataType.int8
            if let raw = try rawElements(1) {
                values = .integers(raw.map { signed ? Int(Int8(bitPattern: $0)) : Int($0) })
            } else {
                guard tensor.int32Data.count == count else { throw mismatch(tensor.int32Data.count, "int32_data values") }
                values = .integers(tensor.int32Data.map { signed ? Int(Int8(truncatingIfNeeded: $0)) : Int(UInt8(truncatingIfNeeded: $0)) })
            }
            elementType = signed ? .int8 : .uint8
            self.shape = shape
            return
        default:
            throw ModelError.invalidOperation(
                operation: label,
                reason: "data type \(ONNXDataType.name(tensor.dataType)) is not supported for constants; use FLOAT, FLOAT16, INT32 or INT64")
        }
        self.shape = shape
        switch tensor.dataType {
        case ONNXDataType.int32: elementType = .int32
        case ONNXDataType.int64: elementType = .int64
        default: elementType = .float32
        }
    }
}

func describe(_ shape: [Int]) -> String { ShapeArithmetic.describe(shape) }
