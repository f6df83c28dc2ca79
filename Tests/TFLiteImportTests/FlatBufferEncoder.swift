/// A FlatBuffers value tree for building small test files by hand.
indirect enum FBValue {
    /// A table: field id → value.
    case table([(Int, FBValue)])
    case int8(Int8), uint8(UInt8), int32(Int32), uint32(UInt32), uint64(UInt64), float(Float), bool(Bool)
    case string(String)
    case int32s([Int32]), int64s([Int64]), bytes([UInt8])
    /// A vector of tables.
    case tables([FBValue])

    /// Bytes the value takes inside a table (references take a 4-byte uoffset).
    var inlineSize: Int {
        switch self {
        case .int8, .uint8, .bool: return 1
        case .uint64: return 8
        default: return 4
        }
    }
}

/// Serialises an ``FBValue`` tree into a FlatBuffer: parents first, children after them, each
/// reference a forward uoffset (valid FlatBuffers, laid out front to back rather than back to front).
struct FBEncoder {
    private(set) var out: [UInt8] = []

    /// `root` encoded with `identifier` (4 ASCII bytes) at bytes 4..<8.
    static func encode(_ root: FBValue, identifier: String) -> [UInt8] {
        var e = FBEncoder()
        e.out = [0, 0, 0, 0] + Array(identifier.utf8.prefix(4))
        let position = e.reference(root)
        e.patch(0, to: position)
        return e.out
    }

    private mutating func align(_ n: Int) { while out.count % n != 0 { out.append(0) } }

    private mutating func put<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    private mutating func write<T: FixedWidthInteger>(_ v: T, at position: Int) {
        withUnsafeBytes(of: v.littleEndian) { for (i, b) in $0.enumerated() { out[position + i] = b } }
    }

    /// Points the uoffset at `position` to `target`.
    private mutating func patch(_ position: Int, to target: Int) { write(UInt32(target - position), at: position) }

    /// Appends a reference value (table, string, vector) and returns its position.
    private mutating func reference(_ value: FBValue) -> Int {
        switch value {
        case .table(let fields):
            let sorted = fields.sorted { $0.0 < $1.0 }
            var layout: [(id: Int, offset: Int, value: FBValue)] = []
            var size = 4
            for (id, v) in sorted {
                let s = v.inlineSize
                size = (size + s - 1) / s * s
                layout.append((id, size, v))
                size += s
            }
            let maxID = sorted.last?.0 ?? -1
            align(2)
            let vtable = out.count
            put(UInt16(4 + 2 * (maxID + 1)))
            put(UInt16(size))
            for id in 0..<(maxID + 1) { put(UInt16(layout.first { $0.id == id }?.offset ?? 0)) }
            align(8)
            let table = out.count
            put(Int32(table - vtable))
            out.append(contentsOf: [UInt8](repeating: 0, count: size - 4))
            var references: [(Int, FBValue)] = []
            for (_, offset, v) in layout {
                let p = table + offset
                switch v {
                case .int8(let x): write(x, at: p)
                case .uint8(let x): write(x, at: p)
                case .bool(let x): write(UInt8(x ? 1 : 0), at: p)
                case .int32(let x): write(x, at: p)
                case .uint32(let x): write(x, at: p)
                case .uint64(let x): write(x, at: p)
                case .float(let x): write(x.bitPattern, at: p)
                default: references.append((p, v))
                }
            }
            for (p, v) in references { patch(p, to: reference(v)) }
            return table
        case .string(let s):
            align(4)
            let p = out.count
            put(UInt32(s.utf8.count))
            out.append(contentsOf: s.utf8)
            out.append(0)
            return p
        case .int32s(let values):
            align(4)
            let p = out.count
            put(UInt32(values.count))
            for v in values { put(v) }
            return p
        case .int64s(let values):
            // The length word sits 4 bytes before 8-byte-aligned elements.
            while (out.count + 4) % 8 != 0 { out.append(0) }
            let p = out.count
            put(UInt32(values.count))
            for v in values { put(v) }
            return p
        case .bytes(let values):
            align(16)
            out.append(contentsOf: [0, 0, 0, 0] + values)
            let p = out.count - values.count - 4
            write(UInt32(values.count), at: p)
            return p
        case .tables(let items):
            align(4)
            let p = out.count
            put(UInt32(items.count))
            out.append(contentsOf: [UInt8](repeating: 0, count: 4 * items.count))
            for (i, item) in items.enumerated() { patch(p + 4 + 4 * i, to: reference(item)) }
            return p
        default:
            // A scalar used as a reference: not meaningful; encode as an empty table.
            return reference(.table([]))
        }
    }
}
