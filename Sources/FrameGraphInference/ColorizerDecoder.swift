import FrameGraph
import XNNPACKRuntime

/// Decodes a colorizer's output ([1, H, W, 2]: a and b in Lab units) into a float32x2 frame at the
/// model's output size, for ``LabRecombine`` to upsample and join with the frame's own lightness.
public final class ColorizerDecoder: OutputDecoder {
    /// Multiplies the outputs (1 for models that give real a/b units).
    public let scale: Float
    private var width = 0, height = 0
    private let pool = BufferPool(maxFreePerSize: 8)

    public init(scale: Float = 1) {
        self.scale = scale
    }

    public func negotiate(outputs: [(name: String, shape: [Int])], input: FrameDescription, node: String) throws -> FrameDescription {
        guard let ab = outputs.first else {
            throw GraphError.mismatch(node: node, port: "model output", field: "outputs", expected: "an a/b output", got: "none")
        }
        guard ab.shape.count == 4, ab.shape[0] == 1, ab.shape[3] == 2 else {
            throw GraphError.mismatch(node: node, port: "model output '\(ab.name)'", field: "channels",
                                      expected: "two (a and b): shape [1, 2, H, W] in the model's NCHW terms",
                                      got: "shape \(ab.shape.count == 4 ? "[\(ab.shape[0]), \(ab.shape[3]), \(ab.shape[1]), \(ab.shape[2])]" : "\(ab.shape)")")
        }
        height = ab.shape[1]
        width = ab.shape[2]
        return FrameDescription(format: .planarFloat32(channels: 2), width: width, height: height)
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        let out = predictor.output(0).pointer
        var ab = Frame.make(.planarFloat32(channels: 2), width: width, height: height, pool: pool)
        for y in 0..<height {
            let a = ab.floatRow(y, plane: 0), b = ab.floatRow(y, plane: 1)
            let src = out + y * width * 2
            for x in 0..<width {
                a[x] = src[2 * x] * scale
                b[x] = src[2 * x + 1] * scale
            }
        }
        ab.copyTiming(from: frame)
        return ab
    }
}
