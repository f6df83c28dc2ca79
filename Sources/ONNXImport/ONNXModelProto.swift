/// The part of ONNX's schema (onnx/onnx.proto3) the importer reads, decoded from a ``ProtobufReader``
/// into plain values. Field numbers follow the schema; comments give its names. Unknown fields are
/// skipped, as protobuf prescribes.
struct ONNXModelProto {
    /// ir_version (1).
    var irVersion: Int64 = 0
    /// opset_import (8).
    var opsets: [ONNXOperatorSetID] = []
    /// producer_name (2), producer_version (3).
    var producerName = "", producerVersion = ""
    /// graph (7).
    var graph: ONNXGraphProto?
    /// Where the graph field starts (for errors about the graph as a whole).
    var graphOffset = 0
    /// metadata_props (14): StringStringEntryProto key (1), value (2).
    var metadata: [(key: String, value: String)] = []

    /// Decodes a ModelProto; `readingGraph: false` skips the graph (for the model's metadata alone).
    init(_ reader: ProtobufReader, readingGraph: Bool = true) throws(ProtobufError) {
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .varint): irVersion = try r.int64()
            case (7, .lengthDelimited) where !readingGraph:
                graphOffset = field.offset
                try r.skip(field.wireType)
            case (2, .lengthDelimited): producerName = try r.string()
            case (3, .lengthDelimited): producerVersion = try r.string()
            case (7, .lengthDelimited):
                graphOffset = field.offset
                graph = try ONNXGraphProto(try r.message())
            case (8, .lengthDelimited): opsets.append(try ONNXOperatorSetID(try r.message()))
            case (14, .lengthDelimited):
                var entry = try r.message()
                var key = "", value = ""
                while let f = try entry.nextField() {
                    switch (f.number, f.wireType) {
                    case (1, .lengthDelimited): key = try entry.string()
                    case (2, .lengthDelimited): value = try entry.string()
                    default: try entry.skip(f.wireType)
                    }
                }
                metadata.append((key, value))
            default: try r.skip(field.wireType)
            }
        }
    }

    /// The opset version of the default domain ("" or "ai.onnx"), or nil when the model declares none.
    var defaultOpset: Int? {
        opsets.last { $0.domain.isEmpty || $0.domain == "ai.onnx" }.map { Int(clamping: $0.version) }
    }
}

/// OperatorSetIdProto: domain (1), version (2).
struct ONNXOperatorSetID {
    var domain = ""
    var version: Int64 = 0

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): domain = try r.string()
            case (2, .varint): version = try r.int64()
            default: try r.skip(field.wireType)
            }
        }
    }
}

/// GraphProto: node (1), name (2), initializer (5), input (11), output (12), value_info (13).
struct ONNXGraphProto {
    var nodes: [ONNXNodeProto] = []
    var name = ""
    var initializers: [ONNXTensorProto] = []
    var inputs: [ONNXValueInfo] = []
    var outputs: [ONNXValueInfo] = []
    var valueInfo: [ONNXValueInfo] = []

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): nodes.append(try ONNXNodeProto(try r.message(), offset: field.offset))
            case (2, .lengthDelimited): name = try r.string()
            case (5, .lengthDelimited): initializers.append(try ONNXTensorProto(try r.message(), offset: field.offset))
            case (11, .lengthDelimited): inputs.append(try ONNXValueInfo(try r.message(), offset: field.offset))
            case (12, .lengthDelimited): outputs.append(try ONNXValueInfo(try r.message(), offset: field.offset))
            case (13, .lengthDelimited): valueInfo.append(try ONNXValueInfo(try r.message(), offset: field.offset))
            default: try r.skip(field.wireType)
            }
        }
    }
}

/// One dimension of a ``ONNXValueInfo``'s shape: a number, a symbolic name, or unknown.
enum ONNXDimension: Equatable {
    case value(Int64)
    case parameter(String)
    case unknown
}

/// ValueInfoProto: name (1), type (2) → TypeProto.tensor_type (1) → elem_type (1), shape (2) →
/// TensorShapeProto.dim (1) → dim_value (1) / dim_param (2).
struct ONNXValueInfo {
    var name = ""
    /// TensorProto.DataType of the elements (0 when not a tensor type or unset).
    var elementType: Int64 = 0
    /// Nil when the type carries no shape at all.
    var shape: [ONNXDimension]?
    /// Byte offset of the ValueInfoProto.
    let offset: Int

    init(_ reader: ProtobufReader, offset: Int) throws(ProtobufError) {
        self.offset = offset
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try r.string()
            case (2, .lengthDelimited):
                var type = try r.message()
                while let f = try type.nextField() {
                    guard f.number == 1, f.wireType == .lengthDelimited else { try type.skip(f.wireType); continue }
                    try readTensorType(try type.message())
                }
            default: try r.skip(field.wireType)
            }
        }
    }

    private mutating func readTensorType(_ reader: ProtobufReader) throws(ProtobufError) {
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .varint): elementType = try r.int64()
            case (2, .lengthDelimited):
                var dims: [ONNXDimension] = []
                var shape = try r.message()
                while let f = try shape.nextField() {
                    guard f.number == 1, f.wireType == .lengthDelimited else { try shape.skip(f.wireType); continue }
                    var dim = try shape.message()
                    var value = ONNXDimension.unknown
                    while let d = try dim.nextField() {
                        switch (d.number, d.wireType) {
                        case (1, .varint): value = .value(try dim.int64())
                        case (2, .lengthDelimited): value = .parameter(try dim.string())
                        default: try dim.skip(d.wireType)
                        }
                    }
                    dims.append(value)
                }
                self.shape = dims
            default: try r.skip(field.wireType)
            }
        }
    }
}
