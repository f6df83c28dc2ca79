import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import NeuralGraph
import XNNPACKRuntime

/// Body pose as MediaPipe's pose solution finds it: 33 landmarks with depth and visibility for
/// one person, tracked from frame to frame and smoothed.
///
/// Two stages on one worker (drop-while-busy live, like every network node): pose detection
/// (``SSDAnchorOptions/pose``, weighted suppression, the best one) runs only while no body is
/// tracked; its hips' centre and size point make a rotated square
/// (``RotatedRegion/init(poseDetection:width:height:)``). The landmark model (`pose_landmark_full`,
/// 256×256, values 0…1) reads the region and gives 39 points (the 33 landmarks, then the two
/// alignment points of the next region), their visibility and presence, a pose-presence score
/// and heatmaps that refine each point (MediaPipe's 7×7 weighted mean). A pose whose presence falls
/// below ``Options/minPresence`` is dropped and looked for again. The alignment points go through
/// MediaPipe's one-euro filter (``LandmarkSmoothing``) before the next region is made from them;
/// with ``Options/smoothing`` (the solution's default) the landmarks go through theirs too.
///
/// Emits results: a landmark set (label "pose", topology ``PoseTopology/pose``, 33 points with
/// visibility; with ``Options/worldLandmarks`` also the 33 world landmarks in metres, smoothed as
/// MediaPipe smooths them) and a detection (the points' bounding box, the presence score). With
/// ``Options/output`` `.mask` (node type `pose-segment`) it emits the person mask instead, a gray8
/// frame of the frame's size (``PoseSegmentationMask``), carrying the same results.
///
/// ```swift
/// let pose = PoseLandmarksNode(name: "pose")
/// file --> pose
/// pose.onResults { print($0.results.landmarks.first?.points[0] as Any) }   // the nose
/// ```
public final class PoseLandmarksNode: FilterNode, ModelUser, @unchecked Sendable {
    /// Settings with their defaults (MediaPipe's pose solution's).
    public struct Options: Sendable {
        /// Detections scoring below this are not tracked (min_detection_confidence).
        public var minDetectionScore: Float = 0.5
        /// A tracked pose whose presence is not above this is dropped (min_tracking_confidence).
        public var minPresence: Float = 0.5
        /// MediaPipe's landmark smoothing (smooth_landmarks, on by default).
        public var smoothing = true
        /// Adds the world landmarks (metres) to each pose's landmark set (MediaPipe's
        /// `pose_world_landmarks`). Off by default: they make each results line about 2 KB longer.
        public var worldLandmarks = false
        /// What the node emits: the results, or the person mask carrying them.
        public var output = Output.landmarks
        /// MediaPipe's mask smoothing (smooth_segmentation: the previous mask's weight where the
        /// new one is unsure, 0.7; 0 turns it off).
        public var maskSmoothing: Float = 0.7
        public var threads = 1
        /// The landmark model's arithmetic (bf16, the default: its dense convolutions with bfloat16
        /// products, AVX-512 BF16, float32 on a CPU without; see ``NetworkPrecision``); the detector
        /// runs float32.
        public var landmarkPrecision = OptionSpecs.landmarkPrecision.defaultValue
        public init() {}
    }

    /// What a ``PoseLandmarksNode`` emits.
    public enum Output: String, Sendable, CaseIterable {
        /// Results (landmarks, a detection).
        case landmarks
        /// The person mask (gray8, the frame's size) with the results attached.
        case mask
    }

    /// Points the landmark model gives: the 33 landmarks and the 2 alignment points, then 4 unused.
    public static let modelPoints = 39
    /// Side of the landmark model's square input.
    public static let inputSide = 256

    public let detectorModel: String
    public let landmarkModel: String
    public let options: Options
    /// Where the models come from: the run's model service.
    public var models = ModelService()
    public var modelReferences: [String] { [detectorModel, landmarkModel] }

    private var detector: Predictor?
    private var landmarker: Predictor?
    private var detectorInput: ModelInput?
    private let detections: DetectionDecoder
    private let sampler = RegionSampler(size: PoseLandmarksNode.inputSide, scale: 1 / 255, offset: 0)
    private let commonRGB = CommonDecoderRGB()
    /// Used by ``prepare(_:context:)`` only (the delivering thread).
    private let preparingRGB = CommonDecoderRGB()
    private var outputs = (landmarks: 0, presence: 1, heatmap: 3, world: 4 as Int?, segmentation: 2 as Int?)
    private var segmentationSide = 256
    private let segmentation: PoseSegmentationMask
    private var heatmapSide = 64
    /// The region for the next frame, from this frame's alignment points (nil: detect).
    private var tracked: RotatedRegion?
    private let pointFilter = LandmarkSmoothing(settings: .pose)
    private let alignmentFilter = LandmarkSmoothing(settings: .poseAlignment)
    private let worldFilter = LandmarkSmoothing(settings: .poseWorld)
    /// Detector runs and landmark runs so far (for tests and the report).
    public private(set) var detectorRuns = 0
    public private(set) var landmarkRuns = 0

    public init(name: String = "pose", detectorModel: String = "pose_detection", landmarkModel: String = "pose_landmark_full", options: Options = Options()) {
        self.detectorModel = detectorModel
        self.landmarkModel = landmarkModel
        self.options = options
        var decoding = SSDBoxDecoding.pose
        decoding.minScore = options.minDetectionScore
        detections = DetectionDecoder(anchors: .pose, decoding: decoding,
                                      suppression: NonMaxSuppression(algorithm: .weighted, overlap: 0.3, maxDetections: 1), label: "person")
        segmentation = PoseSegmentationMask(combineWithPrevious: min(max(options.maskSmoothing, 0), 0.95))
        super.init(name: name)
    }

    override public var kind: String { options.output == .mask ? "pose-segment" : "pose-landmarks" }
    override public var execution: Execution { .worker }
    override public var outputKind: StreamKind { options.output == .mask ? .frames : .results }
    override public var framesCarryResults: Bool { options.output == .mask }
    override public var filesRead: [String] { modelReferences.compactMap(models.locateIfPresent) }

    private func load(_ reference: String) throws -> Predictor {
        try models.predictor(for: reference, threads: options.threads, node: name)
    }

    /// The landmark model, without its segmentation head unless the mask is wanted (a 256×256
    /// decoder: about a third of the model's time).
    private func loadLandmarker() throws -> Predictor {
        let precision = options.landmarkPrecision.predictor
        guard options.output != .mask else { return try models.predictor(for: landmarkModel, threads: options.threads, precision: precision, node: name) }
        return try models.predictor(for: landmarkModel, threads: options.threads, precision: precision, node: name,
                                    outputs: { !Self.isSegmentationShape($0.shape) })
    }

    /// [1, N, N, 1] with N > 1: the segmentation mask's shape.
    static func isSegmentationShape(_ s: [Int]) -> Bool { s.count == 4 && s[0] == 1 && s[3] == 1 && s[1] == s[2] && s[1] > 1 }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        try require(format: frame.format, in: [.yuv420p, .rgb24])
        let det = try detector ?? load(detectorModel)
        detector = det
        detectorInput = try detections.negotiate(detector: det, input: frame, normalization: .signed, port: "pose detector", node: name)

        let marks = try landmarker ?? loadLandmarker()
        landmarker = marks
        let found = try Self.landmarkOutputs(of: marks, node: name)
        outputs = (found.landmarks, found.presence, found.heatmap, found.world, found.segmentation)
        heatmapSide = found.heatmapSide
        if options.worldLandmarks, found.world == nil {
            throw GraphError.mismatch(node: name, port: "pose landmark model outputs", field: "shape",
                                      expected: "world landmarks ([1, 117]) for world-landmarks=on", got: Self.outputList(marks))
        }
        if options.output == .mask {
            guard let index = found.segmentation else {
                throw GraphError.mismatch(node: name, port: "pose landmark model outputs", field: "shape",
                                          expected: "a segmentation mask ([1, 256, 256, 1]) for pose-segment", got: Self.outputList(marks))
            }
            segmentationSide = marks.outputInfo(index).shape[1]
        }
        lose()
        return options.output == .mask ? FrameDescription(format: .gray8, width: frame.width, height: frame.height) : frame
    }

    private static func outputList(_ marks: Predictor) -> String {
        let seen = (0..<marks.outputCount).map { "'\(marks.outputInfo($0).name)' \(marks.outputInfo($0).shape)" }.joined(separator: ", ")
        return seen.isEmpty ? "none" : seen
    }

    /// Which outputs of a pose landmark model hold the 39 × 5 point values, the presence and the
    /// heatmaps (and, when it has them, the world landmarks and the segmentation mask); the model is
    /// refused, naming what it has, unless its input is [1, 256, 256, 3] and it has the first three.
    static func landmarkOutputs(of marks: Predictor, node: String)
        throws -> (landmarks: Int, presence: Int, heatmap: Int, heatmapSide: Int, world: Int?, segmentation: Int?) {
        let li = marks.inputInfo(0)
        let side = PoseLandmarksNode.inputSide
        guard li.shape == [1, side, side, 3] else {
            throw GraphError.mismatch(node: node, port: "pose landmark model input '\(li.name)'", field: "shape", expected: "[1, \(side), \(side), 3]", got: "\(li.shape)")
        }
        let shapes = (0..<marks.outputCount).map { marks.outputInfo($0).shape }
        let counts = shapes.map { $0.reduce(1, *) }
        let heatmap = shapes.firstIndex { $0.count == 4 && $0[0] == 1 && $0[3] == modelPoints && $0[1] == $0[2] && $0[1] > 0 }
        guard let points = counts.firstIndex(of: modelPoints * 5), let presence = counts.firstIndex(of: 1), let heatmap else {
            throw GraphError.mismatch(node: node, port: "pose landmark model outputs", field: "shape",
                                      expected: "39 × 5 landmark values ([1, 195]), a presence score ([1, 1]) and heatmaps ([1, N, N, 39])",
                                      got: outputList(marks))
        }
        let world = counts.firstIndex(of: modelPoints * 3)
        let segmentation = shapes.firstIndex(where: isSegmentationShape)
        return (points, presence, heatmap, shapes[heatmap][1], world, segmentation)
    }

    /// The frame as RGB, made on the delivering thread while the worker still works on the previous frame.
    override public func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
        try preparingRGB.rgb(of: frame)
    }

    override public func process(_ input: Frame, context: RunContext) throws -> Frame? {
        try process(input, prepared: nil, context: context)
    }

    override public func process(_ input: Frame, prepared: (any Sendable)?, context: RunContext) throws -> Frame? {
        guard let detector, let landmarker, let detectorInput else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        let frame = try (prepared as? Frame) ?? commonRGB.rgb(of: input)
        let w = frame.width, h = frame.height
        var out = input
        out.results = Results(producer: name)
        // 1. A region: the tracked one, else from the best detection.
        var region = tracked
        tracked = nil
        if region == nil {
            try detectorInput.fill(detector.input(0), from: frame)
            try detector.predict()
            detectorRuns += 1
            let found = try detections.decode(detector, for: frame)?.results
            let people = found.map { detectorInput.letterbox(frameWidth: w, frameHeight: h).unproject($0) }?.detections ?? []
            region = people.first.flatMap { RotatedRegion(poseDetection: $0, width: w, height: h) }
        }
        guard let region, sampler.sample(region, of: frame, into: landmarker.input(0).pointer) else {
            lose()
            return emit(out, region: nil)
        }
        // 2. Landmarks in it.
        try landmarker.predict()
        landmarkRuns += 1
        let presence = landmarker.output(outputs.presence).pointer[0]
        guard presence > options.minPresence else {
            lose()
            return emit(out, region: nil)
        }
        var all = Self.decode(UnsafePointer(landmarker.output(outputs.landmarks).pointer))
        Self.refine(&all, heatmap: UnsafePointer(landmarker.output(outputs.heatmap).pointer), side: heatmapSide)
        all = region.project(all, width: w, height: h)
        var points = Array(all[0..<PoseTopology.points]), alignment = Array(all[PoseTopology.points..<(PoseTopology.points + 2)])
        // MediaPipe measures speed against the unsmoothed alignment square's side, and smooths the
        // alignment points (the next region) whether or not the landmarks are smoothed.
        let size = RotatedRegion(poseAlignment: alignment, width: w, height: h)?.side ?? 0
        if options.smoothing { points = pointFilter.filter(points, time: input.mediaTime, width: w, height: h, objectSize: size) }
        alignment = alignmentFilter.filter(alignment, time: input.mediaTime, width: w, height: h, objectSize: size)
        tracked = RotatedRegion(poseAlignment: alignment, width: w, height: h)
        var world: [Landmark]?
        if options.worldLandmarks, let index = outputs.world {
            world = worldLandmarks(UnsafePointer(landmarker.output(index).pointer), visibility: points, region: region, time: input.mediaTime)
        }
        var results = Results(producer: name)
        results.landmarks.append(LandmarkSet(label: "pose", points: points, topology: PoseTopology.pose, world: world))
        results.detections.append(Detection(box: HandLandmarksNode.bounds(of: points), score: presence, label: "pose", index: 0))
        out.results = results
        return emit(out, region: region)
    }

    /// The frame to emit: `out` (the results on the input frame), or for ``Output/mask`` the person
    /// mask (of the pose in `region`, none when nil) carrying them.
    private func emit(_ out: Frame, region: RotatedRegion?) -> Frame {
        guard options.output == .mask, let landmarker else { return out }
        var logits: UnsafePointer<Float>?
        if region != nil, let index = outputs.segmentation { logits = UnsafePointer(landmarker.output(index).pointer) }
        var mask = segmentation.mask(logits: logits, side: segmentationSide, area: region, width: out.width, height: out.height)
        mask.copyTiming(from: out)
        mask.results = out.results
        return mask
    }

    /// The 33 world landmarks (metres) from the model's 39 × 3 values: turned as the region is,
    /// with the image landmarks' visibility, smoothed as MediaPipe smooths them (visibility
    /// low-passed, a one-euro filter without size scaling) when smoothing is on.
    private func worldLandmarks(_ values: UnsafePointer<Float>, visibility points: [Landmark], region: RotatedRegion, time: Double) -> [Landmark] {
        let raw = (0..<PoseTopology.points).map { i in
            Landmark(x: values[3 * i], y: values[3 * i + 1], z: values[3 * i + 2], visibility: points[i].visibility)
        }
        let turned = region.projectWorld(raw)
        return options.smoothing ? worldFilter.filterMetric(turned, time: time) : turned
    }

    /// The pose is lost: the next frame detects and the smoothing starts afresh.
    private func lose() {
        tracked = nil
        pointFilter.reset()
        alignmentFilter.reset()
        worldFilter.reset()
        segmentation.reset()
    }

    /// The 39 points in the region's normalised coordinates (x, y, z divided by the input's side;
    /// visibility through a sigmoid).
    static func decode(_ values: UnsafePointer<Float>) -> [Landmark] {
        let side = Float(inputSide)
        return (0..<modelPoints).map { i in
            let v = values + 5 * i
            return Landmark(x: v[0] / side, y: v[1] / side, z: v[2] / side, visibility: 1 / (1 + exp(-max(-100, min(100, v[3])))))
        }
    }

    /// MediaPipe's refinement from heatmaps (kernel 7, confidence 0.5): each point inside its
    /// `side`×`side` heatmap (HWC, 39 channels, raw) moves to the mean position of the 7×7 cells
    /// around it weighted by their sigmoid, when the highest of them is at least 0.5.
    static func refine(_ points: inout [Landmark], heatmap: UnsafePointer<Float>, side: Int, kernel: Int = 7, minConfidence: Float = 0.5) {
        let channels = points.count, s = Float(side)
        for k in points.indices {
            let fx = points[k].x * s, fy = points[k].y * s
            guard fx.isFinite, fy.isFinite, fx > -1, fy > -1, fx < s, fy < s else { continue }
            let col = Int(fx), row = Int(fy)  // toward zero, as C++ converts
            guard col >= 0, col < side, row >= 0, row < side else { continue }
            let half = (kernel - 1) / 2
            var sum: Float = 0, wx: Float = 0, wy: Float = 0, best: Float = 0
            for r in max(0, row - half)..<min(side, row + half + 1) {
                for c in max(0, col - half)..<min(side, col + half + 1) {
                    let confidence = 1 / (1 + exp(-heatmap[(r * side + c) * channels + k]))
                    sum += confidence
                    best = max(best, confidence)
                    wx += Float(c) * confidence
                    wy += Float(r) * confidence
                }
            }
            if best >= minConfidence && sum > 0 {
                points[k].x = wx / s / sum
                points[k].y = wy / s / sum
            }
        }
    }
}

extension PoseLandmarksNode {
    /// The options of the `pose-landmarks` node type.
    public enum OptionSpecs {
        public static let detector = NodeOption.text("detector", default: "pose_detection", "pose detector model (MediaPipe's pose_detection)")
        public static let model = NodeOption.text("model", default: "pose_landmark_full", "pose landmark model (MediaPipe's pose_landmark_full, model complexity 1)")
        public static let minDetection = NodeOption.number("min-detection-confidence", default: 0.5, 0...1, "detections scoring below this are not tracked")
        public static let minTracking = NodeOption.number("min-tracking-confidence", default: 0.5, 0...1,
                                                          "a tracked pose whose presence falls below this is dropped (and looked for again)")
        public static let smoothing = NodeOption<Bool>.choice("smoothing", [("one-euro", true), ("none", false)], default: "one-euro",
                                                              "MediaPipe's landmark smoothing (one-euro, the solution's default) or none")
        public static let world = NodeOption<Bool>.choice("world-landmarks", [("off", false), ("on", true)], default: "off",
                                                          "add the 33 world landmarks (metres, hip-centred) to each pose's set (MediaPipe's pose_world_landmarks)")
        public static let maskSmoothing = NodeOption.number("mask-smoothing", default: 0.7, 0...0.95,
                                                            "pose-segment: the previous mask's weight where the new one is unsure (MediaPipe's smooth_segmentation: 0.7; 0: off)")
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let landmarkPrecision = NodeOption<NetworkPrecision>.choice(
            "landmark-precision", [("fp32", .float32), ("bf16", .bfloat16)], default: "bf16",
            "the landmark model's arithmetic: bf16 (its dense convolutions with bfloat16 products, AVX-512 BF16; fp32 on a CPU without), or fp32")
        public static let all = [detector.spec, model.spec, minDetection.spec, minTracking.spec, smoothing.spec, world.spec, threads.spec,
                                 landmarkPrecision.spec]
        /// The `pose-segment` node type's options: the same, and the mask's smoothing.
        public static let segment = [detector.spec, model.spec, minDetection.spec, minTracking.spec, smoothing.spec, world.spec, maskSmoothing.spec, threads.spec,
                                     landmarkPrecision.spec]
    }
}
