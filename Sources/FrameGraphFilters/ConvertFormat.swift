import FFmpegSupport
import FrameGraph

/// Converts frames to another pixel format: between 8-bit formats with libswscale, and between
/// rgb24/gray8 and planar float (values 0…1, the layout network nodes take).
///
/// ```swift
/// source --> ConvertFormat(name: "rgb", to: .rgb24) --> sink
/// ```
public final class ConvertFormat: FilterNode, @unchecked Sendable {
    public let target: PixelFormat
    private let scaler = Scaler(method: .bilinear)

    public init(name: String = "convert", to target: PixelFormat) {
        self.target = target
        super.init(name: name)
    }

    override public var kind: String { "convert" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        switch (input.format, target) {
        case (.planarFloat32(let c), .planarFloat32(let d)) where c != d:
            throw GraphError.mismatch(node: name, port: "in", field: "channels", expected: "\(d)", got: "\(c)")
        case (.planarFloat32(let c), let t) where t.avPixelFormat != nil:
            guard (c == 3 && t != .gray8) || (c == 1) else {
                throw GraphError.mismatch(node: name, port: "in", field: "channels", expected: "1 or 3", got: "\(c)")
            }
        case (let f, .planarFloat32(let c)) where f.avPixelFormat != nil:
            guard c == 1 || c == 3 else {
                throw GraphError.invalidOption(node: name, option: "to", reason: "float output has 1 (gray) or 3 (RGB) channels, not \(c)")
            }
        default:
            break
        }
        return FrameDescription(format: target, width: input.width, height: input.height)
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        if frame.format == target { return frame }
        var out = Frame.make(target, width: frame.width, height: frame.height)
        switch (frame.format, target) {
        case (_, .planarFloat32(let c)):
            let packed = Frame.make(c == 1 ? .gray8 : .rgb24, width: frame.width, height: frame.height)
            try scaler.scale(frame, into: packed)
            toFloat(packed, out)
        case (.planarFloat32(let c), _):
            let packed = Frame.make(c == 1 ? .gray8 : .rgb24, width: frame.width, height: frame.height)
            fromFloat(frame, packed)
            if packed.format == target { out = packed } else { try scaler.scale(packed, into: out) }
        default:
            try scaler.scale(frame, into: out)
        }
        out.copyTiming(from: frame)
        return out
    }

    /// rgb24 or gray8 → planar float in 0…1.
    private func toFloat(_ packed: Frame, _ out: Frame) {
        let channels = packed.format == .gray8 ? 1 : 3
        for y in 0..<packed.height {
            let src = packed.row(y)
            for c in 0..<channels {
                let dst = out.floatRow(y, plane: c)
                for x in 0..<packed.width { dst[x] = Float(src[x * channels + c]) / 255 }
            }
        }
    }

    /// Planar float in 0…1 → rgb24 or gray8 (clamped, rounded).
    private func fromFloat(_ frame: Frame, _ packed: Frame) {
        let channels = packed.format == .gray8 ? 1 : 3
        for y in 0..<frame.height {
            let dst = packed.row(y)
            for c in 0..<channels {
                let src = frame.floatRow(y, plane: c)
                for x in 0..<frame.width { dst[x * channels + c] = UInt8(max(0, min(255, (src[x] * 255).rounded()))) }
            }
        }
    }
}

extension ConvertFormat {
    /// The options of the `convert` node type.
    public enum OptionSpecs {
        public static let to = NodeOption<PixelFormat?>.pixelFormat("to", required: true, "target pixel format")
        public static let all = [to.spec]
    }
}
