import FrameGraph
import XNNPACKRuntime

/// Decodes a segmentation model's mask ([1, H, W, 1], person probability 0…1) into a gray8 frame at
/// the model's size (255 = person), optionally smoothed over time: `m = (1 − s) × new + s × previous`.
/// The composite node upsamples it to the frame bilinearly.
public final class SegmentationDecoder: OutputDecoder {
    /// Weight of the previous mask, 0 (none) … 0.95. Default 0.
    public let smoothing: Float
    private var previous: [Float] = []
    private var width = 0, height = 0
    private let pool = BufferPool(maxFreePerSize: 8)

    public init(smoothing: Float = 0) {
        self.smoothing = min(max(smoothing, 0), 0.95)
    }

    public func negotiate(outputs: [(name: String, shape: [Int])], input: FrameDescription, node: String) throws -> FrameDescription {
        guard let mask = outputs.first else {
            throw GraphError.mismatch(node: node, port: "model output", field: "outputs", expected: "a mask output", got: "none")
        }
        let s = mask.shape
        guard s.count == 4, s[0] == 1, s[3] == 1 || s[3] == 2 else {
            throw GraphError.mismatch(node: node, port: "model output '\(mask.name)'", field: "shape",
                                      expected: "[1, H, W, 1] (a one-channel mask)", got: "\(s)")
        }
        height = s[1]
        width = s[2]
        previous = []
        return FrameDescription(format: .gray8, width: width, height: height)
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        let output = predictor.output(0)
        let channels = output.shape.last ?? 1
        var mask = Frame.make(.gray8, width: width, height: height, pool: pool)
        let count = width * height
        if smoothing > 0 && previous.count != count { previous = [] }
        let s = smoothing
        let p = output.pointer
        for y in 0..<height {
            let row = mask.row(y)
            for x in 0..<width {
                let i = y * width + x
                // Two-channel outputs are (background, person) probabilities: take the person.
                var v = channels == 2 ? p[i * 2 + 1] : p[i]
                if s > 0 {
                    if previous.isEmpty == false { v = (1 - s) * v + s * previous[i] }
                }
                row[x] = UInt8(max(0, min(255, (v * 255).rounded())))
                if s > 0 {
                    if previous.isEmpty { previous = [Float](repeating: v, count: count) }
                    previous[i] = v
                }
            }
        }
        mask.copyTiming(from: frame)
        return mask
    }
}
