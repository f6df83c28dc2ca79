/// Errors about building, validating and running a graph. Each message names the node, port and
/// field involved, so the user knows what to change.
public enum GraphError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The graph has no source node.
    case noSource
    /// A node's input port has no upstream connection.
    case portNotConnected(node: String, port: String)
    /// Two upstream nodes feed the same input port.
    case portConnectedTwice(node: String, port: String)
    /// A connection names a port the node does not have.
    case noSuchPort(node: String, port: Int, ports: [String])
    /// Frames would flow in a circle through this node.
    case cycle(node: String)
    /// A node's output goes nowhere (add a sink, such as `null`).
    case outputUnused(node: String)
    /// What arrives at a port does not fit what the node accepts.
    case mismatch(node: String, port: String, field: String, expected: String, got: String)
    /// An option value is wrong.
    case invalidOption(node: String, option: String, reason: String)
    /// Reading or writing a file failed.
    case io(path: String, reason: String)
    /// A node failed while running.
    case nodeFailed(node: String, reason: String)
    /// The graph has more nodes than the run allows.
    case tooManyNodes(count: Int, limit: Int)

    public var description: String {
        switch self {
        case .noSource:
            return "the graph has no source node (file, camera or pattern)"
        case .portNotConnected(let node, let port):
            return "node '\(node)': input port '\(port)' is not connected"
        case .portConnectedTwice(let node, let port):
            return "node '\(node)': input port '\(port)' is connected more than once"
        case .noSuchPort(let node, let port, let ports):
            return "node '\(node)' has no input port #\(port) (its ports: \(ports.joined(separator: ", ")))"
        case .cycle(let node):
            return "the graph has a cycle through node '\(node)'"
        case .outputUnused(let node):
            return "node '\(node)': its output goes nowhere (connect it to a sink such as 'null')"
        case .mismatch(let node, let port, let field, let expected, let got):
            return "node '\(node)', port '\(port)': \(field) mismatch: expected \(expected), got \(got)"
        case .invalidOption(let node, let option, let reason):
            return "node '\(node)': option '\(option)': \(reason)"
        case .io(let path, let reason):
            return "\(path): \(reason)"
        case .nodeFailed(let node, let reason):
            return "node '\(node)' failed: \(reason)"
        case .tooManyNodes(let count, let limit):
            return "the graph has \(count) nodes, more than the limit of \(limit)"
        }
    }
}
