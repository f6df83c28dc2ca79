/// A problem in a pipeline description file, located by file, line and column (1-based), printed the
/// way compilers do: `pipelines/x.fg:3:12: unknown node type 'resise' (did you mean 'resize'?)`.
public struct PipelineError: Error, Sendable, CustomStringConvertible, Equatable {
    public let file: String
    public let line: Int
    public let column: Int
    public let message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// A problem with a value given on the command line (`--set …`): `origin` names it instead of a place.
    public init(origin: String, message: String) {
        self.init(file: origin, line: 0, column: 0, message: message)
    }

    public var description: String {
        if line > 0 { return "\(file):\(line):\(column): \(message)" }
        return file.isEmpty ? message : "\(file): \(message)"
    }
}
