import Foundation

/// A value of an Apple property list (the XML and the binary `bplist00` forms read the same way).
public indirect enum PropertyList: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case data([UInt8])
    /// Seconds since 2001-01-01 00:00:00 UTC, as stored.
    case date(Double)
    case array([PropertyList])
    /// Entries in file order (keys are unique; a repeated key keeps its last value).
    case dictionary([(key: String, value: PropertyList)])

    public static func == (a: PropertyList, b: PropertyList) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.real(let x), .real(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.data(let x), .data(let y)): return x == y
        case (.date(let x), .date(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.dictionary(let x), .dictionary(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The value under `key` when this is a dictionary.
    public subscript(key: String) -> PropertyList? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.last(where: { $0.key == key })?.value
    }

    /// The string, when this is one.
    public var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// What kind of value this is, for error messages.
    public var kindName: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .real: return "a real number"
        case .bool: return "a boolean"
        case .data: return "data"
        case .date: return "a date"
        case .array: return "an array"
        case .dictionary: return "a dictionary"
        }
    }

    /// Reads a property list file of at most `maxBytes` (MetalTensor's configs are a few KiB).
    public static func read(path: String, maxBytes: Int = 1 << 20) throws -> PropertyList {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw PropertyListError("cannot open \(path)", at: 0) }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        guard data.count <= maxBytes else { throw PropertyListError("\(path) is over \(maxBytes) bytes", at: maxBytes) }
        return try read([UInt8](data))
    }

    /// Reads a property list in either form: binary when it starts with `bplist00`, else XML.
    public static func read(_ bytes: [UInt8], limits: PropertyListLimits = .standard) throws(PropertyListError) -> PropertyList {
        if bytes.starts(with: Array("bplist".utf8)) {
            var reader = BinaryPropertyListReader(bytes: bytes, limits: limits)
            return try reader.read()
        }
        var reader = XMLPropertyListReader(bytes: bytes, limits: limits)
        return try reader.read()
    }
}

/// Bounds on what a property list may hold, so that a hostile file cannot make the reader recurse or
/// allocate without limit.
public struct PropertyListLimits: Sendable {
    /// Arrays and dictionaries nested at most this deep.
    public var maxDepth: Int
    /// At most this many values in the whole list.
    public var maxValues: Int

    public init(maxDepth: Int, maxValues: Int) {
        self.maxDepth = maxDepth
        self.maxValues = maxValues
    }

    /// 64 levels and one million values: far beyond any model description.
    public static let standard = PropertyListLimits(maxDepth: 64, maxValues: 1_000_000)
}

/// A property list that cannot be read, with the byte offset where reading stopped.
public struct PropertyListError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public let offset: Int

    public init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason) (at byte \(offset))" }
}
