/// Settings of TFLite's `TFLite_Detection_PostProcess` (SSD post-processing): box decoding against
/// anchors with four scales, then non-maximum suppression over classes — regular (per class, then the
/// best across classes) or fast (each anchor's best classes, one suppression).
///
/// Inputs: box encodings [1, anchors, ≥ 4] (y, x, h, w centre-size codes), class scores
/// [1, anchors, classes (+ 1 background)], anchors [anchors, 4] (y, x, h, w). Outputs, all float32:
/// boxes [1, K, 4] (ymin, xmin, ymax, xmax), classes [1, K], scores [1, K], count [1], where
/// K = ``maxDetections`` × ``maxClassesPerDetection``.
public struct DetectionPostProcessParameters: Sendable, Equatable {
    public var maxDetections: Int
    /// Fast suppression: classes reported per kept anchor.
    public var maxClassesPerDetection: Int
    /// Regular suppression: detections kept per class.
    public var detectionsPerClass: Int
    public var useRegularNMS: Bool
    public var scoreThreshold: Float
    public var iouThreshold: Float
    /// Classes without the background column (the scores' last dimension is this or one more).
    public var classes: Int
    /// Divisors of the y, x, h and w codes.
    public var yScale: Float, xScale: Float, hScale: Float, wScale: Float

    public init(maxDetections: Int, maxClassesPerDetection: Int, detectionsPerClass: Int, useRegularNMS: Bool,
                scoreThreshold: Float, iouThreshold: Float, classes: Int, yScale: Float, xScale: Float, hScale: Float, wScale: Float) {
        self.maxDetections = maxDetections
        self.maxClassesPerDetection = maxClassesPerDetection
        self.detectionsPerClass = detectionsPerClass
        self.useRegularNMS = useRegularNMS
        self.scoreThreshold = scoreThreshold
        self.iouThreshold = iouThreshold
        self.classes = classes
        self.yScale = yScale
        self.xScale = xScale
        self.hScale = hScale
        self.wScale = wScale
    }

    /// Most detections (and classes) a model may ask for: real detectors use 100 and 90.
    public static let limit = 10_000

    /// Rows of the outputs: max detections × classes per detection.
    public var outputRows: Int { maxDetections * maxClassesPerDetection }

    /// What is impossible about these settings (LiteRT refuses the same at run time), or nil.
    public var problem: String? {
        guard (0...Self.limit).contains(maxDetections) else { return "max_detections \(maxDetections) is not 0…\(Self.limit)" }
        guard (1...Self.limit).contains(maxClassesPerDetection) else {
            return "max_classes_per_detection \(maxClassesPerDetection) is not 1…\(Self.limit)"
        }
        guard (1...Self.limit).contains(detectionsPerClass) else { return "detections_per_class \(detectionsPerClass) is not 1…\(Self.limit)" }
        guard (1...Self.limit).contains(classes) else { return "num_classes \(classes) is not 1…\(Self.limit)" }
        guard iouThreshold > 0, iouThreshold <= 1 else { return "nms_iou_threshold \(iouThreshold) is not in (0, 1]" }
        guard scoreThreshold.isFinite else { return "nms_score_threshold \(scoreThreshold) is not a number" }
        for (name, s) in [("y_scale", yScale), ("x_scale", xScale), ("h_scale", hScale), ("w_scale", wScale)] where !(s.isFinite && s != 0) {
            return "\(name) \(s) is not a non-zero number"
        }
        return nil
    }
}
