import Foundation

/// A minimal protobuf writer for building ONNX models by hand in tests (the reverse of the
/// importer's reader): varints, fixed32, length-delimited fields and packed repeated scalars.
struct ProtoMessage {
    var bytes: [UInt8] = []

    static func varintBytes(_ value: UInt64) -> [UInt8] {
        var v = value, out: [UInt8] = []
        repeat {
            var byte = UInt8(v & 0x7F)
            v >>= 7
            if v != 0 { byte |= 0x80 }
            out.append(byte)
        } while v != 0
        return out
    }

    mutating func key(_ field: Int, _ wireType: Int) { bytes += Self.varintBytes(UInt64(field << 3 | wireType)) }

    mutating func varint(_ field: Int, _ value: Int64) {
        key(field, 0)
        bytes += Self.varintBytes(UInt64(bitPattern: value))
    }

    mutating func fixed32(_ field: Int, _ value: Float) {
        key(field, 5)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
    }

    mutating func data(_ field: Int, _ payload: [UInt8]) {
        key(field, 2)
        bytes += Self.varintBytes(UInt64(payload.count))
        bytes += payload
    }

    mutating func string(_ field: Int, _ value: String) { data(field, Array(value.utf8)) }

    mutating func message(_ field: Int, _ m: ProtoMessage) { data(field, m.bytes) }

    mutating func packedVarints(_ field: Int, _ values: [Int64]) {
        data(field, values.flatMap { Self.varintBytes(UInt64(bitPattern: $0)) })
    }

    mutating func packedFloats(_ field: Int, _ values: [Float]) {
        var payload: [UInt8] = []
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { payload += $0 } }
        data(field, payload)
    }
}

/// An ONNX attribute value for ``ONNXModelBuilder``.
enum Attr {
    case int(Int), float(Float), string(String), ints([Int]), floats([Float]), tensor(ProtoMessage)

    func encode(name: String) -> ProtoMessage {
        var a = ProtoMessage()
        a.string(1, name)
        switch self {
        case .float(let f): a.fixed32(2, f); a.varint(20, 1)
        case .int(let i): a.varint(3, Int64(i)); a.varint(20, 2)
        case .string(let s): a.string(4, s); a.varint(20, 3)
        case .tensor(let t): a.message(5, t); a.varint(20, 4)
        case .floats(let f): a.packedFloats(7, f); a.varint(20, 6)
        case .ints(let i): a.packedVarints(8, i.map(Int64.init)); a.varint(20, 7)
        }
        return a
    }
}

/// Builds ONNX ModelProto bytes: inputs, outputs, initializers, nodes.
struct ONNXModelBuilder {
    var opset = 13
    var nodes: [ProtoMessage] = []
    var initializers: [ProtoMessage] = []
    var inputs: [ProtoMessage] = []
    var outputs: [ProtoMessage] = []
    var valueInfo: [ProtoMessage] = []
    var producer = "FrameGraph tests"

    static func tensor(_ name: String, _ dims: [Int], floats: [Float], raw: Bool = true) -> ProtoMessage {
        var t = ProtoMessage()
        t.packedVarints(1, dims.map(Int64.init))
        t.varint(2, 1)
        t.string(8, name)
        if raw {
            var payload: [UInt8] = []
            for v in floats { withUnsafeBytes(of: v.bitPattern.littleEndian) { payload += $0 } }
            t.data(9, payload)
        } else {
            t.packedFloats(4, floats)
        }
        return t
    }

    static func float16Tensor(_ name: String, _ dims: [Int], floats: [Float]) -> ProtoMessage {
        var t = ProtoMessage()
        t.packedVarints(1, dims.map(Int64.init))
        t.varint(2, 10)
        t.string(8, name)
        var payload: [UInt8] = []
        for v in floats { withUnsafeBytes(of: Float16(v).bitPattern.littleEndian) { payload += $0 } }
        t.data(9, payload)
        return t
    }

    static func int64Tensor(_ name: String, _ dims: [Int], _ values: [Int]) -> ProtoMessage {
        var t = ProtoMessage()
        t.packedVarints(1, dims.map(Int64.init))
        t.varint(2, 7)
        t.string(8, name)
        t.packedVarints(7, values.map(Int64.init))
        return t
    }

    static func valueInfo(_ name: String, _ shape: [Int]?, elementType: Int64 = 1, symbolic: [Int: String] = [:]) -> ProtoMessage {
        var tensorType = ProtoMessage()
        tensorType.varint(1, elementType)
        if let shape {
            var s = ProtoMessage()
            for (k, d) in shape.enumerated() {
                var dim = ProtoMessage()
                if let p = symbolic[k] { dim.string(2, p) } else { dim.varint(1, Int64(d)) }
                s.message(1, dim)
            }
            tensorType.message(2, s)
        }
        var type = ProtoMessage()
        type.message(1, tensorType)
        var v = ProtoMessage()
        v.string(1, name)
        v.message(2, type)
        return v
    }

    mutating func input(_ name: String, _ shape: [Int]) { inputs.append(Self.valueInfo(name, shape)) }
    mutating func output(_ name: String, _ shape: [Int]? = nil) { outputs.append(Self.valueInfo(name, shape)) }
    mutating func initializer(_ name: String, _ dims: [Int], _ floats: [Float]) {
        initializers.append(Self.tensor(name, dims, floats: floats))
    }
    mutating func ints(_ name: String, _ values: [Int]) {
        initializers.append(Self.int64Tensor(name, [values.count], values))
    }

    mutating func node(_ op: String, _ inputs: [String], _ outputs: [String], name: String? = nil,
                       domain: String? = nil, _ attributes: [String: Attr] = [:]) {
        var n = ProtoMessage()
        for i in inputs { n.string(1, i) }
        for o in outputs { n.string(2, o) }
        n.string(3, name ?? "\(op)_\(nodes.count)")
        n.string(4, op)
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) { n.message(5, value.encode(name: key)) }
        if let domain { n.string(7, domain) }
        nodes.append(n)
    }

    func bytes() -> [UInt8] {
        var g = ProtoMessage()
        for n in nodes { g.message(1, n) }
        g.string(2, "test")
        for t in initializers { g.message(5, t) }
        for i in inputs { g.message(11, i) }
        for o in outputs { g.message(12, o) }
        for v in valueInfo { g.message(13, v) }
        var opsetID = ProtoMessage()
        opsetID.string(1, "")
        opsetID.varint(2, Int64(opset))
        var m = ProtoMessage()
        m.varint(1, 8)
        m.string(2, producer)
        m.message(7, g)
        m.message(8, opsetID)
        return m.bytes
    }
}
