import Foundation

/// Reads Apple's XML property list format (`<plist><dict><key>…</key><string>…</string>…`): the
/// elements `dict`, `array`, `key`, `string`, `integer`, `real`, `true`, `false`, `data` (base64) and
/// `date`, the empty forms (`<string/>`), the five named entities and numeric character references,
/// CDATA sections, comments, the XML declaration and the DOCTYPE. Anything else is an error with its
/// byte offset. Recursion is bounded by ``PropertyListLimits/maxDepth``.
struct XMLPropertyListReader {
    private let bytes: [UInt8]
    private let limits: PropertyListLimits
    private var position = 0
    private var values = 0

    init(bytes: [UInt8], limits: PropertyListLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func read() throws(PropertyListError) -> PropertyList {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        try skipMisc()
        guard position < bytes.count else { throw PropertyListError("empty file: no property list", at: position) }
        let start = position
        let tag = try openTag()
        let root: PropertyList
        if tag.name == "plist" {
            guard !tag.empty else { throw PropertyListError("<plist/> holds no value", at: start) }
            try skipMisc()
            root = try value(depth: 0)
            try skipMisc()
            try closeTag("plist")
        } else {
            root = try value(opened: tag, at: start, depth: 0)
        }
        try skipMisc()
        guard position == bytes.count else { throw PropertyListError("unexpected content after the property list", at: position) }
        return root
    }

    // MARK: values

    private mutating func value(depth: Int) throws(PropertyListError) -> PropertyList {
        let start = position
        let tag = try openTag()
        return try value(opened: tag, at: start, depth: depth)
    }

    private mutating func value(opened tag: (name: String, empty: Bool), at start: Int, depth: Int) throws(PropertyListError) -> PropertyList {
        values += 1
        guard values <= limits.maxValues else { throw PropertyListError("more than \(limits.maxValues) values", at: start) }
        switch tag.name {
        case "dict":
            guard depth < limits.maxDepth else { throw PropertyListError("nested more than \(limits.maxDepth) deep", at: start) }
            var entries: [(key: String, value: PropertyList)] = []
            if tag.empty { return .dictionary(entries) }
            while true {
                try skipMisc()
                if try peekClose() { try closeTag("dict"); break }
                let keyStart = position
                let keyTag = try openTag()
                guard keyTag.name == "key" else {
                    throw PropertyListError("expected <key> in a dictionary, found <\(keyTag.name)>", at: keyStart)
                }
                let key = keyTag.empty ? "" : try text(until: "key")
                try skipMisc()
                let v = try value(depth: depth + 1)
                if let existing = entries.firstIndex(where: { $0.key == key }) { entries.remove(at: existing) }
                entries.append((key, v))
            }
            return .dictionary(entries)
        case "array":
            guard depth < limits.maxDepth else { throw PropertyListError("nested more than \(limits.maxDepth) deep", at: start) }
            var items: [PropertyList] = []
            if tag.empty { return .array(items) }
            while true {
                try skipMisc()
                if try peekClose() { try closeTag("array"); break }
                items.append(try value(depth: depth + 1))
            }
            return .array(items)
        case "true", "false":
            if !tag.empty { try skipMisc(); try closeTag(tag.name) }
            return .bool(tag.name == "true")
        case "string":
            return .string(tag.empty ? "" : try text(until: "string"))
        case "integer":
            let s = tag.empty ? "" : try text(until: "integer").trimmingCharacters(in: .whitespacesAndNewlines)
            guard let v = Int64(s) ?? (s.hasPrefix("0x") ? Int64(s.dropFirst(2), radix: 16) : nil) else {
                throw PropertyListError("<integer> '\(s.prefix(40))' is not an integer", at: start)
            }
            return .integer(v)
        case "real":
            let s = tag.empty ? "" : try text(until: "real").trimmingCharacters(in: .whitespacesAndNewlines)
            guard let v = Double(s) else { throw PropertyListError("<real> '\(s.prefix(40))' is not a number", at: start) }
            return .real(v)
        case "data":
            let s = tag.empty ? "" : try text(until: "data").filter { !$0.isWhitespace }
            guard let d = Data(base64Encoded: s) else { throw PropertyListError("<data> is not valid base64", at: start) }
            return .data([UInt8](d))
        case "date":
            let s = tag.empty ? "" : try text(until: "date").trimmingCharacters(in: .whitespacesAndNewlines)
            guard let d = ISO8601DateFormatter().date(from: s) else { throw PropertyListError("<date> '\(s.prefix(40))' is not an ISO 8601 date", at: start) }
            return .date(d.timeIntervalSinceReferenceDate)
        default:
            throw PropertyListError("<\(tag.name)> is not a property list element", at: start)
        }
    }

    // MARK: markup

    /// Skips white space, comments, processing instructions (`<?…?>`) and the DOCTYPE.
    private mutating func skipMisc() throws(PropertyListError) {
        while position < bytes.count {
            let b = bytes[position]
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { position += 1; continue }
            if starts("<!--") { try skip(past: "-->"); continue }
            if starts("<?") { try skip(past: "?>"); continue }
            if starts("<!DOCTYPE") { try skipDoctype(); continue }
            return
        }
    }

    private mutating func skipDoctype() throws(PropertyListError) {
        let start = position
        var bracket = 0
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "["): bracket += 1
            case UInt8(ascii: "]"): bracket -= 1
            case UInt8(ascii: ">") where bracket <= 0: position += 1; return
            default: break
            }
            position += 1
        }
        throw PropertyListError("unterminated <!DOCTYPE", at: start)
    }

    private func starts(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return position + u.count <= bytes.count && bytes[position..<position + u.count].elementsEqual(u)
    }

    private mutating func skip(past s: String) throws(PropertyListError) {
        let start = position
        let u = Array(s.utf8)
        while position + u.count <= bytes.count {
            if bytes[position..<position + u.count].elementsEqual(u) { position += u.count; return }
            position += 1
        }
        throw PropertyListError("unterminated markup (no '\(s)')", at: start)
    }

    /// `<name attr="…">` or `<name/>`: the name, and whether it was the empty form.
    private mutating func openTag() throws(PropertyListError) -> (name: String, empty: Bool) {
        let start = position
        guard position < bytes.count, bytes[position] == UInt8(ascii: "<") else {
            throw PropertyListError("expected an element ('<')", at: position)
        }
        position += 1
        let nameStart = position
        while position < bytes.count, isNameByte(bytes[position]) { position += 1 }
        guard position > nameStart else { throw PropertyListError("expected an element name after '<'", at: start) }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        var quote: UInt8?
        while position < bytes.count {
            let b = bytes[position]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                quote = b
            } else if b == UInt8(ascii: ">") {
                position += 1
                let empty = bytes[position - 2] == UInt8(ascii: "/")
                return (name, empty)
            } else if b == UInt8(ascii: "<") {
                break
            }
            position += 1
        }
        throw PropertyListError("unterminated <\(name)> tag", at: start)
    }

    private func peekClose() throws(PropertyListError) -> Bool {
        guard position < bytes.count else { throw PropertyListError("unexpected end of file (an element is not closed)", at: position) }
        return starts("</")
    }

    private mutating func closeTag(_ name: String) throws(PropertyListError) {
        let start = position
        guard starts("</") else { throw PropertyListError("expected </\(name)>", at: position) }
        position += 2
        let nameStart = position
        while position < bytes.count, isNameByte(bytes[position]) { position += 1 }
        let found = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 || bytes[position] == 0x0A || bytes[position] == 0x0D { position += 1 }
        guard found == name, position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
            throw PropertyListError("expected </\(name)>, found </\(found.prefix(40))", at: start)
        }
        position += 1
    }

    /// Character data up to `</name>` (entities and CDATA decoded), consuming the closing tag.
    private mutating func text(until name: String) throws(PropertyListError) -> String {
        var out: [UInt8] = []
        let start = position
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "<") {
                if starts("<![CDATA[") {
                    position += 9
                    let dataStart = position
                    try skip(past: "]]>")
                    out.append(contentsOf: bytes[dataStart..<position - 3])
                    continue
                }
                if starts("<!--") { try skip(past: "-->"); continue }
                try closeTag(name)
                return String(decoding: out, as: UTF8.self)
            }
            if b == UInt8(ascii: "&") {
                try entity(into: &out)
                continue
            }
            out.append(b)
            position += 1
        }
        throw PropertyListError("unterminated <\(name)>", at: start)
    }

    private mutating func entity(into out: inout [UInt8]) throws(PropertyListError) {
        let start = position
        var end = position + 1
        while end < bytes.count, end - position < 12, bytes[end] != UInt8(ascii: ";") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else { throw PropertyListError("unterminated entity ('&' without ';')", at: start) }
        let name = String(decoding: bytes[position + 1..<end], as: UTF8.self)
        position = end + 1
        switch name {
        case "amp": out.append(UInt8(ascii: "&"))
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "quot": out.append(UInt8(ascii: "\""))
        case "apos": out.append(UInt8(ascii: "'"))
        default:
            var code: UInt32?
            if name.hasPrefix("#x") { code = UInt32(name.dropFirst(2), radix: 16) } else if name.hasPrefix("#") { code = UInt32(name.dropFirst(1)) }
            guard let c = code, let scalar = Unicode.Scalar(c) else { throw PropertyListError("unknown entity '&\(name);'", at: start) }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        }
    }

    private func isNameByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
            || b == UInt8(ascii: ":") || b == UInt8(ascii: ".")
    }
}
