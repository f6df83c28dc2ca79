import FFmpegSupport
import FrameGraph

/// Turns frames into one-channel gray8 (the luma of the input), e.g. to make a mask or to drop colour.
///
/// ```swift
/// source --> Grayscale(name: "gray") --> sink
/// ```
public final class Grayscale: FilterNode, @unchecked Sendable {
    private let scaler = Scaler(method: .bilinear)

    override public init(name: String = "grayscale") {
        super.init(name: name)
    }

    override public var kind: String { "grayscale" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        try requireEightBit(input)
        return FrameDescription(format: .gray8, width: input.width, height: input.height)
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        var out: Frame
        switch frame.format {
        case .gray8:
            return frame
        case .yuv420p, .nv12:
            // Luma is already there: share it without copying.
            var luma = PlaneLayouts(count: 1)
            luma[0] = frame.planes[0]
            out = Frame(format: .gray8, width: frame.width, height: frame.height, planes: luma, buffer: frame.buffer)
        default:
            out = Frame.make(.gray8, width: frame.width, height: frame.height)
            try scaler.scale(frame, into: out)
        }
        out.copyTiming(from: frame)
        return out
    }
}
