import FrameGraph

/// Cuts a rectangle out of each frame without copying pixels (the output shares the input's buffer).
///
/// ```swift
/// source --> Crop(name: "face", region: .rect(x: 100, y: 40, width: 200, height: 200)) --> sink
/// source --> Crop(name: "square", region: .centerSquare) --> sink
/// ```
/// For 4:2:0 formats the origin is rounded down to even coordinates and the size to even numbers, so
/// chroma stays aligned with luma.
public final class Crop: FilterNode, @unchecked Sendable {
    /// Which part of the frame to keep.
    public enum Region: Sendable, Equatable {
        /// A rectangle in pixels from the top-left corner.
        case rect(x: Int, y: Int, width: Int, height: Int)
        /// The largest centred square.
        case centerSquare
    }

    public let region: Region
    private var resolved = (x: 0, y: 0, width: 0, height: 0)

    public init(name: String = "crop", region: Region) {
        self.region = region
        super.init(name: name)
    }

    override public var kind: String { "crop" }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        var r: (x: Int, y: Int, width: Int, height: Int)
        switch region {
        case .rect(let x, let y, let w, let h):
            guard w > 0, h > 0, x >= 0, y >= 0, x + w <= input.width, y + h <= input.height else {
                throw GraphError.mismatch(node: name, port: "in", field: "size",
                                          expected: "a frame containing the rectangle \(w)x\(h) at (\(x),\(y))",
                                          got: "\(input.width)x\(input.height)")
            }
            r = (x, y, w, h)
        case .centerSquare:
            let side = min(input.width, input.height)
            r = ((input.width - side) / 2, (input.height - side) / 2, side, side)
        }
        if input.format.isChromaSubsampled {
            r = (r.x & ~1, r.y & ~1, max(2, r.width & ~1), max(2, r.height & ~1))
        }
        resolved = r
        return FrameDescription(format: input.format, width: r.width, height: r.height)
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        frame.cropped(x: resolved.x, y: resolved.y, width: resolved.width, height: resolved.height)
    }
}

extension Crop {
    /// The options of the `crop` node type.
    public enum OptionSpecs {
        public static let x = NodeOption.int("x", default: 0, 0...100_000, "left edge")
        public static let y = NodeOption.int("y", default: 0, 0...100_000, "top edge")
        public static let width = NodeOption<Int?>.int("width", required: false, 1...100_000, "rectangle width (needed unless square=true)")
        public static let height = NodeOption<Int?>.int("height", required: false, 1...100_000, "rectangle height (needed unless square=true)")
        public static let square = NodeOption.flag("square", default: false, "the largest centred square instead of a rectangle")
        public static let all = [x.spec, y.spec, width.spec, height.spec, square.spec]
    }
}
