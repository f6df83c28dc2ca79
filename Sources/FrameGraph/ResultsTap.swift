import Foundation

/// Hands a program the results of a node as they are made, without a file: a callback, or an
/// `AsyncStream`. It takes a results stream (a detector's output) or frames (whatever results they
/// carry, empty when none), and in live mode every item as it arrives (never one per clock tick).
///
/// ```swift
/// let faces = NetworkNode(name: "faces", …)
/// for await item in faces.resultsStream() {            // or: faces.onResults { item in … }
///     print(item.time, item.results.detections.count)
/// }
/// ```
public final class ResultsTap: SinkNode, @unchecked Sendable {
    private let handler: @Sendable (TimedResults) -> Void
    private let onFinish: @Sendable () -> Void
    /// Producer name used for frames that carry no results.
    private let upstreamName: String

    /// A tap that calls `handler` on the delivering thread for every item (keep it short: it runs
    /// on the pipeline's thread). `onFinish` runs once when the run ends.
    public init(name: String, upstream: String = "", handler: @escaping @Sendable (TimedResults) -> Void,
                onFinish: @escaping @Sendable () -> Void = {}) {
        self.handler = handler
        self.onFinish = onFinish
        upstreamName = upstream
        super.init(name: name)
    }

    override public var kind: String { "results-tap" }
    override public var inputKinds: [StreamKind?] { [nil] }
    override public var isClocked: Bool { false }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        handler(TimedResults(frame: frame, producer: upstreamName))
    }

    override public func finish(context: RunContext) throws {
        onFinish()
    }
}

extension Node {
    /// Calls `handler` with every result this node emits (adds a ``ResultsTap`` as a target; wire
    /// it before the run).
    @discardableResult
    public func onResults(_ handler: @escaping @Sendable (TimedResults) -> Void) -> ResultsTap {
        let tap = ResultsTap(name: "\(name).results-tap", upstream: name, handler: handler)
        addTarget(tap)
        return tap
    }

    /// The results this node emits, as an `AsyncStream` that ends with the run. At most `buffer`
    /// items wait for a slow reader (the oldest are dropped beyond that, never the pipeline held).
    public func resultsStream(buffer: Int = 256) -> AsyncStream<TimedResults> {
        let (stream, continuation) = AsyncStream<TimedResults>.makeStream(bufferingPolicy: .bufferingNewest(max(1, buffer)))
        let tap = ResultsTap(name: "\(name).results-stream", upstream: name, handler: { continuation.yield($0) },
                             onFinish: { continuation.finish() })
        addTarget(tap)
        return stream
    }
}
