/// The scalars of a FlexBuffer map (https://flatbuffers.dev/flexbuffers), the format TFLite custom
/// operators keep their options in (`TFLite_Detection_PostProcess`'s `max_detections`,
/// `nms_iou_threshold` …). Only what options use is read: a root map whose values are integers,
/// unsigned integers, floats or booleans, inline or indirect; other values are kept as ``Value/other``.
///
/// Every read is bounds-checked against `bytes` and throws ``FlatBufferError`` with the byte offset
/// (relative to the options' first byte); nothing is followed twice, so reading ends.
struct FlexBufferMap {
    /// One value of the map.
    enum Value: Equatable {
        case int(Int64), uint(UInt64), float(Double), bool(Bool), null, other(type: Int)

        /// The value as a number (booleans 0 or 1), nil for null and other kinds.
        var number: Double? {
            switch self {
            case .int(let v): return Double(v)
            case .uint(let v): return Double(v)
            case .float(let v): return v
            case .bool(let v): return v ? 1 : 0
            case .null, .other: return nil
            }
        }
    }

    /// The map's keys and values in file order (keys are sorted in a valid FlexBuffer).
    private(set) var entries: [(key: String, value: Value)] = []

    subscript(key: String) -> Value? { entries.first { $0.key == key }?.value }

    /// FlexBuffer type codes (the upper six bits of a packed type byte).
    private enum Kind {
        static let null = 0, int = 1, uint = 2, float = 3, key = 4, indirectInt = 6, indirectUInt = 7, indirectFloat = 8
        static let map = 9, bool = 26
    }

    /// Reads the map that is the root of `bytes`.
    init(bytes: ArraySlice<UInt8>) throws(FlatBufferError) {
        let b = Array(bytes)
        let reader = Reader(bytes: b)
        guard b.count >= 3 else { throw FlatBufferError.outOfBounds(what: "flexbuffer root", offset: 0, length: 3, bufferSize: b.count) }
        let rootWidth = Int(b[b.count - 1])
        let rootType = Int(b[b.count - 2])
        guard [1, 2, 4, 8].contains(rootWidth) else {
            throw FlatBufferError.invalidVTable(offset: b.count - 1, reason: "flexbuffer root width \(rootWidth) is not 1, 2, 4 or 8")
        }
        let rootPosition = b.count - 2 - rootWidth
        guard rootPosition >= 0 else {
            throw FlatBufferError.outOfBounds(what: "flexbuffer root", offset: 0, length: rootWidth + 2, bufferSize: b.count)
        }
        guard rootType >> 2 == Kind.map else {
            throw FlatBufferError.invalidVTable(offset: b.count - 2, reason: "flexbuffer root is type \(rootType >> 2), not a map")
        }
        let values = try reader.indirect(at: rootPosition, width: rootWidth)
        let width = 1 << (rootType & 3)
        let count = try reader.unsigned(at: values - width, width: width)
        // A map's header before its values: keys offset, keys' byte width, count.
        let keysField = values - 3 * width
        let keys = try reader.indirect(at: keysField, width: width)
        let keyWidth = Int(clamping: try reader.unsigned(at: values - 2 * width, width: width))
        guard [1, 2, 4, 8].contains(keyWidth) else {
            throw FlatBufferError.invalidVTable(offset: values - 2 * width, reason: "flexbuffer key width \(keyWidth) is not 1, 2, 4 or 8")
        }
        let keyCount = try reader.unsigned(at: keys - keyWidth, width: keyWidth)
        guard count == keyCount, count <= UInt64(b.count) else {
            throw FlatBufferError.invalidVTable(offset: values, reason: "flexbuffer map has \(count) values but \(keyCount) keys")
        }
        let n = Int(count)
        for i in 0..<n {
            let key = try reader.string(at: try reader.indirect(at: keys + i * keyWidth, width: keyWidth))
            let typesAt = values + n * width + i
            guard typesAt < b.count, typesAt >= 0 else {
                throw FlatBufferError.outOfBounds(what: "flexbuffer type byte", offset: typesAt, length: 1, bufferSize: b.count)
            }
            let packed = Int(b[typesAt])
            let at = values + i * width
            let value: Value
            switch packed >> 2 {
            case Kind.null: value = .null
            case Kind.int: value = .int(try reader.signed(at: at, width: width))
            case Kind.uint: value = .uint(try reader.unsigned(at: at, width: width))
            case Kind.bool: value = .bool(try reader.unsigned(at: at, width: width) != 0)
            case Kind.float: value = .float(try reader.float(at: at, width: width))
            case Kind.indirectInt, Kind.indirectUInt, Kind.indirectFloat:
                let target = try reader.indirect(at: at, width: width), childWidth = 1 << (packed & 3)
                switch packed >> 2 {
                case Kind.indirectInt: value = .int(try reader.signed(at: target, width: childWidth))
                case Kind.indirectUInt: value = .uint(try reader.unsigned(at: target, width: childWidth))
                default: value = .float(try reader.float(at: target, width: childWidth))
                }
            default: value = .other(type: packed >> 2)
            }
            entries.append((key, value))
        }
    }

    /// Bounds-checked little-endian reads.
    private struct Reader {
        let bytes: [UInt8]

        func check(_ at: Int, _ width: Int, _ what: String) throws(FlatBufferError) {
            guard at >= 0, width >= 0, at <= bytes.count - width else {
                throw FlatBufferError.outOfBounds(what: what, offset: max(at, 0), length: width, bufferSize: bytes.count)
            }
        }

        func unsigned(at: Int, width: Int) throws(FlatBufferError) -> UInt64 {
            try check(at, width, "flexbuffer value")
            var v: UInt64 = 0
            for k in (0..<width).reversed() { v = v << 8 | UInt64(bytes[at + k]) }
            return v
        }

        func signed(at: Int, width: Int) throws(FlatBufferError) -> Int64 {
            let u = try unsigned(at: at, width: width)
            let shift = UInt64(64 - 8 * width)
            return Int64(bitPattern: u << shift) >> Int64(shift)
        }

        func float(at: Int, width: Int) throws(FlatBufferError) -> Double {
            switch width {
            case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: try unsigned(at: at, width: 4))))
            case 8: return Double(bitPattern: try unsigned(at: at, width: 8))
            default: throw FlatBufferError.invalidVTable(offset: at, reason: "flexbuffer float of \(width) bytes")
            }
        }

        /// The position an offset field at `at` points back to.
        func indirect(at: Int, width: Int) throws(FlatBufferError) -> Int {
            let offset = try unsigned(at: at, width: width)
            guard offset <= UInt64(at) else {
                throw FlatBufferError.outOfBounds(what: "flexbuffer offset", offset: at, length: Int(clamping: offset), bufferSize: bytes.count)
            }
            return at - Int(offset)
        }

        /// A NUL-terminated key.
        func string(at: Int) throws(FlatBufferError) -> String {
            try check(at, 1, "flexbuffer key")
            guard let end = bytes[at...].prefix(256).firstIndex(of: 0) else {
                throw FlatBufferError.outOfBounds(what: "flexbuffer key (no terminating NUL within 256 bytes)", offset: at, length: 256,
                                                  bufferSize: bytes.count)
            }
            return String(decoding: bytes[at..<end], as: UTF8.self)
        }
    }
}
