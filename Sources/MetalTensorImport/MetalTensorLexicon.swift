/// MetalTensor's lexical rules for the strings of a model plist (format spec §2.1): every space is
/// deleted from every string value when the plist is loaded; lists split on `,` or `;` drop empty
/// parts; numbers parse the way `NSString.intValue`/`floatValue` do (the longest numeric prefix, 0
/// when there is none); booleans the way `NSString.boolValue` does.
public enum MetalTensorLexicon {
    /// The value with U+0020 deleted from every string in it, recursively (keys unchanged).
    public static func deletingSpaces(_ value: PropertyList) -> PropertyList {
        switch value {
        case .string(let s): return .string(s.filter { $0 != " " })
        case .array(let items): return .array(items.map(deletingSpaces))
        case .dictionary(let entries): return .dictionary(entries.map { ($0.key, deletingSpaces($0.value)) })
        default: return value
        }
    }

    /// The non-empty parts of `s` split on `separator`.
    public static func components(_ s: String, _ separator: Character) -> [String] {
        s.split(separator: separator, omittingEmptySubsequences: true).map(String.init)
    }

    /// `NSString.intValue`: leading white space, an optional sign, then decimal digits; 0 without any;
    /// clamped to the 32-bit range as Foundation does.
    public static func intValue(_ s: String) -> Int {
        var chars = Substring(s).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        var negative = false
        if let c = chars.first, c == "+" || c == "-" { negative = c == "-"; chars = chars.dropFirst() }
        var value = 0
        for c in chars {
            guard let d = c.wholeNumberValue, c.isASCII else { break }
            value = min(value * 10 + d, Int(Int32.max) + 1)
        }
        return negative ? max(-value, Int(Int32.min)) : min(value, Int(Int32.max))
    }

    /// `NSString.floatValue`: the longest prefix that reads as a decimal number (sign, digits, point,
    /// exponent); 0 without any.
    public static func floatValue(_ s: String) -> Float {
        let bytes = Array(s.utf8)
        var i = 0
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1; digits += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1; digits += 1 }
        }
        guard digits > 0 else { return 0 }
        var end = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            var j = i + 1
            if j < bytes.count, bytes[j] == UInt8(ascii: "+") || bytes[j] == UInt8(ascii: "-") { j += 1 }
            let expStart = j
            while j < bytes.count, bytes[j] >= 0x30, bytes[j] <= 0x39 { j += 1 }
            if j > expStart { end = j }
        }
        return Float(String(decoding: bytes[start..<end], as: UTF8.self)) ?? 0
    }

    /// Whether `s` spells a non-finite number (`nan`, `-inf`, `Infinity`): `NSString.floatValue` reads
    /// those as 0, which would silently change a model, so FrameGraph refuses them.
    public static func spellsNonFinite(_ s: String) -> Bool {
        var t = Substring(s.lowercased()).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        if let c = t.first, c == "+" || c == "-" { t = t.dropFirst() }
        return t.hasPrefix("nan") || t.hasPrefix("inf")
    }

    /// `NSString.boolValue`: true when, after white space and an optional sign and zeros, the first
    /// character is Y, y, T, t or a digit 1–9.
    public static func boolValue(_ s: String) -> Bool {
        var chars = Substring(s).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        if let c = chars.first, c == "+" || c == "-" { chars = chars.dropFirst() }
        chars = chars.drop(while: { $0 == "0" })
        guard let c = chars.first else { return false }
        return "YyTt123456789".contains(c)
    }
}
