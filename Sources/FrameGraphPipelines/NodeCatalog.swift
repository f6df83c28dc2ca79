import Foundation
import FrameGraph

/// One option a node type takes, for parsing and for `framegraph nodes`.
public struct OptionSpec: Sendable {
    public enum Kind: Sendable {
        case int, number, text, flag, format
        case choice([String])

        var label: String {
            switch self {
            case .int: return "integer"
            case .number: return "number"
            case .text: return "text"
            case .flag: return "true|false"
            case .format: return PixelFormat.knownNames.joined(separator: "|")
            case .choice(let values): return values.joined(separator: "|")
            }
        }
    }

    public var name: String
    public var kind: Kind
    /// The default, as shown in help; nil when the option is required or has no default.
    public var defaultValue: String?
    public var required: Bool
    public var help: String

    public init(_ name: String, _ kind: Kind, default defaultValue: String? = nil, required: Bool = false, _ help: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.required = required
        self.help = help
    }
}

/// A kind of node that pipeline files can declare: its name, role, options and how to make it.
public struct NodeType: Sendable {
    public enum Role: String, Sendable { case source, filter, composite, sink }

    public var name: String
    public var role: Role
    public var summary: String
    public var options: [OptionSpec]
    /// Input port names (for `framegraph nodes`).
    public var ports: [String]
    let make: @Sendable (_ name: String, _ options: OptionValues) throws -> Node

    public init(name: String, role: Role, summary: String, ports: [String] = ["in"], options: [OptionSpec],
                make: @escaping @Sendable (_ name: String, _ options: OptionValues) throws -> Node) {
        self.name = name
        self.role = role
        self.summary = summary
        self.ports = role == .source ? [] : ports
        self.options = options
        self.make = make
    }
}

/// The node types a pipeline file may use, by name. ``standard`` holds FrameGraph's own; programs
/// may add their own types with ``register(_:)``.
public struct NodeCatalog: Sendable {
    public private(set) var types: [String: NodeType] = [:]

    public init(_ types: [NodeType] = []) {
        types.forEach { register($0) }
    }

    /// Adds or replaces a node type.
    public mutating func register(_ type: NodeType) {
        types[type.name] = type
    }

    /// Type names, sorted.
    public var names: [String] { types.keys.sorted() }

    /// Help text: every type with its ports and options.
    public func helpText() -> String {
        var lines: [String] = []
        for role in [NodeType.Role.source, .filter, .composite, .sink] {
            for type in types.values.filter({ $0.role == role }).sorted(by: { $0.name < $1.name }) {
                let ports = type.ports.count > 1 ? "  ports: " + type.ports.joined(separator: ", ") : ""
                lines.append("\(type.name) (\(role.rawValue)): \(type.summary)\(ports)")
                for o in type.options {
                    let d = o.required ? "required" : (o.defaultValue.map { "default \($0)" } ?? "optional")
                    lines.append("    \(o.name)=<\(o.kind.label)>  \(o.help) [\(d)]")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The options given to one declaration, with typed accessors that report bad values at their place
/// in the file.
public struct OptionValues: Sendable {
    let declaration: PipelineDocument.Declaration
    let specs: [OptionSpec]
    let file: String

    func option(_ key: String) -> PipelineDocument.Option? {
        declaration.options.first { $0.key == key }
    }

    func error(_ option: PipelineDocument.Option, _ message: String) -> PipelineError {
        PipelineError(file: file, line: option.valueLocation.line, column: option.valueLocation.column,
                      message: "node '\(declaration.name)': option '\(option.key)': \(message)")
    }

    /// The project folder of the pipeline file (the parent of its folder, e.g. the checkout for
    /// `pipelines/x.fg`), where bare model names are also looked up.
    public var projectFolder: String {
        URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Whether the option was given.
    public func has(_ key: String) -> Bool { option(key) != nil }

    public func text(_ key: String) throws -> String? {
        option(key)?.value
    }

    public func requiredText(_ key: String) throws -> String {
        guard let value = option(key)?.value, !value.isEmpty else {
            throw PipelineError(file: file, line: declaration.location.line, column: declaration.location.column,
                                message: "node '\(declaration.name)' (\(declaration.type)) needs option '\(key)'")
        }
        return value
    }

    public func int(_ key: String, default value: Int? = nil, range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let o = option(key) else { return value }
        guard let v = Int(o.value) else { throw error(o, "expected an integer, got '\(o.value)'") }
        if let range, !range.contains(v) { throw error(o, "must be in \(range.lowerBound)...\(range.upperBound), got \(v)") }
        return v
    }

    /// An integer option that must be given.
    public func requiredInt(_ key: String, range: ClosedRange<Int>? = nil) throws -> Int {
        _ = try requiredText(key)
        guard let v = try int(key, range: range) else { preconditionFailure("present option read as absent") }
        return v
    }

    public func number(_ key: String, default value: Double? = nil, minimum: Double? = nil) throws -> Double? {
        guard let o = option(key) else { return value }
        guard let v = Double(o.value), v.isFinite else { throw error(o, "expected a number, got '\(o.value)'") }
        if let minimum, v < minimum { throw error(o, "must be at least \(minimum), got \(o.value)") }
        return v
    }

    public func flag(_ key: String, default value: Bool = false) throws -> Bool {
        guard let o = option(key) else { return value }
        switch o.value.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw error(o, "expected true or false, got '\(o.value)'")
        }
    }

    public func choice(_ key: String, _ values: [String], default value: String) throws -> String {
        guard let o = option(key) else { return value }
        guard values.contains(o.value) else {
            throw error(o, "expected one of \(values.joined(separator: ", ")), got '\(o.value)'\(didYouMean(o.value, values))")
        }
        return o.value
    }

    public func format(_ key: String) throws -> PixelFormat? {
        guard let o = option(key) else { return nil }
        guard let f = PixelFormat(name: o.value) else {
            throw error(o, "unknown pixel format '\(o.value)' (known: \(PixelFormat.knownNames.joined(separator: ", ")))")
        }
        return f
    }
}
