import Foundation
import FrameGraph

/// Sinks and a harness that tests of every target share (one definition each, state behind
/// ``Protected`` so ThreadSanitizer sees the locks).

/// A sink that remembers output index, sequence number, stamp and clock time of every frame.
public final class CollectingSink: SinkNode, @unchecked Sendable {
    public struct Entry: Equatable, Sendable {
        public var index: Int
        public var sequence: Int
        public var stamp: Int?
        public var time: Double
    }
    private let stored = Protected<[Entry]>([])
    public var entries: [Entry] { stored.withLock { $0 } }

    override public init(name: String) { super.init(name: name) }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        let entry = Entry(index: index, sequence: frame.sequence, stamp: PatternSource.readStamp(from: frame),
                          time: context.clock.now())
        stored.withLock { $0.append(entry) }
    }
}

/// A sink that keeps copies of every Nth frame it receives (and of the last one), for pixel checks.
public final class FrameCollector: SinkNode, @unchecked Sendable {
    public let keepEvery: Int
    private let kept = Protected<(every: [Frame], last: Frame?)>(([], nil))

    public init(name: String, keepEvery: Int = 1) {
        self.keepEvery = max(1, keepEvery)
        super.init(name: name)
    }

    /// The copies of frames 0, N, 2N …
    public var frames: [Frame] { kept.withLock { $0.every } }
    /// A copy of the last frame received.
    public var last: Frame? { kept.withLock { $0.last } }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        let copy = Frame.make(frame.description)
        copy.copyPixels(from: frame)
        kept.withLock { state in
            if index % keepEvery == 0 { state.every.append(copy) }
            state.last = copy
        }
    }
}

/// Drives one filter outside a graph: negotiates its input, then processes frames on the calling
/// thread, as the runner would inline.
public struct NodeHarness {
    public let context: RunContext

    public init(options: RunOptions = RunOptions()) {
        context = RunContext(options: options)
    }

    /// Negotiates `frame`'s description and processes `frame` once.
    public func run(_ node: FilterNode, _ frame: Frame) throws -> Frame? {
        _ = try node.negotiate(inputs: [frame.description])
        return try node.process(frame, context: context)
    }
}
