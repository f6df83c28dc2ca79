import FFmpegSupport
import Foundation
import FrameGraph

/// Hands a program every output frame: a callback on the sink's thread. Like the video sinks it
/// takes one frame per output-clock tick live, and every frame offline. The C library (and Python
/// through it) reads a run's frames this way.
///
/// With a `conversion` the frame is packed RGB (`rgb24`, by an ``RGBConverter``: `.exact` gives
/// the pixels a PNG of the frame holds, `.fast` those of `ffmpeg -pix_fmt rgb24`); a frame that is
/// `rgb24` already is handed on as it is (zero copy: the callback gets the pooled buffer and must not
/// write to it). Without one (nil) frames are handed on in their own format, for a program that
/// converts only the frames it looks at, or reads only their timing and results.
///
/// ```swift
/// marks --> FrameTap(name: "tap") { frame in print(frame.sequence, frame.width, frame.height) }
/// ```
public final class FrameTap: SinkNode, @unchecked Sendable {
    private let handler: @Sendable (Frame) -> Void
    private let onFinish: @Sendable () -> Void
    private let converter: RGBConverter?
    /// How frames are converted to rgb24 (nil: handed on in their own format).
    public var conversion: RGBConversion? { converter?.conversion }
    /// Whether the input must be an 8-bit format (a program will convert it to RGB later).
    private let eightBit: Bool

    /// A tap that calls `handler` with each output frame (rgb24 when `conversion` is given) on the
    /// delivering thread; a slow handler holds the sink (offline: the pipeline waits; live: ticks are
    /// skipped and counted). `onFinish` runs once when the run ends. `requireEightBit`: refuse,
    /// before the first frame, an input that RGB conversion could not read (implied by a conversion).
    public init(name: String = "frame-tap", conversion: RGBConversion? = .exact, requireEightBit: Bool = false,
                handler: @escaping @Sendable (Frame) -> Void, onFinish: @escaping @Sendable () -> Void = {}) {
        converter = conversion.map(RGBConverter.init)
        eightBit = requireEightBit || conversion != nil
        self.handler = handler
        self.onFinish = onFinish
        super.init(name: name)
    }

    override public var kind: String { "frame-tap" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        if eightBit, let input = inputs.first { try requireEightBit(input, hint: "add a 'convert' node") }
        return nil
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard let converter else { return handler(frame) }
        handler(try converter.rgb(frame))
    }

    override public func finish(context: RunContext) throws {
        onFinish()
    }
}
