import Foundation
import FrameGraph
import Testing
import TestSupport

/// A worker node's `prepare` runs on the delivering thread, once per frame the worker takes, and
/// what it returns reaches `process` with the same frame.
@Suite struct PrepareOnSenderTests {
    final class Prepping: FilterNode, @unchecked Sendable {
        let prepared = Protected<[Int]>([])
        let processed = Protected<[Int]>([])
        let sameThread = Protected<Int>(0)
        let delay: Double
        init(name: String, delay: Double) {
            self.delay = delay
            super.init(name: name)
        }
        override var execution: Execution { .worker }
        override func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
            prepared.withLock { $0.append(frame.sequence) }
            return (frame.sequence, Thread.current.description)
        }
        override func process(_ frame: Frame, prepared token: (any Sendable)?, context: RunContext) throws -> Frame? {
            let (sequence, thread) = try #require(token as? (Int, String))
            #expect(sequence == frame.sequence, "the token belongs to this frame")
            if thread == Thread.current.description { sameThread.withLock { $0 += 1 } }
            processed.withLock { $0.append(frame.sequence) }
            if delay > 0 { context.clock.sleep(for: delay, lane: Lane.current.id) }
            // A new frame, as filters make (passing the source's own buffer on would let the sink read
            // it on this thread while the source releases it last on its own: Swift's reference
            // counting is not instrumented, so ThreadSanitizer would not see that hand-off).
            var out = Frame.make(frame.description)
            out.copyPixels(from: frame)
            out.copyTiming(from: frame)
            return out
        }
    }

    @Test func offlineEveryFrameIsPreparedByTheSenderAndProcessedWithItsToken() throws {
        let source = PatternSource(width: 256, height: 32, frameCount: 40)
        let node = Prepping(name: "prep", delay: 0)
        let sink = CollectingSink(name: "sink")
        source --> node --> sink
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        #expect(node.prepared.withLock { $0 } == Array(0..<40))
        #expect(node.processed.withLock { $0 } == Array(0..<40))
        #expect(node.sameThread.withLock { $0 } == 0, "prepare runs on the source's thread, process on the worker's")
        #expect(sink.entries.count == 40)
    }

    @Test func liveAFrameTheBusyWorkerDropsIsNeverPrepared() throws {
        let clock = ManualClock()
        let source = PatternSource(width: 256, height: 32, frameRate: 30, frameCount: 30)
        let node = Prepping(name: "prep", delay: 0.05)  // slower than the frame period: about every other frame is dropped
        let sink = CollectingSink(name: "sink")
        source --> node --> sink
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .live, clock: clock)).run()
        #expect(report.failure == nil)
        let busy = node.counters.snapshot.droppedBusy
        #expect(busy > 5, "the worker was busy for some frames: \(busy)")
        #expect(node.prepared.withLock { $0 } == node.processed.withLock { $0 }, "only admitted frames are prepared")
        #expect(node.prepared.withLock { $0.count } + busy == 30)
    }
}
