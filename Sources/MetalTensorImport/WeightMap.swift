/// A MetalTensor weight map (`NAME.json`): weight name → byte range `"offset,length"` in `NAME.bin`.
///
/// The shipped files are a flat JSON object of strings that ends with a comma before `}`, which strict
/// JSON refuses; this reader accepts exactly that: one object, string keys, string values, an optional
/// trailing comma. Values are split on `,` and each part is read as a decimal integer, spaces allowed.
public struct WeightMap: Sendable, Equatable {
    /// A byte range of the weight blob.
    public struct Range: Sendable, Equatable {
        public let offset: Int
        public let length: Int

        public init(offset: Int, length: Int) {
            self.offset = offset
            self.length = length
        }
    }

    public private(set) var entries: [String: Range] = [:]

    public init(entries: [String: Range]) { self.entries = entries }

    /// Parses a weight map; errors name the byte offset and, for a bad value, the weight.
    public init(bytes: [UInt8]) throws(PropertyListError) {
        var p = 0
        func skipSpace() {
            while p < bytes.count, bytes[p] == 0x20 || bytes[p] == 0x09 || bytes[p] == 0x0A || bytes[p] == 0x0D { p += 1 }
        }
        func expect(_ c: Character) throws(PropertyListError) {
            skipSpace()
            guard p < bytes.count, bytes[p] == c.asciiValue else {
                throw PropertyListError("expected '\(c)'" + (p < bytes.count ? "" : " before the end of the file"), at: p)
            }
            p += 1
        }
        func string() throws(PropertyListError) -> String {
            try expect("\"")
            let start = p
            var out: [UInt8] = []
            while p < bytes.count {
                let b = bytes[p]
                if b == UInt8(ascii: "\"") { p += 1; return String(decoding: out, as: UTF8.self) }
                if b < 0x20 { throw PropertyListError("control character in a string", at: p) }
                if b == UInt8(ascii: "\\") {
                    guard p + 1 < bytes.count else { break }
                    let e = bytes[p + 1]
                    p += 2
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard p + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[p..<p + 4], as: UTF8.self), radix: 16) else {
                            throw PropertyListError("bad \\u escape", at: p - 2)
                        }
                        p += 4
                        out.append(contentsOf: Array(String(Character(Unicode.Scalar(code) ?? "\u{FFFD}")).utf8))
                    default: throw PropertyListError("bad escape '\\\(Character(Unicode.Scalar(e)))'", at: p - 2)
                    }
                    continue
                }
                out.append(b)
                p += 1
            }
            throw PropertyListError("unterminated string", at: start - 1)
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p = 3 }
        try expect("{")
        while true {
            skipSpace()
            guard p < bytes.count else { throw PropertyListError("unexpected end of file (no closing '}')", at: p) }
            if bytes[p] == UInt8(ascii: "}") { p += 1; break }
            let keyAt = p
            let key = try string()
            try expect(":")
            skipSpace()
            let valueAt = p
            let value = try string()
            let parts = value.split(separator: ",", omittingEmptySubsequences: true).map { $0.filter { $0 != " " } }
            guard parts.count == 2, let offset = Int(parts[0]), let length = Int(parts[1]), offset >= 0, length >= 0 else {
                throw PropertyListError("weight '\(key.prefix(60))': \"\(value.prefix(60))\" is not \"offset,length\" (two non-negative byte counts)", at: valueAt)
            }
            guard entries[key] == nil else { throw PropertyListError("weight '\(key.prefix(60))' is listed twice", at: keyAt) }
            entries[key] = Range(offset: offset, length: length)
            skipSpace()
            guard p < bytes.count else { throw PropertyListError("unexpected end of file (no closing '}')", at: p) }
            if bytes[p] == UInt8(ascii: ",") { p += 1; continue }
            guard bytes[p] == UInt8(ascii: "}") else { throw PropertyListError("expected ',' or '}' after a weight", at: p) }
        }
        skipSpace()
        guard p == bytes.count else { throw PropertyListError("unexpected content after the weight map", at: p) }
    }
}
