import FFmpegSupport
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
    private let keeps: @Sendable () -> Bool
    private let onFrame: @Sendable () -> Void
    private let displayable = Protected(false)

    /// `keeps` says, for each frame, whether to keep it (someone watches; else the tap lets go of
    /// what it holds); `onFrame` runs on the delivering thread after each kept frame (keep both short).
    public init(name: String, keeps: @escaping @Sendable () -> Bool = { true }, onFrame: @escaping @Sendable () -> Void = {}) {
        self.keeps = keeps
        self.onFrame = onFrame
        super.init(name: name)
    }

    override public var kind: String { "serve-picture" }
    override public var isClocked: Bool { false }
    override public var isMonitor: Bool { true }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        let eightBit = inputs.first.map { $0.format.avPixelFormat != nil } ?? false
        displayable.withLock { $0 = eightBit }
        return nil
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard keeps() else {
            latest.withLock { $0.frame = nil }
            return
        }
        latest.withLock {
            $0.frame = frame
            $0.generation += 1
        }
        onFrame()
    }

    /// Whether what arrives is a picture the server can show (8-bit; known once the run is validated).
    public var showsPictures: Bool { displayable.withLock { $0 } }

    /// The newest frame kept and how many have been kept (nil before the first).
    public var newest: (frame: Frame?, generation: Int) { latest.withLock { $0 } }
}
