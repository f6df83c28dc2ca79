import Foundation
import FrameGraph

/// A source whose frames a program pushes in (Python's `fg.Pipeline(…, source="python")`): packed
/// RGB pictures of one size, copied into the pipeline's pool on the caller's thread. Offline every
/// frame is kept (a push waits while `capacity` frames are still unread, so a fast feeder cannot
/// grow memory); live it holds only the newest, like a camera (older ones are counted as dropped),
/// and the pipeline's drop-while-busy nodes do the rest. Media time: the push's `time` when given,
/// else seconds since the first push; the runner stamps the capture time as it takes each frame.
final class ProgramSource: SourceNode, @unchecked Sendable {
    let width: Int
    let height: Int
    let live: Bool
    let capacity: Int
    private let condition = NSCondition()
    private var waiting: [Frame] = []
    private var ended = false
    private var first: Double?
    private var sequence = 0
    private let pool = BufferPool(maxFreePerSize: 8)
    /// Frames replaced before the pipeline took them (live only).
    private(set) var dropped = 0

    init(name: String, width: Int, height: Int, live: Bool, capacity: Int = 2) {
        self.width = width
        self.height = height
        self.live = live
        self.capacity = max(1, capacity)
        super.init(name: name)
    }

    override var kind: String { "program" }
    override var pacedByMediaTime: Bool { false }

    override func outputDescription() throws -> FrameDescription {
        FrameDescription(format: .rgb24, width: width, height: height)
    }

    /// Copies one picture in (rows of `width` × 3 bytes, `stride` apart). Throws when its size is not
    /// the run's or after ``end()``. Offline it waits for room; live it replaces an unread frame.
    func push(_ pixels: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, time: Double?) throws {
        guard width == self.width, height == self.height else {
            throw RequestError("the frame is \(width)×\(height); this pipeline was opened for \(self.width)×\(self.height) frames (one size per run)")
        }
        guard stride >= width * 3 else { throw RequestError("the frame's rows are \(stride) bytes apart, fewer than its \(width * 3) bytes of pixels") }
        var frame = Frame.make(.rgb24, width: width, height: height, pool: pool)
        let row = width * 3
        for y in 0..<height {
            let out = frame.row(y)
            guard let base = out.baseAddress else { continue }
            base.update(from: pixels + y * stride, count: row)
        }
        let now = ProcessInfo.processInfo.systemUptime
        condition.lock()
        defer { condition.unlock() }
        guard !ended else { throw RequestError("the pipeline's input has ended: no more frames can be pushed") }
        if first == nil { first = time ?? now }
        frame.mediaTime = time ?? (now - (first ?? now))
        frame.sequence = sequence
        sequence += 1
        if live {
            if !waiting.isEmpty {
                dropped += waiting.count
                waiting.removeAll()
            }
        } else {
            while waiting.count >= capacity && !ended { condition.wait() }
            guard !ended else { throw RequestError("the pipeline's input has ended: no more frames can be pushed") }
        }
        waiting.append(frame)
        condition.broadcast()
    }

    /// No more frames: the run ends once those pushed have gone through.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    override func nextFrame(context: RunContext) throws -> Frame? {
        condition.lock()
        defer { condition.unlock() }
        while waiting.isEmpty && !ended && !context.isStopRequested {
            _ = condition.wait(until: Date().addingTimeInterval(0.05))
        }
        guard !waiting.isEmpty else { return nil }
        let frame = waiting.removeFirst()
        condition.broadcast()
        return frame
    }
}
