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

    public var description: String {
        perChannel.map { "x × [" + $0.map { "\($0.scale)" }.joined(separator: ", ") + "] + [" + $0.map { "\($0.offset)" }.joined(separator: ", ") + "]" }
            ?? "x × \(scale) + \(offset)"
    }
}
