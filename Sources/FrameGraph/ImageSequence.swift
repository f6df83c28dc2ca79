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
}
