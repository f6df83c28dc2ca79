import FrameGraph
import Synchronization

/// A sink that remembers what it was given: output index, sequence number and stamp of every frame.
final class CollectingSink: SinkNode, @unchecked Sendable {
    struct Entry: Equatable {
        var index: Int
        var sequence: Int
        var stamp: Int?
        var time: Double
    }
    private let stored = Mutex<[Entry]>([])
    var entries: [Entry] { stored.withLock { $0 } }

    override func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        let entry = Entry(index: index, sequence: frame.sequence, stamp: PatternSource.readStamp(from: frame),
                          time: context.clock.now())
        stored.withLock { $0.append(entry) }
    }
}
