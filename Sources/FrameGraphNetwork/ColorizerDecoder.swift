import FrameGraph
import XNNPACKRuntime

/// Decodes a colorizer's output ([1, H, W, 2]: a and b in Lab units) into a float32x2 frame at the
/// model's output size, for ``LabRecombine`` to upsample and join with the frame's own lightness.
///
/// Temporal smoothing (video): each new a/b is blended with the previous result,
/// `ab = w · ab_previous + (1 − w) · ab_new`, so colours do not flicker on a still scene. The history
/// resets on the first frame and on a scene cut: when the mean absolute change of the model's input
/// lightness since the previous prediction exceeds ``sceneCut`` (in L units, 0…100). The rule and
/// its defaults (w 0.6, cut 6) are the ones `tools/colorizer/metrics.py` measures on held-out clips.
///
/// Vividness (``vividness``, 0…1): the a/b are multiplied by 2 × vividness after smoothing, so 0.5
/// gives the model's own colour, lower values mute it towards grey and higher ones strengthen it. In
/// rooms the model never saw, muted colour beats a confident wrong hue (see the model card's places
/// figures, measured by `tools/colorizer/metrics.py --places`).
///
/// ```swift
/// let net = NetworkNode(name: "colorizer", model: "colorizer", decoder: ColorizerDecoder(smoothing: 0.6, sceneCut: 6, vividness: 0.4),
///                       options: .init(normalization: .lightness, input: .lightness))
/// ```
public final class ColorizerDecoder: OutputDecoder {
    /// Multiplies the outputs (1 for models that give real a/b units).
    public let scale: Float
    /// The chroma strength, 0…1: the a/b are multiplied by 2 × vividness (0.5: the model's own colour).
    public let vividness: Float
    /// Weight of the previous a/b (0: no smoothing).
    public let smoothing: Float
    /// Mean |ΔL| of the model input, in L units, above which the history resets.
    public let sceneCut: Float
    /// The input normalisation's scale (input = L × inputScale + offset), to read ΔL in L units.
    public let inputScale: Float
    private var width = 0, height = 0
    private let pool = BufferPool(maxFreePerSize: 8)
    /// The previous prediction's input and smoothed a/b (interleaved, as the model writes it).
    private var previousInput: [Float] = []
    private var history: [Float] = []

    public init(scale: Float = 1, smoothing: Float = Float(ColorizerDecoder.OptionSpecs.smoothing.defaultValue),
                sceneCut: Float = Float(ColorizerDecoder.OptionSpecs.sceneCut.defaultValue),
                vividness: Float = Float(ColorizerDecoder.OptionSpecs.vividness.defaultValue),
                inputScale: Float = InputNormalization.lightness.scale) {
        self.scale = scale
        self.vividness = min(max(vividness, 0), 1)
        self.smoothing = min(max(smoothing, 0), 0.95)
        self.sceneCut = max(sceneCut, 0)
        self.inputScale = inputScale
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
        previousInput = []
        history = []
        return FrameDescription(format: .planarFloat32(channels: 2), width: width, height: height)
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        var ab = Frame.make(.planarFloat32(channels: 2), width: width, height: height, pool: pool)
        if smoothing > 0 {
            smooth(predictor)
            history.withUnsafeBufferPointer { p in
                if let base = p.baseAddress { write(base, into: ab) }
            }
        } else {
            write(predictor.output(0).pointer, into: ab)
        }
        ab.copyTiming(from: frame)
        return ab
    }

    /// Interleaved a/b (as the model writes it) → the two planes of `ab`.
    private func write(_ src: UnsafePointer<Float>, into ab: Frame) {
        let scale = self.scale * 2 * vividness
        for y in 0..<height {
            let a = ab.floatRow(y, plane: 0), b = ab.floatRow(y, plane: 1)
            let row = src + y * width * 2
            for x in 0..<width {
                a[x] = row[2 * x] * scale
                b[x] = row[2 * x + 1] * scale
            }
        }
    }

    /// Blends this prediction into ``history`` (or restarts it on the first frame and on a scene cut).
    private func smooth(_ predictor: Predictor) {
        let input = predictor.input(0), output = predictor.output(0)
        var cut = previousInput.count != input.count || history.count != output.count
        if !cut {
            var total: Float = 0
            for i in 0..<input.count { total += abs(input.pointer[i] - previousInput[i]) }
            let meanChange = total / Float(max(1, input.count)) / max(abs(inputScale), .leastNormalMagnitude)
            cut = meanChange > sceneCut
        }
        previousInput = Array(UnsafeBufferPointer(start: input.pointer, count: input.count))
        if cut {
            history = Array(UnsafeBufferPointer(start: output.pointer, count: output.count))
            return
        }
        let w = smoothing
        for i in 0..<output.count { history[i] = w * history[i] + (1 - w) * output.pointer[i] }
    }
}

extension ColorizerDecoder {
    /// The temporal options of the `colorize` node type.
    public enum OptionSpecs {
        public static let smoothing = NodeOption.number("smoothing", default: 0.6, 0...0.95,
                                                        "weight of the previous a/b (0: off); resets on scene cuts")
        public static let sceneCut = NodeOption.number("scene-cut", default: 6, 0...100,
                                                       "mean |ΔL| of the model input (L units) above which the smoothing history resets")
        public static let vividness = NodeOption.number("vividness", default: 0.5, 0...1,
                                                        "chroma strength: a/b × 2·vividness (0: grey, 0.5: the model's own colour, 1: doubled)")
    }
}
