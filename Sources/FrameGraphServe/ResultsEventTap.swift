import Foundation
import FrameGraph
import FrameGraphResults

/// A sink that turns what a node emits into `/events` lines: each frame's results as the results
/// file writes them (the JSON Lines schema, docs/RESULTS.md). It encodes only while an event stream
/// is open, and only watches: the run's report leaves it out (``SinkNode/isMonitor``).
///
/// ```swift
/// faces.addTarget(ResultsEventTap(name: "faces.events", producer: "faces") { line in server.publish(event: line) })
/// ```
public final class ResultsEventTap: SinkNode, @unchecked Sendable {
    private let producer: String
    private let isWanted: @Sendable () -> Bool
    private let publish: @Sendable (String) -> Void

    /// `isWanted` tells whether anyone listens (checked per frame); `publish` takes the line.
    public init(name: String, producer: String, isWanted: @escaping @Sendable () -> Bool, publish: @escaping @Sendable (String) -> Void) {
        self.producer = producer
        self.isWanted = isWanted
        self.publish = publish
        super.init(name: name)
    }

    override public var kind: String { "serve-events" }
    override public var inputKinds: [StreamKind?] { [nil] }
    override public var isClocked: Bool { false }
    override public var isMonitor: Bool { true }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard isWanted(), let line = try? ResultsLines.encode(TimedResults(frame: frame, producer: producer)) else { return }
        publish(String(decoding: line, as: UTF8.self))
    }
}
