import Foundation
import FrameGraph
import FrameGraphPipelines

/// One option of a command, written once: its name, the value it takes (with range, choices and
/// default) and its help. Parsing, range checks, `--help`, the man page and the shell completions
/// all read it.
struct CommandOption: Sendable {
    /// What follows the option on the command line.
    enum Value: Sendable {
        /// Nothing: a switch.
        case none
        /// Free text, shown as `metavar` (FILE, PATH, NODE.KEY=VALUE).
        case text(String)
        /// A number within the range.
        case number(ClosedRange<Double>)
        /// An integer within the range.
        case integer(ClosedRange<Int>)
        /// One of these words.
        case choice([String])
    }

    let name: String
    let value: Value
    /// The default as people read it ("30", "auto"); nil when there is none.
    let defaultText: String?
    let help: String
    /// A one-letter alias (`-o` for `--output`).
    var short: Character?
    /// May be given more than once (`--set`).
    var repeatable = false

    init(_ name: String, _ value: Value, default defaultText: String? = nil, _ help: String, short: Character? = nil,
         repeatable: Bool = false) {
        self.name = name
        self.value = value
        self.defaultText = defaultText
        self.help = help
        self.short = short
        self.repeatable = repeatable
    }

    /// A switch (no value).
    init(_ name: String, _ help: String, short: Character? = nil) {
        self.init(name, .none, default: nil, help, short: short)
    }

    /// The command-line form of a node option (the `label` command's from the `label` node's):
    /// the same name, range or choices, default and help.
    init(_ spec: OptionSpec) {
        let value: Value
        switch spec.kind {
        case .int(let r): value = .integer(r)
        case .number(let r): value = .number(r)
        case .choice(let words): value = .choice(words)
        case .flag: value = .choice(["true", "false"])
        case .text, .pixelFormat: value = .text(spec.name.uppercased())
        }
        self.init(spec.name, value, default: spec.defaultText, spec.help)
    }

    /// The command-line form of a run option (``RunOptionSpec``, the table `framegraph run` and the
    /// C library share).
    init(_ spec: RunOptionSpec) {
        let value: Value
        switch spec.value {
        case .none: value = .none
        case .text(let metavar): value = .text(metavar)
        case .number(let r): value = .number(r)
        case .integer(let r): value = .integer(r)
        case .choice(let words): value = .choice(words)
        }
        self.init(spec.name, value, default: spec.defaultText, spec.help, short: spec.short, repeatable: spec.repeatable)
    }

    var takesValue: Bool {
        if case .none = value { return false }
        return true
    }

    /// `--fps N`, `--mode live|offline`, `--quiet`.
    var synopsis: String {
        let flag = (short.map { "-\($0), " } ?? "") + "--\(name)"
        switch value {
        case .none: return flag
        case .text(let metavar): return "\(flag) \(metavar)"
        case .number, .integer: return "\(flag) N"
        case .choice(let words): return "\(flag) \(words.joined(separator: "|"))"
        }
    }

    /// "number 0.1…1000, default 30" and the like, for the help line.
    var rangeText: String? {
        var parts: [String] = []
        switch value {
        case .number(let r): parts.append("\(Self.format(r.lowerBound))…\(Self.format(r.upperBound))")
        case .integer(let r): parts.append("\(r.lowerBound)…\(r.upperBound)")
        default: break
        }
        if let defaultText { parts.append("default \(defaultText)") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%g", v)
    }
}

/// One command (`run`, `model bench`): how it is written, what it does, its options and examples.
struct CommandSpec: Sendable {
    /// The command words (`["model", "bench"]`).
    let words: [String]
    /// What follows the words (`PIPELINE [options]`).
    let usage: String
    let summary: String
    /// More lines of explanation for `--help` (may be empty).
    var details: [String] = []
    var options: [CommandOption] = []
    /// Whole command lines a user could type.
    var examples: [String] = []

    var name: String { words.joined(separator: " ") }

    func option(_ name: String) -> CommandOption? { options.first { $0.name == name } }
}
