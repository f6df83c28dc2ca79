import CFrameGraphKernels
import FrameGraph
import XNNPACKRuntime

/// Decodes a segmentation model's mask ([1, H, W, 1], person probability 0…1) into a gray8 frame at
/// the model's size (255 = person), optionally smoothed over time: `m = (1 − s) × new + s × previous`.
/// The composite node upsamples it to the frame bilinearly. A mask range (low, high) stretches the
/// probabilities first: `m = clamp((p − low) / (high − low), 0, 1)` (MetalTensor's portrait demo
/// uses 0.1 … 0.9).
public final class SegmentationDecoder: OutputDecoder {
    /// Weight of the previous mask, 0 (none) … 0.95. Default 0.
    public let smoothing: Float
    /// Probabilities at or below `low` become 0, at or above `high` 1. Default 0 … 1.
    public let low: Float, high: Float
    /// Person probabilities picked out of a two-channel output.
    private var previous: [Float] = []
    /// The running, smoothed mask.
    private var smoothed: [Float] = []
    private var width = 0, height = 0
    private let pool = BufferPool(maxFreePerSize: 8)

    public init(smoothing: Float = Float(smoothingOption.defaultValue), low: Float = 0, high: Float = 1) {
        self.smoothing = min(max(smoothing, 0), 0.95)
        self.low = min(max(low, 0), 1)
        self.high = max(min(max(high, 0), 1), self.low + 1e-6)
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
        smoothed = []
        return FrameDescription(format: .gray8, width: width, height: height)
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        let output = predictor.output(0)
        var mask = Frame.make(.gray8, width: width, height: height, pool: pool)
        let count = width * height
        if (output.shape.last ?? 1) == 2 {
            // Two-channel outputs are (background, person) probabilities: take the person.
            if previous.count != count { previous = [Float](repeating: 0, count: count) }
            for i in 0..<count { previous[i] = output.pointer[i * 2 + 1] }
            previous.withUnsafeBufferPointer { p in
                if let base = p.baseAddress { smoothAndWrite(base, into: mask) }
            }
        } else {
            smoothAndWrite(UnsafePointer(output.pointer), into: mask)
        }
        mask.copyTiming(from: frame)
        return mask
    }

    private func smoothAndWrite(_ probabilities: UnsafePointer<Float>, into mask: Frame) {
        let count = width * height
        guard smoothing > 0 else {
            write(probabilities, into: mask)
            return
        }
        let s = smoothing
        if smoothed.count != count {
            smoothed = (0..<count).map { Self.flushed(probabilities[$0]) }
        } else {
            smoothed.withUnsafeMutableBufferPointer { m in
                guard let base = m.baseAddress else { return }
                for i in 0..<count { base[i] = Self.flushed((1 - s) * Self.flushed(probabilities[i]) + s * base[i]) }
            }
        }
        smoothed.withUnsafeBufferPointer { p in
            if let base = p.baseAddress { write(base, into: mask) }
        }
    }

    /// `p`, or 0 where it is below 1e-6, which no mask byte can tell from 0 (255 · 1e-6 rounds to 0,
    /// and a smoothed mask carries it on with ever smaller weights). A sigmoid's output for the
    /// background is often far smaller, down to subnormal floats, and every multiply or add on a
    /// subnormal takes the core a slow assist: the smoothed mask's background decays into them
    /// frame after frame, and the smoothing loop ran at about 9 ns a value (`perf`: a live portrait
    /// run spent 4.3 % of its CPU there). A comparison is not slowed, so it comes first.
    @inline(__always) static func flushed(_ p: Float) -> Float { p < 1e-6 ? 0 : p }

    /// Probabilities 0…1 → bytes 0…255, rounded, clamped, a row at a time by `fg_probability_bytes`
    /// (probabilities below 1e-6 taken as 0 first: ``flushed(_:)``; `mask-low`/`mask-high` stretch
    /// the range).
    private func write(_ p: UnsafePointer<Float>, into mask: Frame) {
        let scale = 255 / (high - low)
        for y in 0..<height {
            guard let row = mask.row(y).baseAddress else { continue }
            fg_probability_bytes(p + y * width, row, Int32(width), low, scale)
        }
    }
}

extension SegmentationDecoder {
    /// The `smoothing` option of the `segment` node type.
    public static let smoothingOption = NodeOption.number("smoothing", default: 0, 0...0.95, "weight of the previous mask, 0 … 0.95")
    /// The `mask-low` and `mask-high` options: the probability range stretched to 0 … 1.
    public static let lowOption = NodeOption.number("mask-low", default: 0, 0...1, "probabilities at or below this become 0 (MetalTensor's portrait demo: 0.1)")
    public static let highOption = NodeOption.number("mask-high", default: 1, 0...1, "probabilities at or above this become 1 (MetalTensor's portrait demo: 0.9)")
}
