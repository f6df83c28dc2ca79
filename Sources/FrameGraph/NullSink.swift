/// A sink that discards frames (after counting them): for measuring a graph without encoding. It
/// takes frames and results alike.
public final class NullSink: SinkNode, @unchecked Sendable {
    override public var kind: String { "null" }
    override public var inputKinds: [StreamKind?] { [nil] }
}
