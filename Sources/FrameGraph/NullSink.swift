/// A sink that discards frames (after counting them): for measuring a graph without encoding.
public final class NullSink: SinkNode, @unchecked Sendable {
    override public var kind: String { "null" }
}
