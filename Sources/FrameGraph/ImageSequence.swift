import Foundation

/// Names of the files of an image sequence: a pattern with one `%d` field (`frames/%05d.png`), as
/// FFmpeg and most frame-by-frame tools write them.
public enum ImageSequence {
    /// Widest number field a pattern may ask for (`%032d`).
    public static let maxFieldWidth = 32

    /// Whether `pattern` has a `%d`-style field.
    public static func isPattern(_ pattern: String) -> Bool {
        pattern.range(of: #"%0?\d*d"#, options: .regularExpression) != nil
    }

    /// Why `pattern` cannot name a sequence (more than one field, an absurd width), or nil.
    public static func problem(with pattern: String) -> String? {
        let fields = pattern.ranges(of: #/%0?\d*d/#)
        guard fields.count <= 1 else { return "'\(pattern)' has \(fields.count) number fields; use one (%d or %05d)" }
        if let field = fields.first {
            let digits = pattern[field].dropFirst().dropLast().drop { $0 == "0" }
            guard digits.count <= 2, (Int(digits) ?? 0) <= maxFieldWidth else { return "'\(pattern[field])' is wider than %0\(maxFieldWidth)d" }
        }
        return nil
    }

    /// `pattern` with its `%d`-style field replaced by `index`.
    public static func path(_ pattern: String, index: Int) -> String {
        guard let range = pattern.range(of: #"%0?\d*d"#, options: .regularExpression) else { return pattern }
        let spec = String(pattern[range])
        let width = min(maxFieldWidth, Int(spec.dropFirst().dropLast().prefix(4)) ?? 0)
        let padZero = spec.hasPrefix("%0")
        var number = String(index)
        if number.count < width { number = String(repeating: padZero ? "0" : " ", count: width - number.count) + number }
        return pattern.replacingCharacters(in: range, with: number)
    }

    /// Most pictures a sequence may have.
    public static let maxMembers = 10_000_000

    /// The numbers of the pictures of `pattern` that exist, in order: every name in its folder that
    /// is the pattern with a number (`frames/00004.png` for `frames/%05d.png`). Throws when a member
    /// is not a regular file (a FIFO would block the reader, a device would never end), naming it.
    public static func members(of pattern: String) throws -> [Int] {
        guard let field = pattern.range(of: #"%0?\d*d"#, options: .regularExpression) else { return [] }
        let slash = pattern[..<field.lowerBound].lastIndex(of: "/")
        let folder = slash.map { String(pattern[..<$0]) } ?? "."
        let prefix = String(pattern[(slash.map { pattern.index(after: $0) } ?? pattern.startIndex)..<field.lowerBound])
        let suffix = String(pattern[field.upperBound...])
        guard !suffix.contains("/") else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "/" : folder)) ?? []
        var numbers: [Int] = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) && name.count > prefix.count + suffix.count {
            let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
            guard middle.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == " ") }), let n = Int(middle.trimmingCharacters(in: .whitespaces)),
                  n >= 0, path(pattern, index: n) == (slash == nil ? name : folder + "/" + name) else { continue }
            numbers.append(n)
            guard numbers.count <= maxMembers else { throw GraphError.io(path: pattern, reason: "the image sequence has more than \(maxMembers) pictures") }
        }
        numbers.sort()
        for n in numbers {
            let file = path(pattern, index: n)
            var info = stat()
            guard stat(file, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw GraphError.io(path: file, reason: "a picture of the image sequence is \(FileCheck.kindName(info.st_mode)), not a regular file")
            }
        }
        return numbers
    }
}

