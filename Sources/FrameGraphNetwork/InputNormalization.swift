import NeuralGraph
/// How 8-bit pixels become a model's float input: `value = byte × scale + offset`, in RGB order.
public struct InputNormalization: Sendable, Equatable, CustomStringConvertible {
    public var scale: Float
    public var offset: Float
    /// Per channel (R, G, B) instead, when a model's metadata gives one mean and std per channel;
    /// nil: `scale` and `offset` for every channel.
    public var perChannel: [(scale: Float, offset: Float)]?

    public init(scale: Float, offset: Float) {
        self.scale = scale
        self.offset = offset
    }

    /// (x − mean[c]) / std[c] per channel c; one value of each: the same for all channels.
    public init?(mean: [Float], std: [Float]) {
        guard !mean.isEmpty, mean.count == std.count, std.allSatisfy({ $0 != 0 && $0.isFinite }), mean.allSatisfy(\.isFinite) else { return nil }
        self.init(scale: 1 / std[0], offset: -mean[0] / std[0])
        if mean.count > 1 { perChannel = zip(mean, std).map { (1 / $1, -$0 / $1) } }
    }

    public static func == (a: InputNormalization, b: InputNormalization) -> Bool {
        a.scale == b.scale && a.offset == b.offset
            && (a.perChannel?.map { [$0.scale, $0.offset] } ?? []) == (b.perChannel?.map { [$0.scale, $0.offset] } ?? [])
    }

    /// 0…1 (MediaPipe's selfie segmentation and face landmark models).
    public static let unit = InputNormalization(scale: 1 / 255, offset: 0)
    /// −1…1 (MediaPipe's face detector).
    public static let signed = InputNormalization(scale: 1 / 127.5, offset: -1)

    /// Lab lightness 0…100 → −1…1 (`L/50 − 1`, FrameGraph's colorizer).
    public static let lightness = InputNormalization(scale: 1 / 50, offset: -1)

    /// The normalisation of a quantized image input (uint8 or int8): the frame's bytes are its
    /// integers — a uint8 input takes them as they are, an int8 one shifted by −128 — so the value fed
    /// is `(integer − zero point) × scale`, right by construction whatever the model's metadata says.
    /// Nil for a float input.
    public static func forQuantizedInput(_ tensor: TensorValue) -> InputNormalization? {
        guard let q = tensor.quantization, !q.isPerChannel, tensor.elementType == .uint8 || tensor.elementType == .int8 else { return nil }
        let shift: Float = tensor.elementType == .int8 ? -128 : 0
        return InputNormalization(scale: q.scale, offset: (shift - Float(q.zeroPoint)) * q.scale)
    }

    public var description: String {
        perChannel.map { "x × [" + $0.map { "\($0.scale)" }.joined(separator: ", ") + "] + [" + $0.map { "\($0.offset)" }.joined(separator: ", ") + "]" }
            ?? "x × \(scale) + \(offset)"
    }
}
