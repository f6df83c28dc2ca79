import FFmpegSupport
import FrameGraph

/// Scales frames to a fixed size with libswscale, optionally keeping the aspect ratio with bars
/// (letterbox), and optionally converting the pixel format on the way.
///
/// ```swift
/// source --> Resize(name: "small", width: 256, height: 256, method: .area) --> sink
/// source --> Resize(name: "fit", width: 256, height: 256, letterbox: true) --> sink
/// ```
public final class Resize: FilterNode, @unchecked Sendable {
    public let width: Int
    public let height: Int
    public let method: Scaler.Method
    public let letterbox: Bool
    /// Output pixel format; nil keeps the input's.
    public let format: PixelFormat?
    private let scaler: Scaler
    private var output = FrameDescription(format: .rgb24, width: 1, height: 1)
    /// Where the picture lands inside the output (the whole frame unless letterboxed).
    private var inner = (x: 0, y: 0, width: 0, height: 0)

    public init(name: String = "resize", width: Int, height: Int, method: Scaler.Method = OptionSpecs.method.defaultValue,
                letterbox: Bool = OptionSpecs.letterbox.defaultValue, format: PixelFormat? = nil) {
        self.width = width
        self.height = height
        self.method = method
        self.letterbox = letterbox
        self.format = format
        scaler = Scaler(method: method)
        super.init(name: name)
    }

    override public var kind: String { "resize" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        guard width > 0, height > 0 else {
            throw GraphError.invalidOption(node: name, option: "width", reason: "size must be positive, got \(width)x\(height)")
        }
        try requireEightBit(input)
        let outFormat = format ?? input.format
        if outFormat.isFloat {
            throw GraphError.invalidOption(node: name, option: "format", reason: "resize outputs 8-bit formats; use 'convert' for float")
        }
        output = FrameDescription(format: outFormat, width: width, height: height)
        inner = (0, 0, width, height)
        if letterbox {
            let scale = min(Double(width) / Double(input.width), Double(height) / Double(input.height))
            var w = max(1, Int((Double(input.width) * scale).rounded()))
            var h = max(1, Int((Double(input.height) * scale).rounded()))
            var x = (width - w) / 2, y = (height - h) / 2
            if outFormat.isChromaSubsampled { x &= ~1; y &= ~1; w = max(2, w & ~1); h = max(2, h & ~1) }
            inner = (x, y, w, h)
        }
        return output
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        var out = Frame.make(output)
        if letterbox {
            out.fillBlack()
            try scaler.scale(frame, into: out.cropped(x: inner.x, y: inner.y, width: inner.width, height: inner.height))
        } else {
            try scaler.scale(frame, into: out)
        }
        out.copyTiming(from: frame)
        return out
    }
}

extension Resize {
    /// The options of the `resize` node type.
    public enum OptionSpecs {
        public static let width = NodeOption<Int?>.int("width", required: true, 1...16384, "output width")
        public static let height = NodeOption<Int?>.int("height", required: true, 1...16384, "output height")
        public static let method = NodeOption<Scaler.Method>.choice("method", default: .bilinear, "interpolation")
        public static let letterbox = NodeOption.flag("letterbox", default: false, "keep the aspect ratio, pad with black")
        public static let format = NodeOption<PixelFormat?>.pixelFormat("format", required: false, "output pixel format (default: the input's)")
        public static let all = [width.spec, height.spec, method.spec, letterbox.spec, format.spec]
    }
}
