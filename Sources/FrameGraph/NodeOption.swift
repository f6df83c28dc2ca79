import Foundation

/// The kind of value a node option takes, with its range or its choices.
public enum OptionKind: Sendable, Equatable {
    /// An integer within the range.
    case int(ClosedRange<Int>)
    /// A finite number within the range.
    case number(ClosedRange<Double>)
    /// Free text (a path, a model name, a colour).
    case text
    /// true or false (also yes/no, on/off, 1/0).
    case flag
    /// One of FrameGraph's pixel format names.
    case pixelFormat
    /// One of these words.
    case choice([String])

    /// What `framegraph nodes` shows: "integer 1…64", "number 0…0.95", "a|b|c".
    public var label: String {
        switch self {
        case .int(let r): return "integer \(r.lowerBound)…\(r.upperBound)"
        case .number(let r): return "number \(OptionKind.format(r.lowerBound))…\(OptionKind.format(r.upperBound))"
        case .text: return "text"
        case .flag: return "true|false"
        case .pixelFormat: return PixelFormat.knownNames.joined(separator: "|")
        case .choice(let values): return values.joined(separator: "|")
        }
    }

    /// A number as people write it: 30, 0.5, 1e+06.
    public static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%g", value)
    }
}

/// Everything about one node option, written once: its name, kind (with range or choices), default
/// and documentation. Pipeline parsing, `--set`, `framegraph nodes`, the node's Swift initialiser
/// default and validation all read it.
public struct OptionSpec: Sendable {
    public let name: String
    public let kind: OptionKind
    /// The default as text (as `framegraph nodes` shows it); nil when the option has none.
    public let defaultText: String?
    /// Whether a value must be given.
    public let required: Bool
    public let help: String

    public init(name: String, kind: OptionKind, defaultText: String?, required: Bool = false, help: String) {
        self.name = name
        self.kind = kind
        self.defaultText = defaultText
        self.required = required
        self.help = help
    }

    /// Why `text` is not a valid value of this option, or nil when it is.
    public func problem(with text: String) -> String? {
        switch kind {
        case .int(let range):
            guard let v = Int(text) else { return "expected an integer, got '\(text)'" }
            return range.contains(v) ? nil : "must be from \(range.lowerBound) to \(range.upperBound), got \(v)"
        case .number(let range):
            guard let v = Double(text), v.isFinite else { return "expected a number, got '\(text)'" }
            return range.contains(v) ? nil
                : "must be from \(OptionKind.format(range.lowerBound)) to \(OptionKind.format(range.upperBound)), got \(text)"
        case .text:
            return nil
        case .flag:
            return OptionSpec.flagValue(text) == nil ? "expected true or false, got '\(text)'" : nil
        case .pixelFormat:
            return PixelFormat(name: text) == nil
                ? "unknown pixel format '\(text)' (known: \(PixelFormat.knownNames.joined(separator: ", ")))" : nil
        case .choice(let values):
            return values.contains(text) ? nil
                : "expected one of \(values.joined(separator: ", ")), got '\(text)'\(didYouMean(text, values))"
        }
    }

    /// true/yes/on/1 or false/no/off/0.
    public static func flagValue(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: return nil
        }
    }
}

/// A typed node option: its ``OptionSpec`` plus the typed default the node's Swift initialiser uses,
/// so the value is written once.
///
/// ```swift
/// extension SlowNode {
///     public enum OptionSpecs {
///         public static let ms = NodeOption.number("ms", default: 50, 0...60_000, "milliseconds per frame")
///     }
/// }
/// public init(name: String = "slow", delay: Double = OptionSpecs.ms.defaultValue / 1000)
/// ```
public struct NodeOption<Value: Sendable>: Sendable {
    public let spec: OptionSpec
    /// The default (``OptionSpec/required`` options have none and read it as nil).
    public let defaultValue: Value
    /// Text → value, for text that passed ``OptionSpec/problem(with:)``.
    public let parse: @Sendable (String) -> Value?

    public var name: String { spec.name }
}

extension NodeOption where Value == Int {
    /// An integer option with a default.
    public static func int(_ name: String, default value: Int, _ range: ClosedRange<Int>, _ help: String) -> Self {
        precondition(range.contains(value), "default of \(name) outside its range")
        return .init(spec: OptionSpec(name: name, kind: .int(range), defaultText: String(value), help: help),
                     defaultValue: value, parse: { Int($0) })
    }
}

extension NodeOption where Value == Int? {
    /// An integer option without a default: required, or optional when `required` is false.
    public static func int(_ name: String, required: Bool, _ range: ClosedRange<Int>, _ help: String) -> Self {
        .init(spec: OptionSpec(name: name, kind: .int(range), defaultText: nil, required: required, help: help),
              defaultValue: nil, parse: { Int($0) })
    }
}

extension NodeOption where Value == Double {
    /// A number option with a default.
    public static func number(_ name: String, default value: Double, _ range: ClosedRange<Double>, _ help: String) -> Self {
        precondition(range.contains(value), "default of \(name) outside its range")
        return .init(spec: OptionSpec(name: name, kind: .number(range), defaultText: OptionKind.format(value), help: help),
                     defaultValue: value, parse: { Double($0) })
    }
}

extension NodeOption where Value == Double? {
    /// A number option without a default.
    public static func number(_ name: String, optional range: ClosedRange<Double>, _ help: String) -> Self {
        .init(spec: OptionSpec(name: name, kind: .number(range), defaultText: nil, help: help),
              defaultValue: nil, parse: { Double($0) })
    }
}

extension NodeOption where Value == Bool {
    /// A true/false option.
    public static func flag(_ name: String, default value: Bool, _ help: String) -> Self {
        .init(spec: OptionSpec(name: name, kind: .flag, defaultText: String(value), help: help),
              defaultValue: value, parse: { OptionSpec.flagValue($0) })
    }
}

extension NodeOption where Value == String {
    /// A text option with a default.
    public static func text(_ name: String, default value: String, _ help: String) -> Self {
        .init(spec: OptionSpec(name: name, kind: .text, defaultText: value, help: help), defaultValue: value, parse: { $0 })
    }
}

extension NodeOption where Value == String? {
    /// A text option without a default: required (a path), or optional.
    public static func text(_ name: String, required: Bool, _ help: String) -> Self {
        .init(spec: OptionSpec(name: name, kind: .text, defaultText: nil, required: required, help: help),
              defaultValue: nil, parse: { $0 })
    }
}

extension NodeOption where Value == PixelFormat? {
    /// An optional pixel format.
    public static func pixelFormat(_ name: String, required: Bool, _ help: String) -> Self {
        .init(spec: OptionSpec(name: name, kind: .pixelFormat, defaultText: nil, required: required, help: help),
              defaultValue: nil, parse: { PixelFormat(name: $0) })
    }
}

extension NodeOption where Value == String {
    /// One of a list of words.
    public static func choice(_ name: String, _ values: [String], default value: String, _ help: String) -> Self {
        precondition(values.contains(value), "default of \(name) not among its choices")
        return .init(spec: OptionSpec(name: name, kind: .choice(values), defaultText: value, help: help),
                     defaultValue: value, parse: { values.contains($0) ? $0 : nil })
    }
}

extension NodeOption {
    /// One of an enumeration's cases, by raw value.
    public static func choice(_ name: String, default value: Value, _ help: String) -> Self
    where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
        .init(spec: OptionSpec(name: name, kind: .choice(Value.allCases.map(\.rawValue)), defaultText: value.rawValue, help: help),
              defaultValue: value, parse: { Value(rawValue: $0) })
    }
}

extension NodeOption {
    /// One of a list of words, each standing for a value (several words may stand for the same one,
    /// as `centre` and `center` do). Parsed once into the value; any other word is an error naming
    /// the choices.
    ///
    /// ```swift
    /// static let softmax = NodeOption<Bool?>.choice("softmax", [("auto", nil), ("on", true), ("off", false)], default: "auto", "…")
    /// ```
    public static func choice(_ name: String, _ words: [(word: String, value: Value)], default word: String, _ help: String) -> Self {
        guard let value = words.first(where: { $0.word == word })?.value else { preconditionFailure("default of \(name) not among its choices") }
        let table = words
        return .init(spec: OptionSpec(name: name, kind: .choice(words.map(\.word)), defaultText: word, help: help),
                     defaultValue: value, parse: { text in table.first { $0.word == text }.map(\.value) })
    }
}
