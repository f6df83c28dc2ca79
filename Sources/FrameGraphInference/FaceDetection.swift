import FrameGraph

/// Face detection with MediaPipe's BlazeFace short-range model, set up as MediaPipe's own face
/// detection graph: the frame letterboxed to 128×128 with values in −1…1, 896 anchors, box and
/// keypoint decoding, weighted non-maximum suppression (IoU 0.3). Each detection has a box and six
/// keypoints (right eye, left eye, nose tip, mouth centre, right ear, left ear, as seen from the
/// camera's subject), in the frame's normalised coordinates.
public enum FaceDetection {
    /// A network node that detects faces (a results stream).
    public static func node(name: String = "faces", model: String = OptionSpecs.model.defaultValue, threads: Int = 1,
                            minScore: Float = Float(OptionSpecs.minScore.defaultValue), maxFaces: Int = OptionSpecs.maxFaces.defaultValue,
                            overlap: Float = Float(OptionSpecs.overlap.defaultValue), algorithm: NonMaxSuppression.Algorithm = .weighted) -> NetworkNode {
        var decoding = SSDBoxDecoding.blazeFaceShortRange
        decoding.minScore = minScore
        let decoder = DetectionDecoder(anchors: .blazeFaceShortRange, decoding: decoding,
                                       suppression: NonMaxSuppression(algorithm: algorithm, overlap: overlap, maxDetections: maxFaces),
                                       label: "face")
        return NetworkNode(name: name, model: model, decoder: decoder,
                           options: .init(threads: threads, normalization: .signed, fit: .letterbox))
    }

    /// The options of the `detect-faces` node type.
    public enum OptionSpecs {
        public static let model = NodeOption.text("model", default: "face_detection_short_range",
                                                  "model file or name (face_detection_short_range → models/cache/face_detection_short_range.tflite)")
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let minScore = NodeOption.number("min-score", default: 0.5, 0...1, "faces scoring below this are dropped")
        public static let maxFaces = NodeOption.int("max-faces", default: 0, 0...1000, "at most this many faces, best first (0: all)")
        public static let overlap = NodeOption.number("overlap", default: 0.3, 0...1, "boxes overlapping more (IoU) are one face")
        public static let suppression = NodeOption.choice("suppression", ["weighted", "plain"], default: "weighted",
                                                          "weighted: the mean of overlapping boxes (MediaPipe's); plain: the best one")
        public static let all = [model.spec, threads.spec, minScore.spec, maxFaces.spec, overlap.spec, suppression.spec]
    }
}
