/// Errors from reading protobuf wire format. Every case carries the byte offset where the read went wrong.
public enum ProtobufError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A read of `length` bytes at `offset` would leave the message (which ends at `end`).
    case truncated(what: String, offset: Int, length: Int, end: Int)
    /// A varint longer than 10 bytes, or one that overflows 64 bits.
    case invalidVarint(offset: Int)
    /// A field key with field number 0, or a wire type that is not 0, 1, 2 or 5 (groups are not supported).
    case invalidKey(offset: Int, key: UInt64)
    /// A known field arrived with a wire type its schema does not allow.
    case wrongWireType(field: String, offset: Int, wireType: Int)
    /// Messages nested deeper than the reader allows.
    case tooDeep(offset: Int, limit: Int)

    /// The byte offset the error refers to.
    public var offset: Int {
        switch self {
        case .truncated(_, let offset, _, _), .invalidVarint(let offset), .invalidKey(let offset, _),
             .wrongWireType(_, let offset, _), .tooDeep(let offset, _):
            return offset
        }
    }

    /// A one-line explanation without the offset (callers add it).
    public var reason: String {
        switch self {
        case .truncated(let what, _, let length, let end):
            return "\(what) of \(length) bytes runs past the end of its message at byte \(end) (truncated or damaged file)"
        case .invalidVarint:
            return "varint is longer than 10 bytes or overflows 64 bits"
        case .invalidKey(_, let key):
            return "field key \(key) (field \(key >> 3), wire type \(key & 7)) is not valid protobuf"
        case .wrongWireType(let field, _, let wireType):
            return "field \(field) has wire type \(wireType), which its type does not allow"
        case .tooDeep(_, let limit):
            return "messages are nested more than \(limit) deep"
        }
    }

    public var description: String { "\(reason) (at byte \(offset))" }
}

/// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/). Groups (3, 4) are refused.
public enum WireType: Int, Sendable {
    case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5
}

/// A bounds-checked reader of protobuf wire format over a byte buffer: field keys, varints, 32- and
/// 64-bit fixed values, length-delimited fields (strings, bytes, sub-messages) and packed repeated
/// scalars. Every read checks against the end of the current message and throws ``ProtobufError``
/// with the byte offset instead of trapping.
///
/// Work and memory are bounded: a reader only moves forward, every field consumes at least one byte,
/// nothing it returns holds more elements than the bytes it was read from, and sub-messages may be
/// nested at most ``maxDepth`` deep.
///
/// ```swift
/// var reader = ProtobufReader(bytes: fileBytes)
/// while let field = try reader.nextField() {
///     switch (field.number, field.wireType) {
///     case (1, .varint): version = try reader.varint()
///     case (7, .lengthDelimited): graph = try Graph(try reader.message())
///     default: try reader.skip(field.wireType)
///     }
/// }
/// ```
public struct ProtobufReader {
    /// The whole buffer (shared by every sub-message reader).
    public let bytes: [UInt8]
    /// Offset of the next byte to read.
    public private(set) var position: Int
    /// Offset just past the current message.
    public let end: Int
    /// How deep this message is nested (0 for the top level).
    public let depth: Int
    /// The deepest nesting allowed.
    public static let maxDepth = 32

    /// A reader of the whole of `bytes`.
    public init(bytes: [UInt8]) {
        self.init(bytes: bytes, range: 0..<bytes.count, depth: 0)
    }

    init(bytes: [UInt8], range: Range<Int>, depth: Int) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
        self.depth = depth
    }

    /// Whether the whole message has been read.
    public var isAtEnd: Bool { position >= end }

    /// The next field's number and wire type, or nil at the end of the message.
    public mutating func nextField() throws(ProtobufError) -> (number: Int, wireType: WireType, offset: Int)? {
        guard position < end else { return nil }
        let offset = position
        let key = try varint()
        let number = key >> 3
        guard number > 0, number <= 0x1FFF_FFFF, let wireType = WireType(rawValue: Int(key & 7)) else {
            throw .invalidKey(offset: offset, key: key)
        }
        return (Int(number), wireType, offset)
    }

    /// A base-128 varint (at most 10 bytes).
    public mutating func varint() throws(ProtobufError) -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw .truncated(what: "varint", offset: start, length: position - start + 1, end: end) }
            let byte = bytes[position]
            position += 1
            if shift == 63 && byte > 1 { throw .invalidVarint(offset: start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw .invalidVarint(offset: start) }
        }
    }

    /// A varint read as a signed 64-bit integer (two's complement, as int64/int32 fields are written).
    public mutating func int64() throws(ProtobufError) -> Int64 {
        Int64(bitPattern: try varint())
    }

    /// A little-endian 32-bit value.
    public mutating func fixed32() throws(ProtobufError) -> UInt32 {
        try require(4, "fixed32 value")
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << (8 * UInt32(i)) }
        position += 4
        return v
    }

    /// A little-endian 64-bit value.
    public mutating func fixed64() throws(ProtobufError) -> UInt64 {
        try require(8, "fixed64 value")
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }

    /// A float (fixed32 bit pattern).
    public mutating func float() throws(ProtobufError) -> Float {
        Float(bitPattern: try fixed32())
    }

    /// The byte range of a length-delimited field's payload (the reader moves past it).
    public mutating func lengthDelimited() throws(ProtobufError) -> Range<Int> {
        let start = position
        let length = try varint()
        guard length <= UInt64(end - position) else {
            throw .truncated(what: "length-delimited field", offset: start, length: Int(clamping: length), end: end)
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    /// A length-delimited field as a UTF-8 string (invalid UTF-8 is replaced, not refused).
    public mutating func string() throws(ProtobufError) -> String {
        let range = try lengthDelimited()
        return String(decoding: bytes[range], as: UTF8.self)
    }

    /// A reader of the sub-message in a length-delimited field.
    public mutating func message() throws(ProtobufError) -> ProtobufReader {
        let start = position
        guard depth < Self.maxDepth else { throw .tooDeep(offset: start, limit: Self.maxDepth) }
        let range = try lengthDelimited()
        return ProtobufReader(bytes: bytes, range: range, depth: depth + 1)
    }

    /// Skips a field's value.
    public mutating func skip(_ wireType: WireType) throws(ProtobufError) {
        switch wireType {
        case .varint: _ = try varint()
        case .fixed64: try require(8, "fixed64 value"); position += 8
        case .fixed32: try require(4, "fixed32 value"); position += 4
        case .lengthDelimited: _ = try lengthDelimited()
        }
    }

    /// Appends a repeated int64 field's values: one varint, or a packed run of them.
    public mutating func appendInt64s(to values: inout [Int64], wireType: WireType, field: String, offset: Int) throws(ProtobufError) {
        switch wireType {
        case .varint:
            values.append(try int64())
        case .lengthDelimited:
            var packed = ProtobufReader(bytes: bytes, range: try lengthDelimited(), depth: depth)
            while !packed.isAtEnd { values.append(try packed.int64()) }
        default:
            throw .wrongWireType(field: field, offset: offset, wireType: wireType.rawValue)
        }
    }

    /// Appends a repeated float field's values: one fixed32, or a packed run of them.
    public mutating func appendFloats(to values: inout [Float], wireType: WireType, field: String, offset: Int) throws(ProtobufError) {
        switch wireType {
        case .fixed32:
            values.append(try float())
        case .lengthDelimited:
            let range = try lengthDelimited()
            guard range.count % 4 == 0 else {
                throw .truncated(what: "packed float field \(field) (\(range.count) bytes, not a multiple of 4)",
                                 offset: range.lowerBound, length: range.count, end: range.upperBound)
            }
            var packed = ProtobufReader(bytes: bytes, range: range, depth: depth)
            values.reserveCapacity(values.count + range.count / 4)
            while !packed.isAtEnd { values.append(try packed.float()) }
        default:
            throw .wrongWireType(field: field, offset: offset, wireType: wireType.rawValue)
        }
    }

    /// Throws unless `length` more bytes lie inside the message.
    private func require(_ length: Int, _ what: String) throws(ProtobufError) {
        guard end - position >= length else { throw .truncated(what: what, offset: position, length: length, end: end) }
    }
}
