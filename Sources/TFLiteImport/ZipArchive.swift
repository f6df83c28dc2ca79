import CZlib
/// The files of a zip archive found at the end of a byte buffer (TFLite models carry their
/// associated files, such as labels, as a zip appended after the FlatBuffer). Stored and deflate
/// entries are read; the archive is hostile input: every offset and size is checked against the
/// buffer, declared sizes are bounded, and an entry that inflates to other than its declared size
/// is refused.
public struct ZipArchive: Sendable {
    public struct Entry: Sendable {
        public let name: String
        let method: Int
        let compressedSize: Int
        public let uncompressedSize: Int
        /// The CRC-32 the archive declares for the entry's contents (checked when it is read).
        let crc: UInt32
        /// Where the entry's data starts in the buffer.
        let dataOffset: Int
    }

    public let entries: [Entry]
    private let bytes: [UInt8]
    /// Largest entry this archive reads (its owner's limit: 32 MiB for metadata, a model's for a bundle).
    private let entryLimit: Int

    /// Largest entry read (uncompressed).
    public static let maxEntryBytes = 32 << 20
    /// Largest ratio of uncompressed to compressed size (a "zip bomb" beyond it is refused).
    static let maxRatio = 1_000
    /// Most entries read.
    static let maxEntries = 10_000

    public struct ZipError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public let offset: Int
        public var description: String { "\(message) (byte \(offset))" }
    }

    private static func u16(_ b: [UInt8], _ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ o: Int) -> Int { u16(b, o) | u16(b, o + 2) << 16 }

    /// The archive at the end of `bytes`, or nil when there is none (no end-of-central-directory
    /// record); throws when there is one and it is damaged.
    public init?(endOf bytes: [UInt8], maxEntryBytes: Int = ZipArchive.maxEntryBytes) throws {
        self.bytes = bytes
        entryLimit = maxEntryBytes
        let n = bytes.count
        guard n >= 22 else { return nil }
        // The end record: 22 bytes plus a comment of at most 65,535 bytes, searched from the end.
        var end: Int?
        var p = n - 22
        while p >= max(0, n - 22 - 65_535) {
            if bytes[p] == 0x50 && bytes[p + 1] == 0x4B && bytes[p + 2] == 0x05 && bytes[p + 3] == 0x06 && p + 22 + Self.u16(bytes, p + 20) == n {
                end = p
                break
            }
            p -= 1
        }
        guard let eocd = end else { return nil }
        let count = Self.u16(bytes, eocd + 10), directorySize = Self.u32(bytes, eocd + 12), directoryOffset = Self.u32(bytes, eocd + 16)
        guard count <= Self.maxEntries else { throw ZipError(message: "the zip declares \(count) entries, more than \(Self.maxEntries)", offset: eocd) }
        // The archive may be appended to other data: its own offsets count from its first byte.
        let directoryStart = eocd - directorySize
        let base = directoryStart - directoryOffset
        guard directorySize >= 0, directoryStart >= 0, base >= 0 else {
            throw ZipError(message: "the zip's central directory (\(directorySize) bytes at \(directoryOffset)) does not fit before its end record", offset: eocd)
        }
        var entries: [Entry] = []
        var q = directoryStart
        for _ in 0..<count {
            guard q + 46 <= eocd, Self.u32(bytes, q) == 0x0201_4B50 else { throw ZipError(message: "a central directory entry is damaged", offset: q) }
            let method = Self.u16(bytes, q + 10), compressed = Self.u32(bytes, q + 20), uncompressed = Self.u32(bytes, q + 24)
            let nameLength = Self.u16(bytes, q + 28), extra = Self.u16(bytes, q + 30), comment = Self.u16(bytes, q + 32)
            let local = base + Self.u32(bytes, q + 42)
            guard q + 46 + nameLength <= eocd else { throw ZipError(message: "an entry's name runs past the central directory", offset: q) }
            let name = String(decoding: bytes[(q + 46)..<(q + 46 + nameLength)], as: UTF8.self)
            guard !entries.contains(where: { $0.name == name }) else {
                throw ZipError(message: "entry '\(name.prefix(80))' appears twice: which one is meant is not clear", offset: q)
            }
            guard local >= 0, local + 30 <= n, Self.u32(bytes, local) == 0x0403_4B50 else {
                throw ZipError(message: "entry '\(name)': its local header is missing or damaged", offset: local)
            }
            let dataOffset = local + 30 + Self.u16(bytes, local + 26) + Self.u16(bytes, local + 28)
            guard dataOffset <= n, compressed <= n - dataOffset else {
                throw ZipError(message: "entry '\(name)': \(compressed) bytes of data run past the end of the file", offset: local)
            }
            entries.append(Entry(name: name, method: method, compressedSize: compressed, uncompressedSize: uncompressed,
                                 crc: UInt32(Self.u32(bytes, q + 16)), dataOffset: dataOffset))
            q += 46 + nameLength + extra + comment
        }
        self.entries = entries
    }

    /// The contents of the entry called `name`, or nil when there is none.
    public func contents(of name: String) throws -> [UInt8]? {
        guard let e = entries.first(where: { $0.name == name }) else { return nil }
        let out = try uncheckedContents(of: e)
        let crc = out.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        guard crc == e.crc else {
            throw ZipError(message: "entry '\(name)' is damaged: its CRC-32 is \(String(format: "%08x", crc)), the archive says \(String(format: "%08x", e.crc))",
                           offset: e.dataOffset)
        }
        return out
    }

    private func uncheckedContents(of e: Entry) throws -> [UInt8] {
        let name = e.name
        guard e.uncompressedSize <= entryLimit else {
            throw ZipError(message: "entry '\(name)' declares \(e.uncompressedSize) bytes, more than \(entryLimit)", offset: e.dataOffset)
        }
        let data = bytes[e.dataOffset..<(e.dataOffset + e.compressedSize)]
        switch e.method {
        case 0:
            guard e.compressedSize == e.uncompressedSize else {
                throw ZipError(message: "stored entry '\(name)' has \(e.compressedSize) bytes but declares \(e.uncompressedSize)", offset: e.dataOffset)
            }
            return Array(data)
        case 8:
            guard e.uncompressedSize <= max(1, e.compressedSize) * Self.maxRatio else {
                throw ZipError(message: "entry '\(name)' would inflate \(e.compressedSize) bytes to \(e.uncompressedSize): refused", offset: e.dataOffset)
            }
            guard let out = RawInflate.inflate(data, expected: e.uncompressedSize) else {
                throw ZipError(message: "entry '\(name)' is not valid deflate data of \(e.uncompressedSize) bytes", offset: e.dataOffset)
            }
            return out
        default:
            throw ZipError(message: "entry '\(name)' uses compression method \(e.method) (only stored and deflate are read)", offset: e.dataOffset)
        }
    }
}
