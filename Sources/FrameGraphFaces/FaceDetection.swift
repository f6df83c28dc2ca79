import FrameGraph
import FrameGraphNetwork

/// Face detection with MediaPipe's BlazeFace models, set up as MediaPipe's own face detection
/// graph: the frame letterboxed to the model's size (128×128 short range, for faces within about 2 m;
/// 192×192 full range, up to about 5 m) with values in −1…1, SSD anchors (896 or 2,304), box and
/// keypoint decoding, weighted non-maximum suppression (IoU 0.3). Each detection has a box and six
/// keypoints (right eye, left eye, nose tip, mouth centre, right ear, left ear, as seen from the
/// camera's subject), in the frame's normalised coordinates.
public enum FaceDetection {
    /// Which BlazeFace model: its default file and its settings.
    public enum Range: String, Sendable, CaseIterable {
        case short, full

        /// The model's name in models/cache.
        public var defaultModel: String { self == .short ? "face_detection_short_range" : "face_detection_full_range_sparse" }
        public var anchors: SSDAnchorOptions { self == .short ? .blazeFaceShortRange : .blazeFaceFullRange }
        public var decoding: SSDBoxDecoding { self == .short ? .blazeFaceShortRange : .blazeFaceFullRange }
    }

    /// A network node that detects faces (a results stream). `model` nil: the range's own model;
    /// `minScore` nil: the range's (MediaPipe's: 0.5 short range, 0.6 full range).
    public static func node(name: String = "faces", range: Range = .short, model: String? = nil, threads: Int = 1,
                            minScore: Float? = nil, maxFaces: Int = OptionSpecs.maxFaces.defaultValue,
                            overlap: Float = Float(OptionSpecs.overlap.defaultValue), algorithm: NonMaxSuppression.Algorithm = .weighted) -> NetworkNode {
        var decoding = range.decoding
        if let minScore { decoding.minScore = minScore }
        let decoder = DetectionDecoder(anchors: range.anchors, decoding: decoding,
                                       suppression: NonMaxSuppression(algorithm: algorithm, overlap: overlap, maxDetections: maxFaces),
                                       label: "face")
        return NetworkNode(name: name, model: model ?? range.defaultModel, decoder: decoder,
                           options: .init(threads: threads, normalization: .signed, fit: .letterbox))
    }

    /// The options of the `detect-faces` node type.
    public enum OptionSpecs {
        public static let range = NodeOption<Range>.choice("range", default: .short,
                                                           "short (faces within ~2 m, 128×128) or full (up to ~5 m, 192×192)")
        public static let model = NodeOption<String?>.text("model", required: false,
                                                           "model file or name (default: the range's, face_detection_short_range or face_detection_full_range_sparse)")
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let minScore = NodeOption<Double?>.number("min-score", optional: 0...1,
                                                                "faces scoring below this are dropped (default: MediaPipe's, 0.5 short range, 0.6 full)")
        public static let maxFaces = NodeOption.int("max-faces", default: 0, 0...1000, "at most this many faces, best first (0: all)")
        public static let overlap = NodeOption.number("overlap", default: 0.3, 0...1, "boxes overlapping more (IoU) are one face")
        public static let suppression = NodeOption<NonMaxSuppression.Algorithm>.choice(
            "suppression", default: .weighted, "weighted: the mean of overlapping boxes (MediaPipe's); plain: the best one")
        public static let all = [range.spec, model.spec, threads.spec, minScore.spec, maxFaces.spec, overlap.spec, suppression.spec]
    }
}
