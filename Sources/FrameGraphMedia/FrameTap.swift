import FFmpegSupport
import Foundation
import FrameGraph

/// Hands a program every output frame as packed RGB (`rgb24`, converted with libswscale the way the
/// `png` sink converts, so the pixels are those a PNG of the frame holds): a callback on the sink's
/// thread. Like the video sinks it takes one frame per output-clock tick live, and every frame
/// offline. The C library (and Python through it) reads a run's frames this way.
///
/// A frame that is `rgb24` already is handed on as it is (zero copy: the callback gets the pooled
/// buffer and must not write to it); any other 8-bit format is converted into a new pooled frame.
///
/// ```swift
/// marks --> FrameTap(name: "tap") { frame in print(frame.sequence, frame.width, frame.height) }
/// ```
public final class FrameTap: SinkNode, @unchecked Sendable {
    private let handler: @Sendable (Frame) -> Void
    private let onFinish: @Sendable () -> Void
    private let scaler = Scaler(method: .bilinear)
    /// Whether frames are converted to rgb24 (false: handed on in their own format, for a program
    /// that reads only their timing and results).
    public let convert: Bool

    /// A tap that calls `handler` with each output frame (rgb24 when `convert`) on the delivering
    /// thread; a slow handler holds the sink (offline: the pipeline waits; live: ticks are skipped
    /// and counted). `onFinish` runs once when the run ends.
    public init(name: String = "frame-tap", convert: Bool = true, handler: @escaping @Sendable (Frame) -> Void,
                onFinish: @escaping @Sendable () -> Void = {}) {
        self.convert = convert
        self.handler = handler
        self.onFinish = onFinish
        super.init(name: name)
    }

    override public var kind: String { "frame-tap" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        if convert, let input = inputs.first { try requireEightBit(input, hint: "add a 'convert' node") }
        return nil
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        if frame.format == .rgb24 || !convert { return handler(frame) }
        var rgb = Frame.make(.rgb24, width: frame.width, height: frame.height)
        try scaler.scale(frame, into: rgb)
        rgb.copyTiming(from: frame)
        handler(rgb)
    }

    override public func finish(context: RunContext) throws {
        onFinish()
    }
}
