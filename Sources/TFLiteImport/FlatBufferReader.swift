/// Errors from reading a FlatBuffer. Every case carries the byte offset where the read went wrong.
public enum FlatBufferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A read of `length` bytes at `offset` would leave the buffer (`bufferSize` bytes).
    case outOfBounds(what: String, offset: Int, length: Int, bufferSize: Int)
    /// A table's vtable is not usable (size too small or odd, table size too small, field outside the table).
    case invalidVTable(offset: Int, reason: String)
    /// A vector claims more elements than the bytes left after it could hold.
    case vectorTooLong(offset: Int, count: Int, elementSize: Int, available: Int)
    /// Reading the buffer took more steps than its size allows (offsets that alias each other to blow up work).
    case workLimitExceeded(offset: Int)

    /// The byte offset the error refers to.
    public var offset: Int {
        switch self {
        case .outOfBounds(_, let offset, _, _), .invalidVTable(let offset, _), .vectorTooLong(let offset, _, _, _),
             .workLimitExceeded(let offset):
            return offset
        }
    }

    /// A one-line explanation without the offset (callers add it).
    public var reason: String {
        switch self {
        case .outOfBounds(let what, _, let length, let size):
            return "\(what) of \(length) bytes runs past the end of the \(size)-byte buffer (truncated or damaged file)"
        case .invalidVTable(_, let reason):
            return "invalid table: \(reason)"
        case .vectorTooLong(_, let count, let elementSize, let available):
            return "vector of \(count) × \(elementSize)-byte elements does not fit in the \(available) bytes left"
        case .workLimitExceeded:
            return "offsets alias each other so much that reading would not end in reasonable time"
        }
    }

    public var description: String { "\(reason) (at byte \(offset))" }
}

/// A bounds-checked reader of FlatBuffers (https://flatbuffers.dev/internals): tables through their
/// vtables, vectors, strings, scalars and unions. Every read checks offsets and lengths against the
/// buffer and throws ``FlatBufferError`` instead of trapping.
///
/// Work and memory are bounded: a vector may not claim more elements than the bytes after it can
/// hold, and the total number of elements and tables handed out is capped at a multiple of the buffer
/// size, so crafted offsets that alias each other cannot make reading quadratic. The reader never
/// follows references on its own (callers walk a fixed schema), so a cycle of offsets cannot make it loop.
///
/// ```swift
/// let reader = FlatBufferReader(bytes: fileBytes)
/// let root = try reader.rootTable()
/// let version: UInt32 = try root.scalar(0, default: 0)
/// ```
public final class FlatBufferReader {
    /// The whole buffer.
    public let bytes: [UInt8]
    /// Units of work left before ``FlatBufferError/workLimitExceeded(offset:)``.
    private var workLeft: Int

    /// Wraps `bytes`; reading may hand out `workFactor` elements per byte of buffer (plus a fixed allowance).
    public init(bytes: [UInt8], workFactor: Int = 4) {
        self.bytes = bytes
        let (budget, overflow) = bytes.count.multipliedReportingOverflow(by: max(workFactor, 1))
        workLeft = overflow ? Int.max / 2 : budget + 100_000
    }

    /// Size of the buffer in bytes.
    public var count: Int { bytes.count }

    /// Throws unless `length` bytes at `offset` lie inside the buffer.
    public func check(_ offset: Int, _ length: Int, _ what: @autoclosure () -> String) throws(FlatBufferError) {
        guard offset >= 0, length >= 0, offset <= bytes.count, length <= bytes.count - offset else {
            throw .outOfBounds(what: what(), offset: offset, length: length, bufferSize: bytes.count)
        }
    }

    /// Charges `amount` units of work (elements or tables handed out) at `offset`.
    func charge(_ amount: Int, at offset: Int) throws(FlatBufferError) {
        guard amount <= workLeft else { throw .workLimitExceeded(offset: offset) }
        workLeft -= amount
    }

    /// A little-endian integer at `offset` (bounds-checked; unaligned reads are allowed).
    public func read<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) throws(FlatBufferError) -> T {
        try check(offset, MemoryLayout<T>.size, "\(T.self)")
        return unchecked(T.self, at: offset)
    }

    /// A scalar whose bounds the caller has checked.
    func unchecked<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    /// The root table (where the uoffset at byte 0 points).
    public func rootTable() throws(FlatBufferError) -> FlatTable {
        try table(at: try follow(at: 0))
    }

    /// The table that starts at `position`, with its vtable checked.
    public func table(at position: Int) throws(FlatBufferError) -> FlatTable {
        try charge(1, at: position)
        let soffset = try read(Int32.self, at: position)
        let vtable = position - Int(soffset)
        try check(vtable, 4, "vtable header")
        let vtableSize = Int(unchecked(UInt16.self, at: vtable))
        let tableSize = Int(unchecked(UInt16.self, at: vtable + 2))
        guard vtableSize >= 4, vtableSize % 2 == 0 else {
            throw .invalidVTable(offset: vtable, reason: "vtable size \(vtableSize) is not an even number ≥ 4")
        }
        try check(vtable, vtableSize, "vtable")
        guard tableSize >= 4 else {
            throw .invalidVTable(offset: vtable, reason: "table size \(tableSize) is smaller than the table's vtable offset")
        }
        try check(position, tableSize, "table")
        return FlatTable(reader: self, position: position, vtable: vtable, vtableSize: vtableSize, tableSize: tableSize)
    }

    /// The vector that starts at `position`: a uint32 length, then `count × elementSize` bytes.
    public func vector(at position: Int, elementSize: Int) throws(FlatBufferError) -> FlatVector {
        let count = Int(try read(UInt32.self, at: position))
        let start = position + 4
        let available = bytes.count - start
        guard elementSize > 0, count <= available / elementSize else {
            throw .vectorTooLong(offset: position, count: count, elementSize: elementSize, available: available)
        }
        return FlatVector(reader: self, position: position, start: start, count: count, elementSize: elementSize)
    }

    /// Follows the uoffset stored at `position` and returns where it points (at least 4 bytes inside).
    public func follow(at position: Int) throws(FlatBufferError) -> Int {
        let relative = Int(try read(UInt32.self, at: position))
        let target = position + relative
        try check(target, 4, "referenced object")
        return target
    }

    /// The string that starts at `position` (invalid UTF-8 is replaced, not refused).
    public func string(at position: Int) throws(FlatBufferError) -> String {
        let v = try vector(at: position, elementSize: 1)
        try charge(v.count / 16, at: position)
        return String(decoding: bytes[v.start..<(v.start + v.count)], as: UTF8.self)
    }
}

/// A table in a ``FlatBufferReader``'s buffer; fields are addressed by their schema id (0, 1, 2…).
public struct FlatTable {
    /// The reader whose buffer holds the table.
    public let reader: FlatBufferReader
    /// Byte offset of the table (where its soffset to the vtable is).
    public let position: Int
    let vtable: Int, vtableSize: Int, tableSize: Int

    /// The absolute byte offset of field `id`, or nil when the field is absent (it has its default value).
    /// Throws when the field's `size` bytes would not lie inside the table.
    public func fieldPosition(_ id: Int, size: Int) throws(FlatBufferError) -> Int? {
        let entry = 4 + 2 * id
        guard id >= 0, entry + 2 <= vtableSize else { return nil }
        let relative = Int(reader.unchecked(UInt16.self, at: vtable + entry))
        if relative == 0 { return nil }
        guard relative >= 4, relative + size <= tableSize else {
            throw .invalidVTable(offset: vtable + entry,
                                 reason: "field \(id) at +\(relative) (\(size) bytes) lies outside the \(tableSize)-byte table")
        }
        return position + relative
    }

    /// An integer field, or `defaultValue` when absent.
    public func scalar<T: FixedWidthInteger>(_ id: Int, default defaultValue: T) throws(FlatBufferError) -> T {
        guard let p = try fieldPosition(id, size: MemoryLayout<T>.size) else { return defaultValue }
        return reader.unchecked(T.self, at: p)
    }

    /// A float field, or `defaultValue` when absent.
    public func float(_ id: Int, default defaultValue: Float) throws(FlatBufferError) -> Float {
        guard let p = try fieldPosition(id, size: 4) else { return defaultValue }
        return Float(bitPattern: reader.unchecked(UInt32.self, at: p))
    }

    /// A bool field, or `defaultValue` when absent.
    public func bool(_ id: Int, default defaultValue: Bool) throws(FlatBufferError) -> Bool {
        guard let p = try fieldPosition(id, size: 1) else { return defaultValue }
        return reader.unchecked(UInt8.self, at: p) != 0
    }

    /// A sub-table field, or nil when absent.
    public func table(_ id: Int) throws(FlatBufferError) -> FlatTable? {
        guard let p = try fieldPosition(id, size: 4) else { return nil }
        return try reader.table(at: try reader.follow(at: p))
    }

    /// A vector field, or nil when absent.
    public func vector(_ id: Int, elementSize: Int) throws(FlatBufferError) -> FlatVector? {
        guard let p = try fieldPosition(id, size: 4) else { return nil }
        return try reader.vector(at: try reader.follow(at: p), elementSize: elementSize)
    }

    /// A string field, or nil when absent.
    public func string(_ id: Int) throws(FlatBufferError) -> String? {
        guard let p = try fieldPosition(id, size: 4) else { return nil }
        return try reader.string(at: try reader.follow(at: p))
    }

    /// A union: its type tag (field `typeID`, uint8, 0 = NONE) and its table (field `valueID`).
    public func union(type typeID: Int, value valueID: Int) throws(FlatBufferError) -> (type: UInt8, table: FlatTable?) {
        let type: UInt8 = try scalar(typeID, default: 0)
        guard type != 0 else { return (0, nil) }
        return (type, try table(valueID))
    }

    /// An int32 vector field as Ints (empty when absent).
    public func int32s(_ id: Int) throws(FlatBufferError) -> [Int] {
        guard let v = try vector(id, elementSize: 4) else { return [] }
        return try v.int32s()
    }

    /// A vector-of-tables field (empty when absent).
    /// A vector of little-endian unsigned integers of `elementSize` bytes (1 or 2) at field `id`.
    public func unsignedIntegers(_ id: Int, elementSize: Int) throws(FlatBufferError) -> [Int] {
        guard let v = try vector(id, elementSize: elementSize) else { return [] }
        try reader.charge(v.count, at: v.position)
        return (0..<v.count).map { elementSize == 1 ? Int(reader.unchecked(UInt8.self, at: v.start + $0))
                                                    : Int(reader.unchecked(UInt16.self, at: v.start + 2 * $0)) }
    }

    public func tables(_ id: Int) throws(FlatBufferError) -> [FlatTable] {
        guard let v = try vector(id, elementSize: 4) else { return [] }
        var result: [FlatTable] = []
        result.reserveCapacity(v.count)
        for i in 0..<v.count { result.append(try v.table(i)) }
        return result
    }
}

/// A vector in a ``FlatBufferReader``'s buffer whose elements are known to lie inside the buffer.
public struct FlatVector {
    /// The reader whose buffer holds the vector.
    public let reader: FlatBufferReader
    /// Byte offset of the length word, and of the first element.
    public let position: Int, start: Int
    /// Number of elements and bytes per element.
    public let count: Int, elementSize: Int

    /// Byte range of the elements.
    public var byteRange: Range<Int> { start..<(start + count * elementSize) }

    /// Elements read as little-endian int32.
    public func int32s() throws(FlatBufferError) -> [Int] {
        try reader.charge(count, at: position)
        return (0..<count).map { Int(reader.unchecked(Int32.self, at: start + 4 * $0)) }
    }

    /// Elements read as little-endian int64.
    public func int64s() throws(FlatBufferError) -> [Int64] {
        try reader.charge(count, at: position)
        return (0..<count).map { reader.unchecked(Int64.self, at: start + 8 * $0) }
    }

    /// Elements read as little-endian float32.
    public func floats() throws(FlatBufferError) -> [Float] {
        try reader.charge(count, at: position)
        return (0..<count).map { Float(bitPattern: reader.unchecked(UInt32.self, at: start + 4 * $0)) }
    }

    /// The table referenced by element `index` (a uoffset relative to the element).
    public func table(_ index: Int) throws(FlatBufferError) -> FlatTable {
        try checkIndex(index)
        return try reader.table(at: try reader.follow(at: start + 4 * index))
    }

    /// The string referenced by element `index`.
    public func string(_ index: Int) throws(FlatBufferError) -> String {
        try checkIndex(index)
        try reader.charge(1, at: position)
        return try reader.string(at: try reader.follow(at: start + 4 * index))
    }

    private func checkIndex(_ index: Int) throws(FlatBufferError) {
        guard index >= 0, index < count else {
            throw .outOfBounds(what: "element \(index) of a \(count)-element vector", offset: position, length: 4,
                               bufferSize: reader.count)
        }
    }
}
