/// NodeProto: input (1), output (2), name (3), op_type (4), attribute (5), domain (7).
struct ONNXNodeProto {
    var inputs: [String] = []
    var outputs: [String] = []
    var name = ""
    var opType = ""
    var domain = ""
    var attributes: [ONNXAttribute] = []
    /// Byte offset of the NodeProto (for errors).
    let offset: Int

    init(_ reader: ProtobufReader, offset: Int) throws(ProtobufError) {
        self.offset = offset
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): inputs.append(try r.string())
            case (2, .lengthDelimited): outputs.append(try r.string())
            case (3, .lengthDelimited): name = try r.string()
            case (4, .lengthDelimited): opType = try r.string()
            case (5, .lengthDelimited): attributes.append(try ONNXAttribute(try r.message(), offset: field.offset))
            case (7, .lengthDelimited): domain = try r.string()
            default: try r.skip(field.wireType)
            }
        }
    }

    /// The attribute called `name`, if present.
    func attribute(_ name: String) -> ONNXAttribute? {
        attributes.last { $0.name == name }
    }
}

/// AttributeProto: name (1), f (2), i (3), s (4), t (5), floats (7), ints (8), type (20). Subgraphs
/// (g, graphs) and the other kinds are skipped: no supported operator uses them.
struct ONNXAttribute {
    /// AttributeProto.AttributeType values.
    enum Kind: Int64 {
        case undefined = 0, float = 1, int = 2, string = 3, tensor = 4, graph = 5, floats = 6, ints = 7, strings = 8
    }

    var name = ""
    var type: Int64 = 0
    var f: Float?
    var i: Int64?
    var s: [UInt8]?
    var t: ONNXTensorProto?
    var floats: [Float] = []
    var ints: [Int64] = []
    /// Byte offset of the AttributeProto (for errors).
    let offset: Int

    init(_ reader: ProtobufReader, offset: Int) throws(ProtobufError) {
        self.offset = offset
        var r = reader
        while let field = try r.nextField() {
            switch (field.number, field.wireType) {
            case (1, .lengthDelimited): name = try r.string()
            case (2, .fixed32): f = try r.float()
            case (3, .varint): i = try r.int64()
            case (4, .lengthDelimited): s = Array(r.bytes[try r.lengthDelimited()])
            case (5, .lengthDelimited): t = try ONNXTensorProto(try r.message(), offset: field.offset)
            case (7, _) where field.wireType == .fixed32 || field.wireType == .lengthDelimited:
                try r.appendFloats(to: &floats, wireType: field.wireType, field: "AttributeProto.floats", offset: field.offset)
            case (8, _) where field.wireType == .varint || field.wireType == .lengthDelimited:
                try r.appendInt64s(to: &ints, wireType: field.wireType, field: "AttributeProto.ints", offset: field.offset)
            case (20, .varint): type = try r.int64()
            default: try r.skip(field.wireType)
            }
        }
    }

    /// The string value (UTF-8).
    var string: String? { s.map { String(decoding: $0, as: UTF8.self) } }
}
