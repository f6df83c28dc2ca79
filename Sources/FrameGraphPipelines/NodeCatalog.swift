import Foundation
import FrameGraph
import FrameGraphModels

/// A kind of node that pipeline files can declare: its name, role, options and how to make it.
public struct NodeType: Sendable {
    /// The node's role (the same as the made node's ``Node/role``).
    public typealias Role = NodeRole

    public var name: String
    public var role: Role
    public var summary: String
    public var options: [OptionSpec]
    /// Input port names (for `framegraph nodes`).
    public var ports: [String]
    /// What the type's nodes emit: frames, or a results stream (detectors, classifiers) — what
    /// `--results` connects to.
    public var emits: StreamKind
    /// Whether the frames it emits carry its results too (``Node/framesCarryResults``): `--results`
    /// connects such nodes as well.
    public var carriesResults = false
    /// Whether `--results` connects nodes of this type: they emit results, or frames carrying them.
    public var producesResults: Bool { emits == .results || carriesResults }
    let make: @Sendable (_ name: String, _ options: OptionValues) throws -> Node

    public init(name: String, role: Role, summary: String, ports: [String] = ["in"], emits: StreamKind = .frames, options: [OptionSpec],
                make: @escaping @Sendable (_ name: String, _ options: OptionValues) throws -> Node) {
        self.name = name
        self.emits = emits
        self.role = role
        self.summary = summary
        self.ports = role == .source ? [] : ports
        self.options = options
        self.make = make
    }

    /// The same type, marked as emitting frames that carry its results (``carriesResults``).
    public var carryingResults: NodeType {
        var t = self
        t.carriesResults = true
        return t
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
        for role in NodeRole.allCases {
            for type in types.values.filter({ $0.role == role }).sorted(by: { $0.name < $1.name }) {
                let ports = type.ports.count > 1 ? "  ports: " + type.ports.joined(separator: ", ") : ""
                lines.append("\(type.name) (\(role.rawValue)): \(type.summary)\(ports)")
                for o in type.options {
                    let d = o.required ? "required" : (o.defaultText.map { "default \($0)" } ?? "optional")
                    lines.append("    \(o.name)=<\(o.kind.label)>  \(o.help) [\(d)]")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The options given to one declaration, read through their ``NodeOption`` specs: a value given in
/// the file is checked against the spec's range or choices (errors point at it in the file), an
/// absent one takes the spec's default.
public struct OptionValues: Sendable {
    let declaration: PipelineDocument.Declaration
    let specs: [OptionSpec]
    let file: String
    /// The run's model service: where nodes find models and the files that go with them.
    public let models: ModelService

    func option(_ key: String) -> PipelineDocument.Option? {
        declaration.options.first { $0.key == key }
    }

    func error(_ option: PipelineDocument.Option, _ message: String) -> PipelineError {
        let text = "node '\(declaration.name)': option '\(option.key)': \(message)"
        if let origin = option.origin { return PipelineError(origin: origin, message: text) }
        return PipelineError(file: file, line: option.valueLocation.line, column: option.valueLocation.column, message: text)
    }

    /// The pipeline file the declaration is in (as given).
    public var pipelineFile: String { file }

    /// A file the node reads, named by a required option: as written when it exists (or is absolute,
    /// or came from the command line); else, for a relative path written in the pipeline file, below
    /// the pipeline's folder or the one above it (its project), so a shipped pipeline's own input is
    /// found from any folder.
    public func inputPath(_ spec: NodeOption<String?>) throws -> String? {
        guard let path = try value(spec) else { return nil }
        guard option(spec.name)?.origin == nil, !path.hasPrefix("/"), !FileManager.default.fileExists(atPath: path) else { return path }
        for root in models.configuration.searchPath.relativeRoots {
            let candidate = URL(fileURLWithPath: root).appendingPathComponent(path).standardizedFileURL.path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        return path
    }

    /// Whether the option was given.
    public func has(_ key: String) -> Bool { option(key) != nil }

    /// Checks every given option against its spec (range, choices, type) and that required ones are
    /// there: one error, at the value's place in the file, naming node, option, value and range.
    func validate() throws {
        for o in declaration.options {
            guard let spec = specs.first(where: { $0.name == o.key }) else { continue }
            if let problem = spec.problem(with: o.value) { throw error(o, problem) }
        }
        for spec in specs where spec.required {
            guard let value = option(spec.name)?.value, !value.isEmpty else { throw missing(spec.name) }
        }
    }

    func missing(_ key: String) -> PipelineError {
        PipelineError(file: file, line: declaration.location.line, column: declaration.location.column,
                      message: "node '\(declaration.name)' (\(declaration.type)) needs option '\(key)'")
    }

    /// The option's value: as given (checked), else its default. A required option that is missing
    /// is an error.
    public func value<Value>(_ spec: NodeOption<Value>) throws -> Value {
        guard let o = option(spec.name) else {
            if spec.spec.required { throw missing(spec.name) }
            return spec.defaultValue
        }
        if let problem = spec.spec.problem(with: o.value) { throw error(o, problem) }
        guard let value = spec.parse(o.value) else { throw error(o, "cannot read '\(o.value)'") }
        return value
    }

    /// A required option's value (its spec has no default).
    public func required<Value>(_ spec: NodeOption<Value?>) throws -> Value {
        guard let value = try self.value(spec) else { throw missing(spec.name) }
        return value
    }
}
