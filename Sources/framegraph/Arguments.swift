import Foundation
import FrameGraph

/// A command line read against its command's ``CommandSpec``: positional words, and `--name value`
/// (or `--name=value`, or a short `-o value`) options, each checked against its spec — an unknown
/// option is an error with a "did you mean", a value out of its range or choices names both.
struct Arguments {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    let spec: CommandSpec
    /// Every word that is not an option, the command words included (`run`, `PIPELINE`).
    private(set) var positional: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    /// Flags given as `--name=false`.
    private var negated: Set<String> = []

    init(_ words: [String], spec: CommandSpec) throws {
        self.spec = spec
        var i = 0
        var onlyPositional = false
        while i < words.count {
            let word = words[i]
            i += 1
            if onlyPositional || word == "-" || !word.hasPrefix("-") {
                positional.append(word)
                continue
            }
            if word == "--" {
                onlyPositional = true
                continue
            }
            var name: String
            var inlineValue: String?
            if word.hasPrefix("--") {
                name = String(word.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else if word.count == 2, let short = word.last, let option = spec.options.first(where: { $0.short == short }) {
                name = option.name
            } else {
                throw unknown(word)
            }
            guard let option = spec.option(name) else { throw unknown("--" + name) }
            if option.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard i < words.count else { throw UsageError(description: "option --\(name) needs a value: \(option.synopsis)") }
                    value = words[i]
                    i += 1
                }
                if values[name] != nil && !option.repeatable {
                    throw UsageError(description: "option --\(name) is given twice")
                }
                try Self.check(value, for: option)
                values[name, default: []].append(value)
            } else {
                // A flag may be spelled out: --name=true or --name=false.
                switch inlineValue {
                case nil, "true": flags.insert(name); negated.remove(name)
                case "false": negated.insert(name); flags.remove(name)
                default: throw UsageError(description: "option --\(name) takes no value (or =true, =false)")
                }
            }
        }
    }

    private func unknown(_ word: String) -> UsageError {
        let names = spec.options.map { "--" + $0.name }
        let hint = suggestion(for: word, in: names).map { " (did you mean \($0)?)" } ?? ""
        let list = names.isEmpty ? "it takes no options" : "framegraph \(spec.name) --help lists its options"
        return UsageError(description: "unknown option \(word) for framegraph \(spec.name)\(hint); \(list)")
    }

    /// Checks `text` against the option's range or choices.
    static func check(_ text: String, for option: CommandOption) throws {
        switch option.value {
        case .number(let range):
            guard let v = Double(text), v.isFinite, range.contains(v) else {
                throw UsageError(description: "--\(option.name) expects a number from \(CommandOption.format(range.lowerBound)) to \(CommandOption.format(range.upperBound)), got '\(text.prefix(80))'")
            }
        case .integer(let range):
            guard let v = Int(text), range.contains(v) else {
                throw UsageError(description: "--\(option.name) expects an integer from \(range.lowerBound) to \(range.upperBound), got '\(text.prefix(80))'")
            }
        case .choice(let words):
            guard words.contains(text) else {
                let list = words.count > 1 ? words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "") : words.joined()
                throw UsageError(description: "--\(option.name) expects \(list), got '\(text.prefix(80))'\(didYouMean(text, words))")
            }
        case .text:
            guard !text.contains("\0") else { throw UsageError(description: "--\(option.name): the value holds a NUL byte") }
        case .none:
            break
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) }
    /// A flag as given: true (`--name`, `--name=true`), false (`--name=false`), nil when absent.
    func flag(_ name: String) -> Bool? { flags.contains(name) ? true : (negated.contains(name) ? false : nil) }

    /// The number given to `--name` (checked against its spec when parsed), or nil.
    func number(_ name: String) -> Double? { value(name).flatMap(Double.init) }

    /// The integer given to `--name`, else its spec's default (0 when it has none).
    func integer(_ name: String) -> Int {
        value(name).flatMap { Int($0) } ?? spec.option(name)?.defaultText.flatMap { Int($0) } ?? 0
    }

    /// The integer given to `--name`, or nil.
    func optionalInteger(_ name: String) -> Int? { value(name).flatMap { Int($0) } }

    /// The word given to `--name`, else its spec's default.
    func choice(_ name: String) -> String? { value(name) ?? spec.option(name)?.defaultText }
}
