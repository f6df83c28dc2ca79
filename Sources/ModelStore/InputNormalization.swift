/// How 8-bit pixels become a model's float input: `value = byte × scale + offset`, in RGB order.
public struct InputNormalization: Sendable, Equatable, CustomStringConvertible {
    public var scale: Float
    public var offset: Float

    public init(scale: Float, offset: Float) {
        self.scale = scale
        self.offset = offset
    }

    /// 0…1 (MediaPipe's selfie segmentation and face landmark models).
    public static let unit = InputNormalization(scale: 1 / 255, offset: 0)
    /// −1…1 (MediaPipe's face detector).
    public static let signed = InputNormalization(scale: 1 / 127.5, offset: -1)

    /// Lab lightness 0…100 → −1…1 (`L/50 − 1`, FrameGraph's colorizer).
    public static let lightness = InputNormalization(scale: 1 / 50, offset: -1)

    /// The normalisation MediaPipe uses for one of its models, by file name; nil when unknown.
    public static func mediaPipe(forModelNamed name: String) -> InputNormalization? {
        if name.contains("selfie_segmentation") || name.contains("face_landmark") { return .unit }
        if name.contains("face_detection") { return .signed }
        return nil
    }

    public var description: String { "x × \(scale) + \(offset)" }
}
