import Foundation
import FrameGraph

/// A sink that keeps the newest frame that reaches it, for the served picture: taking a frame costs
/// the pipeline a lock and a reference, nothing more (the JPEG is made on the server's side, only
/// while someone watches). It only watches: the run's report leaves it out (``SinkNode/isMonitor``).
///
/// ```swift
/// let tap = PictureTap(name: "serve.picture")
/// annotate.addTarget(tap)
/// ```
public final class PictureTap: SinkNode, @unchecked Sendable {
    private let latest = Protected<(frame: Frame?, generation: Int)>((nil, 0))
    private let onFrame: @Sendable () -> Void

    /// `onFrame` runs on the delivering thread after each frame is kept (keep it short).
    public init(name: String, onFrame: @escaping @Sendable () -> Void = {}) {
        self.onFrame = onFrame
        super.init(name: name)
    }

    override public var kind: String { "serve-picture" }
    override public var isClocked: Bool { false }
    override public var isMonitor: Bool { true }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        latest.withLock {
            $0.frame = frame
            $0.generation += 1
        }
        onFrame()
    }

    /// The newest frame and how many frames have arrived (nil before the first).
    public var newest: (frame: Frame?, generation: Int) { latest.withLock { $0 } }
}
