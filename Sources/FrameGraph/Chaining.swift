precedencegroup FrameChainPrecedence {
    associativity: left
}

/// Connects `left`'s output to `right`'s first input and returns `right`, so
/// `source --> resize --> sink` reads like the data flow.
infix operator --> : FrameChainPrecedence

@discardableResult
public func --> <Downstream: Node>(left: Node, right: Downstream) -> Downstream {
    left.addTarget(right, port: 0)
    return right
}

/// A node together with one of its input ports, for `-->` into a port other than the first:
/// `mask --> blend.port(2)`.
public struct NodePort: Sendable {
    public let node: Node
    public let port: Int
}

extension Node {
    /// This node's input `port`, as a `-->` target.
    public func port(_ port: Int) -> NodePort { NodePort(node: self, port: port) }
}

@discardableResult
public func --> (left: Node, right: NodePort) -> Node {
    left.addTarget(right.node, port: right.port)
    return right.node
}
