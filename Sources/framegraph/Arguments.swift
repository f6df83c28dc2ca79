import Foundation

/// The command line, split into positional words and `--flag value` options, with clear errors.
struct Arguments {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var positional: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `words`; `valued` are the options that take a value, `switches` those that do not.
    init(_ words: [String], valued: Set<String>, switches: Set<String>) throws {
        var i = 0
        while i < words.count {
            let word = words[i]
            if word.hasPrefix("--") {
                var name = String(word.dropFirst(2))
                var inlineValue: String?
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if valued.contains(name) {
                    if let inlineValue {
                        values[name, default: []].append(inlineValue)
                    } else {
                        guard i + 1 < words.count else { throw UsageError(description: "option --\(name) needs a value") }
                        values[name, default: []].append(words[i + 1])
                        i += 1
                    }
                } else if switches.contains(name) {
                    flags.insert(name)
                } else {
                    let known = (valued.union(switches)).sorted().map { "--" + $0 }
                    throw UsageError(description: "unknown option --\(name) (options: \(known.joined(separator: ", ")))")
                }
            } else {
                positional.append(word)
            }
            i += 1
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) }

    /// The number given to `--name`, checked against `range`.
    func number(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = value(name) else { return nil }
        guard let v = Double(text), v.isFinite, range.contains(v) else {
            throw UsageError(description: "--\(name) expects a number from \(String(format: "%g", range.lowerBound)) to \(String(format: "%g", range.upperBound)), got '\(text)'")
        }
        return v
    }

    /// The integer given to `--name` (or `defaultValue`), checked against `range`.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let v = Int(text), range.contains(v) else {
            throw UsageError(description: "--\(name) expects an integer from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return v
    }
}
