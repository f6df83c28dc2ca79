import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import NeuralGraph
import XNNPACKRuntime

/// Face landmarks as MediaPipe's face mesh finds them: 468 points per face, tracked.
///
/// Two stages on one worker (drop-while-busy live, like every network node): BlazeFace finds faces
/// (``FaceDetection``'s settings) and each becomes a rotated square region (``RotatedRegion``); the
/// landmark model (192×192, values 0…1) reads the region, sampled with its rotation in one
/// bilinear pass (``RegionSampler``), and gives 468 points and a face-presence score; the points go
/// back to the frame. Then, as MediaPipe does, the next frame's region comes from these points,
/// and the detector runs again only when fewer faces than ``Options/maxFaces`` are tracked (a face
/// whose presence score falls below ``Options/minPresence`` is dropped), or every
/// ``Options/detectEvery`` frames. Optional one-euro smoothing cuts jitter.
///
/// Emits results: per face a landmark set (label "face", topology `face-mesh-contours` or
/// `face-mesh` when the lines were fetched) and a detection (the points' bounding box, the presence
/// score).
public final class FaceLandmarksNode: FilterNode, ModelUser, @unchecked Sendable {
    /// Settings with their defaults (MediaPipe's face mesh solution's).
    public struct Options: Sendable {
        public var maxFaces = 1
        /// Detections scoring below this are not tracked.
        public var minDetectionScore: Float = 0.5
        /// A tracked face whose presence score falls below this is dropped (MediaPipe's min_tracking_confidence).
        public var minPresence: Float = 0.5
        /// Also detect every N frames (0: only when fewer than maxFaces are tracked, as MediaPipe).
        public var detectEvery = 0
        /// One-euro smoothing of the points (nil: none, as MediaPipe's face mesh).
        public var smoothing: OneEuroFilter.Settings?
        /// Which lines to draw between the points: the contours, the whole mesh, or none.
        public var lines: Lines = .contours
        public var threads = 1
        public init() {}
    }

    public enum Lines: String, Sendable, CaseIterable {
        case contours, mesh, none
    }

    public let detectorModel: String
    public let landmarkModel: String
    public let options: Options
    /// Where the models (and the face mesh lines) come from: the run's model service.
    public var models = ModelService()
    public var modelReferences: [String] { [detectorModel, landmarkModel] }

    private var detector: Predictor?
    private var landmarker: Predictor?
    private var detectorInput: ModelInput?
    private let detections: DetectionDecoder
    private let sampler = RegionSampler(size: 192, scale: 1 / 255, offset: 0)
    private let commonRGB = CommonDecoderRGB()
    /// Used by ``prepare(_:context:)`` only (the delivering thread).
    private let preparingRGB = CommonDecoderRGB()
    private var landmarkOutput = 0, presenceOutput = 1
    private var topology: LandmarkTopology?
    /// The faces tracked from the previous frame (their next regions), with their smoothing state.
    private var tracked: [(region: RotatedRegion, filter: OneEuroFilter?)] = []
    private var framesSinceDetection = 0
    /// Detector runs and landmark runs so far (for tests and the report).
    public private(set) var detectorRuns = 0
    public private(set) var landmarkRuns = 0

    public init(name: String = "mesh", detectorModel: String = "face_detection_short_range", landmarkModel: String = "face_landmark",
                options: Options = Options()) {
        self.detectorModel = detectorModel
        self.landmarkModel = landmarkModel
        self.options = options
        var decoding = SSDBoxDecoding.blazeFaceShortRange
        decoding.minScore = options.minDetectionScore
        detections = DetectionDecoder(anchors: .blazeFaceShortRange, decoding: decoding,
                                      suppression: NonMaxSuppression(algorithm: .weighted, overlap: 0.3), label: "face")
        super.init(name: name)
    }

    override public var kind: String { "face-landmarks" }
    override public var execution: Execution { .worker }
    override public var outputKind: StreamKind { .results }
    override public var filesRead: [String] {
        (modelReferences + [FaceMeshTopology.fileName]).compactMap(models.locateIfPresent)
    }

    private func load(_ reference: String) throws -> Predictor {
        try models.predictor(for: reference, threads: options.threads, node: name)
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        try require(format: frame.format, in: [.yuv420p, .rgb24])
        let det = try detector ?? load(detectorModel)
        detector = det
        detectorInput = try detections.negotiate(detector: det, input: frame, normalization: .signed, port: "detector", node: name)

        let marks = try landmarker ?? load(landmarkModel)
        landmarker = marks
        let li = marks.inputInfo(0)
        guard li.shape == [1, 192, 192, 3] else {
            throw GraphError.mismatch(node: name, port: "landmark model input '\(li.name)'", field: "shape", expected: "[1, 192, 192, 3]", got: "\(li.shape)")
        }
        let counts = (0..<marks.outputCount).map { marks.outputInfo($0).shape.reduce(1, *) }
        guard let points = counts.firstIndex(of: FaceMeshTopology.points * 3), let presence = counts.firstIndex(of: 1) else {
            let seen = (0..<marks.outputCount).map { "'\(marks.outputInfo($0).name)' \(marks.outputInfo($0).shape)" }.joined(separator: ", ")
            throw GraphError.mismatch(node: name, port: "landmark model outputs", field: "shape",
                                      expected: "468 × 3 landmark values ([1, 1, 1, 1404]) and a face score ([1, 1, 1, 1])", got: seen)
        }
        landmarkOutput = points
        presenceOutput = presence
        topology = loadTopology()
        tracked = []
        framesSinceDetection = 0
        return frame
    }

    /// The lines to draw, from the fetched face mesh lines (nil when absent or not wanted).
    private func loadTopology() -> LandmarkTopology? {
        guard options.lines != .none else { return nil }
        guard let path = models.locateIfPresent(FaceMeshTopology.fileName), let loaded = try? FaceMeshTopology.load(path: path) else { return nil }
        return options.lines == .mesh ? loaded.mesh : loaded.contours
    }

    /// The frame as RGB, made on the delivering thread while the worker still works on the
    /// previous frame (the conversion is then off the worker's critical path).
    override public func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
        try preparingRGB.rgb(of: frame)
    }

    override public func process(_ input: Frame, context: RunContext) throws -> Frame? {
        try process(input, prepared: nil, context: context)
    }

    override public func process(_ input: Frame, prepared: (any Sendable)?, context: RunContext) throws -> Frame? {
        guard let detector, let landmarker, let detectorInput else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        // Both models see RGB as common decoders make it (what MediaPipe's models are fed).
        let frame = try (prepared as? Frame) ?? commonRGB.rgb(of: input)
        let w = frame.width, h = frame.height
        // 1. Detect when fewer faces are tracked than wanted (or on schedule).
        framesSinceDetection += 1
        let due = options.detectEvery > 0 && framesSinceDetection >= options.detectEvery
        if tracked.count < options.maxFaces || due {
            try detectorInput.fill(detector.input(0), from: frame)
            try detector.predict()
            detectorRuns += 1
            framesSinceDetection = 0
            let found = try detections.decode(detector, for: frame)?.results
            let unprojected = found.map { detectorInput.letterbox(frameWidth: w, frameHeight: h).unproject($0) }
            for d in unprojected?.detections ?? [] {
                guard tracked.count < options.maxFaces || due, let region = RotatedRegion(faceDetection: d, width: w, height: h) else { continue }
                // A face already tracked keeps its region (MediaPipe's association, overlap 0.5).
                if tracked.contains(where: { $0.region.overlap(with: region) > 0.5 }) { continue }
                if tracked.count >= options.maxFaces { break }
                tracked.append((region, options.smoothing.map { OneEuroFilter(settings: $0) }))
            }
        }
        // 2. Landmarks in each region; the next regions from them.
        var results = Results(producer: name)
        var next: [(region: RotatedRegion, filter: OneEuroFilter?)] = []
        for var face in tracked {
            guard sampler.sample(face.region, of: frame, into: landmarker.input(0).pointer) else { continue }
            try landmarker.predict()
            landmarkRuns += 1
            let raw = landmarker.output(presenceOutput).pointer[0]
            let presence = 1 / (1 + exp(-max(-100, min(100, raw))))
            guard presence >= options.minPresence else { continue }
            let values = landmarker.output(landmarkOutput).pointer
            var points = (0..<FaceMeshTopology.points).map { i in
                Landmark(x: values[3 * i] / 192, y: values[3 * i + 1] / 192, z: values[3 * i + 2] / 192)
            }
            points = face.region.project(points, width: w, height: h)
            if face.filter != nil { points = face.filter?.filter(points, time: input.mediaTime, width: w, height: h) ?? points }
            var x0 = Float.infinity, y0 = Float.infinity, x1 = -Float.infinity, y1 = -Float.infinity
            for p in points { x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y) }
            results.landmarks.append(LandmarkSet(label: "face", points: points, topology: topology))
            results.detections.append(Detection(box: ResultBox(x: x0, y: y0, width: x1 - x0, height: y1 - y0), score: presence, label: "face", index: 0))
            if let region = RotatedRegion(faceLandmarks: points, width: w, height: h) {
                face.region = region
                next.append(face)
            }
        }
        tracked = next
        var out = input
        out.results = results
        return out
    }
}

extension FaceLandmarksNode {
    /// The options of the `face-landmarks` node type.
    public enum OptionSpecs {
        public static let detector = NodeOption.text("detector", default: "face_detection_short_range", "face detector model (BlazeFace short range)")
        public static let model = NodeOption.text("model", default: "face_landmark", "landmark model (MediaPipe's face_landmark, 468 points)")
        public static let maxFaces = NodeOption.int("max-faces", default: 1, 1...16, "faces tracked at most")
        public static let minScore = NodeOption.number("min-score", default: 0.5, 0...1, "detections scoring below this are not tracked")
        public static let minPresence = NodeOption.number("min-presence", default: 0.5, 0...1, "a tracked face scoring below this is dropped (and looked for again)")
        public static let detectEvery = NodeOption.int("detect-every", default: 0, 0...100_000, "also run the detector every N frames (0: only when a face is missing)")
        public static let smoothing = NodeOption<Bool>.choice("smoothing", [("none", false), ("one-euro", true)], default: "none", "landmark smoothing over time")
        public static let minCutoff = NodeOption.number("min-cutoff", default: 0.05, 0.0001...100, "one-euro: cutoff frequency at rest, Hz (lower: steadier)")
        public static let beta = NodeOption.number("beta", default: 80, 0...10_000, "one-euro: how fast the cutoff rises with speed (higher: less lag)")
        public static let lines = NodeOption<Lines>.choice("lines", default: .contours, "lines drawn between points: contours, mesh, none")
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let all = [detector.spec, model.spec, maxFaces.spec, minScore.spec, minPresence.spec, detectEvery.spec, smoothing.spec,
                                 minCutoff.spec, beta.spec, lines.spec, threads.spec]
    }
}
