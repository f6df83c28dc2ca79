import Foundation
import FrameGraph
import FrameGraphPipelines

/// One option of a command, written once: its name, the value it takes (with range, choices and
/// default) and its help. Parsing, range checks, `--help`, the man page and the shell completions
/// all read it. It is the run options' own type (``RunOptionSpec`` in FrameGraphPipelines, whose
/// table the C library reads too), so `framegraph run`'s options are that table as it is.
typealias CommandOption = RunOptionSpec

extension RunOptionSpec {
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
