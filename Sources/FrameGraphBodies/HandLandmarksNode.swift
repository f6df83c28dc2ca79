import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import NeuralGraph
import XNNPACKRuntime

/// Hand landmarks as MediaPipe's hands solution finds them: 21 points per hand with depth,
/// handedness and a presence score, tracked from frame to frame.
///
/// Two stages on one worker (drop-while-busy live, like every network node): palm detection
/// (``SSDAnchorOptions/palm``, weighted suppression, at most ``Options/maxHands`` palms) runs
/// while fewer hands than ``Options/maxHands`` are tracked, on the ``PalmDetectionSchedule``
/// (every such frame by default, as MediaPipe; ``Options/redetectEvery``, ``Options/detectEvery``);
/// each palm becomes a rotated square (``RotatedRegion/init(palmDetection:width:height:)``);
/// a tracked hand's region from the previous frame replaces a new palm's region that overlaps it
/// (IoU > 0.5, MediaPipe's association). The landmark model (224×224, values 0…1) reads each
/// region, sampled with its rotation in one bilinear pass; a hand whose presence falls below
/// ``Options/minPresence`` is dropped and looked for again, the others give the next frame's
/// regions (``RotatedRegion/init(handLandmarks:width:height:)``). The detector and the tracked
/// hands' landmark models do not depend on each other, so they run side by side
/// (``Options/parallel`` threads, ``SideBySide``), then the new palms' landmark models; the
/// results are the same as one after another.
///
/// Emits results: per hand a landmark set (label "hand", topology ``HandTopology/hand``, its
/// handedness as the set's classification: "Left" or "Right" as MediaPipe labels it, which assumes
/// a mirrored, selfie-view picture) and a detection (the points' bounding box, the presence score).
///
/// ```swift
/// let hands = HandLandmarksNode(name: "hands", options: .init())   // full models, 2 hands
/// camera --> hands
/// hands.onResults { print($0.results.landmarks.compactMap(\.classification?.label)) }
/// ```
public final class HandLandmarksNode: FilterNode, ModelUser, @unchecked Sendable {
    /// Which pair of models: MediaPipe's model complexity 0 (lite) or 1 (full, the solution's default).
    public enum Complexity: String, Sendable, CaseIterable {
        case lite, full
        public var palmModel: String { "palm_detection_\(rawValue)" }
        public var landmarkModel: String { "hand_landmark_\(rawValue)" }
    }

    /// Settings with their defaults (MediaPipe's hands solution's).
    public struct Options: Sendable {
        public var complexity = Complexity.full
        public var maxHands = 2
        /// Palms scoring below this are not tracked (min_detection_confidence).
        public var minDetectionScore: Float = 0.5
        /// A tracked hand whose presence score is not above this is dropped (min_tracking_confidence).
        public var minPresence: Float = 0.5
        /// While at least one but fewer than maxHands hands are tracked, detect every N frames
        /// (1: every frame, as MediaPipe; see ``PalmDetectionSchedule``).
        public var redetectEvery = OptionSpecs.redetectEvery.defaultValue
        /// Also detect every N frames while maxHands are tracked (0: never, as MediaPipe).
        public var detectEvery = OptionSpecs.detectEvery.defaultValue
        /// Smoothing of the points (nil: none, as MediaPipe's hands solution).
        public var smoothing: LandmarkSmoothing.Settings?
        /// Adds each hand's 21 world landmarks (metres, centred on the hand; MediaPipe's
        /// `multi_hand_world_landmarks`, not smoothed, as there) to its landmark set.
        public var worldLandmarks = false
        public var threads = 1
        /// How many of a frame's models run at once, each on its own thread: the palm detector and
        /// the hands' landmark models (1: one after another). Results are the same either way.
        public var parallel = OptionSpecs.parallel.defaultValue
        /// The palm detector's and the landmark model's arithmetic (bf16: their dense convolutions
        /// with bfloat16 products, AVX-512 BF16; int8: in 8-bit integers, AVX-512 VNNI; see
        /// ``NetworkPrecision``). Default: the detector fp32 (in bf16 a palm scoring near
        /// min-detection-confidence may cross it: a hand found or missed for many frames), the
        /// landmark model bf16 (parity with MediaPipe as in fp32: docs/RESULTS.md).
        public var palmPrecision = OptionSpecs.palmPrecision.defaultValue
        public var landmarkPrecision = OptionSpecs.landmarkPrecision.defaultValue
        public init() {}
    }

    public let palmModel: String
    public let landmarkModel: String
    public let options: Options
    /// Where the models come from: the run's model service.
    public var models = ModelService()
    public var modelReferences: [String] { [palmModel, landmarkModel] }

    private var detector: Predictor?
    /// The landmark model, once per lane (``Options/parallel``): each thread of a frame uses its own.
    private var landmarkers: [Predictor] = []
    private var detectorInput: ModelInput?
    private let detections: DetectionDecoder
    private let sampler = RegionSampler(size: 224, scale: 1 / 255, offset: 0)
    private let commonRGB = CommonDecoderRGB()
    /// Used by ``prepare(_:context:)`` only (the delivering thread).
    private let preparingRGB = CommonDecoderRGB()
    private var outputs = (landmarks: 0, presence: 1, handedness: 2, world: 3 as Int?)
    /// The hands tracked from the previous frame (their next regions), with their smoothing state.
    private var tracked: [Hand] = []
    private var schedule: PalmDetectionSchedule
    /// Detector runs and landmark runs so far (for tests and the report).
    public private(set) var detectorRuns = 0
    public private(set) var landmarkRuns = 0

    /// `palmModel` / `landmarkModel` nil: the complexity's own (palm_detection_full, hand_landmark_full).
    public init(name: String = "hands", palmModel: String? = nil, landmarkModel: String? = nil, options: Options = Options()) {
        self.palmModel = palmModel ?? options.complexity.palmModel
        self.landmarkModel = landmarkModel ?? options.complexity.landmarkModel
        self.options = options
        schedule = PalmDetectionSchedule(maxHands: options.maxHands, redetectEvery: options.redetectEvery, detectEvery: options.detectEvery)
        var decoding = SSDBoxDecoding.palm
        decoding.minScore = options.minDetectionScore
        detections = DetectionDecoder(anchors: .palm, decoding: decoding,
                                      suppression: NonMaxSuppression(algorithm: .weighted, overlap: 0.3, maxDetections: options.maxHands), label: "palm")
        super.init(name: name)
    }

    override public var kind: String { "hand-landmarks" }
    override public var execution: Execution { .worker }
    override public var outputKind: StreamKind { .results }
    override public var filesRead: [String] { modelReferences.compactMap(models.locateIfPresent) }

    private func load(_ reference: String, precision: NetworkPrecision) throws -> Predictor {
        try models.predictor(for: reference, threads: options.threads, precision: precision.predictor, node: name)
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        try require(format: frame.format, in: [.yuv420p, .rgb24])
        let det = try detector ?? load(palmModel, precision: options.palmPrecision)
        detector = det
        detectorInput = try detections.negotiate(detector: det, input: frame, normalization: .unit, port: "palm detector", node: name)

        let marks = try landmarkers.first ?? load(landmarkModel, precision: options.landmarkPrecision)
        outputs = try Self.landmarkOutputs(of: marks, node: name)
        if landmarkers.isEmpty {
            landmarkers = [marks]
            // More lanes than hands would stay idle: the detector and the hands need at most maxHands + 1.
            for _ in 1..<max(1, min(options.parallel, options.maxHands)) {
                landmarkers.append(try load(landmarkModel, precision: options.landmarkPrecision))
            }
        }
        if options.worldLandmarks, outputs.world == nil {
            throw GraphError.mismatch(node: name, port: "hand landmark model outputs", field: "shape",
                                      expected: "world landmarks (a second [1, 63] output) for world-landmarks=on",
                                      got: (0..<marks.outputCount).map { "'\(marks.outputInfo($0).name)' \(marks.outputInfo($0).shape)" }.joined(separator: ", "))
        }
        tracked = []
        schedule.reset()
        return frame
    }

    /// Which outputs of a hand landmark model hold the 21 × 3 points, the presence and the
    /// handedness (MediaPipe's order: points, presence, handedness, world points); the model is
    /// refused, naming what it has, unless its input is [1, 224, 224, 3] and it has them.
    static func landmarkOutputs(of marks: Predictor, node: String) throws -> (landmarks: Int, presence: Int, handedness: Int, world: Int?) {
        let li = marks.inputInfo(0)
        guard li.shape == [1, 224, 224, 3] else {
            throw GraphError.mismatch(node: node, port: "hand landmark model input '\(li.name)'", field: "shape", expected: "[1, 224, 224, 3]", got: "\(li.shape)")
        }
        let counts = (0..<marks.outputCount).map { marks.outputInfo($0).shape.reduce(1, *) }
        let singles = counts.indices.filter { counts[$0] == 1 }
        guard let points = counts.firstIndex(of: HandTopology.points * 3), singles.count >= 2 else {
            let seen = (0..<marks.outputCount).map { "'\(marks.outputInfo($0).name)' \(marks.outputInfo($0).shape)" }.joined(separator: ", ")
            throw GraphError.mismatch(node: node, port: "hand landmark model outputs", field: "shape",
                                      expected: "21 × 3 landmark values ([1, 63]), a presence score and a handedness score ([1, 1] each)",
                                      got: seen.isEmpty ? "none" : seen)
        }
        let world = counts.indices.first { $0 != points && counts[$0] == HandTopology.points * 3 }
        return (points, singles[0], singles[1], world)
    }

    /// The frame as RGB, made on the delivering thread while the worker still works on the
    /// previous frame.
    override public func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
        try preparingRGB.rgb(of: frame)
    }

    override public func process(_ input: Frame, context: RunContext) throws -> Frame? {
        try process(input, prepared: nil, context: context)
    }

    override public func process(_ input: Frame, prepared: (any Sendable)?, context: RunContext) throws -> Frame? {
        guard let detector, let detectorInput, !landmarkers.isEmpty else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        let frame = try (prepared as? Frame) ?? commonRGB.rgb(of: input)
        let w = frame.width, h = frame.height
        let lanes = landmarkers.count, marks = landmarkers
        // A tracked hand wins over an earlier one it overlaps and over every palm it overlaps
        // (MediaPipe's association, which adds the tracked hands after the palms).
        var kept: [Hand] = []
        for hand in tracked { Self.associate(hand, into: &kept) }

        // 1. The palm detector, when fewer hands are tracked than wanted (on the schedule), side
        //    by side with the tracked hands' landmark models.
        let detect = schedule.detectorDue(tracked: tracked.count) ? 1 : 0
        let palms = SideBySide.Slot<[Detection]>()
        let keptReadings = kept.map { _ in SideBySide.Slot<HandReading>() }
        try SideBySide.run(jobs: detect + kept.count, lanes: lanes) { job, lane in
            if job < detect {
                try detectorInput.fill(detector.input(0), from: frame)
                try detector.predict()
                let found = try self.detections.decode(detector, for: frame)?.results
                palms.value = found.map { detectorInput.letterbox(frameWidth: w, frameHeight: h).unproject($0) }?.detections ?? []
            } else {
                keptReadings[job - detect].value = try self.read(kept[job - detect].region, of: frame, with: marks[lane])
            }
        }
        detectorRuns += detect
        var found: [Hand] = []
        for palm in palms.value ?? [] {
            guard let region = RotatedRegion(palmDetection: palm, width: w, height: h) else { continue }
            Self.associate((region, options.smoothing.map { LandmarkSmoothing(settings: $0) }), into: &found)
        }
        found.removeAll { palm in tracked.contains { $0.region.uprightOverlap(with: palm.region) > 0.5 } }

        // 2. The new palms' landmark models, side by side.
        let foundReadings = found.map { _ in SideBySide.Slot<HandReading>() }
        try SideBySide.run(jobs: found.count, lanes: lanes) { job, lane in
            foundReadings[job].value = try self.read(found[job].region, of: frame, with: marks[lane])
        }
        landmarkRuns += kept.count + found.count

        // 3. Results (the new hands first, then the tracked, in MediaPipe's order); the next regions.
        var results = Results(producer: name)
        var next: [Hand] = []
        for (hand, slot) in zip(found + kept, foundReadings + keptReadings) {
            guard let reading = slot.value else { continue }
            let points = hand.filter?.filter(reading.points, time: input.mediaTime, width: w, height: h) ?? reading.points
            let handedness = reading.left >= 0.5 ? Classification(label: "Left", confidence: reading.left, index: 0)
                                                 : Classification(label: "Right", confidence: 1 - reading.left, index: 1)
            results.landmarks.append(LandmarkSet(label: "hand", points: points, topology: HandTopology.hand, classification: handedness,
                                                 world: reading.world))
            results.detections.append(Detection(box: Self.bounds(of: points), score: reading.presence, label: "hand", index: 0))
            if let region = RotatedRegion(handLandmarks: reading.points, width: w, height: h) {
                next.append((region, hand.filter))
            }
        }
        tracked = next
        schedule.finished(searched: found.count + kept.count, kept: next.count)
        var out = input
        out.results = results
        return out
    }

    /// A hand region and its smoothing state.
    typealias Hand = (region: RotatedRegion, filter: LandmarkSmoothing?)

    /// What the landmark model read in one region: its presence, handedness ("Left" score) and
    /// points (normalised to the frame, not smoothed), with world points when asked for.
    struct HandReading {
        var presence: Float
        var left: Float
        var points: [Landmark]
        var world: [Landmark]?
    }

    /// Runs `marks` (one of ``landmarkers``, used by this thread only) on `region`; nil when no
    /// hand is there (presence not above ``Options/minPresence``).
    private func read(_ region: RotatedRegion, of frame: Frame, with marks: Predictor) throws -> HandReading? {
        guard sampler.sample(region, of: frame, into: marks.input(0).pointer) else { return nil }
        try marks.predict()
        let presence = marks.output(outputs.presence).pointer[0]
        guard presence > options.minPresence else { return nil }
        let values = marks.output(outputs.landmarks).pointer
        let points = region.project((0..<HandTopology.points).map { i in
            Landmark(x: values[3 * i] / 224, y: values[3 * i + 1] / 224, z: values[3 * i + 2] / 224 / 0.4)
        }, width: frame.width, height: frame.height)
        var world: [Landmark]?
        if options.worldLandmarks, let index = outputs.world {
            let v = marks.output(index).pointer
            world = region.projectWorld((0..<HandTopology.points).map { Landmark(x: v[3 * $0], y: v[3 * $0 + 1], z: v[3 * $0 + 2]) })
        }
        return HandReading(presence: presence, left: marks.output(outputs.handedness).pointer[0], points: points, world: world)
    }

    /// Adds `item` to `list`, removing what it overlaps (IoU > 0.5 of the upright squares): the
    /// later wins (MediaPipe's AssociationNormRectCalculator).
    static func associate(_ item: Hand, into list: inout [Hand]) {
        list.removeAll { $0.region.uprightOverlap(with: item.region) > 0.5 }
        list.append(item)
    }

    /// The points' bounding box (normalised).
    static func bounds(of points: [Landmark]) -> ResultBox {
        var x0 = Float.infinity, y0 = Float.infinity, x1 = -Float.infinity, y1 = -Float.infinity
        for p in points { x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y) }
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite else { return ResultBox(x: 0, y: 0, width: 0, height: 0) }
        return ResultBox(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

extension HandLandmarksNode {
    /// The options of the `hand-landmarks` node type.
    public enum OptionSpecs {
        public static let model = NodeOption<Complexity>.choice("model", default: .full,
                                                                "lite or full: MediaPipe's model complexity 0 or 1 (palm_detection_* and hand_landmark_*)")
        public static let palmModel = NodeOption<String?>.text("palm-model", required: false, "palm detector model file or name (default: the complexity's)")
        public static let landmarkModel = NodeOption<String?>.text("landmark-model", required: false, "hand landmark model file or name (default: the complexity's)")
        public static let maxHands = NodeOption.int("max-hands", default: 2, 1...16, "hands tracked at most")
        public static let minDetection = NodeOption.number("min-detection-confidence", default: 0.5, 0...1, "palms scoring below this are not tracked")
        public static let minTracking = NodeOption.number("min-tracking-confidence", default: 0.5, 0...1,
                                                          "a tracked hand whose presence falls below this is dropped (and looked for again)")
        public static let redetectEvery = NodeOption.int("redetect-every", default: 1, 1...100_000,
                                                         "while some but fewer than max-hands hands are tracked, run the palm detector every N frames (1: every frame, as MediaPipe; at once when a hand is lost)")
        public static let detectEvery = NodeOption.int("detect-every", default: 0, 0...100_000, "also run the palm detector every N frames while max-hands are tracked (0: never)")
        public static let smoothing = NodeOption<Bool>.choice("smoothing", [("none", false), ("one-euro", true)], default: "none",
                                                              "landmark smoothing over time (MediaPipe's hands solution: none)")
        public static let minCutoff = NodeOption.number("min-cutoff", default: 0.05, 0.0001...100, "one-euro: cutoff frequency at rest, Hz (lower: steadier)")
        public static let beta = NodeOption.number("beta", default: 80, 0...10_000, "one-euro: how fast the cutoff rises with speed (higher: less lag)")
        public static let world = NodeOption<Bool>.choice("world-landmarks", [("off", false), ("on", true)], default: "off",
                                                          "add each hand's 21 world landmarks (metres, centred on the hand; MediaPipe's multi_hand_world_landmarks)")
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let parallel = NodeOption.int("parallel", default: 2, 1...8,
                                                    "how many of a frame's models run at once on their own threads: the palm detector and each hand's landmark model (1: one after another)")
        public static let palmPrecision = NodeOption<NetworkPrecision>.choice(
            "palm-precision", [("fp32", .float32), ("bf16", .bfloat16), ("int8", .int8)], default: "fp32",
            "the palm detector's arithmetic: fp32, bf16 (its dense convolutions with bfloat16 products, AVX-512 BF16) or int8 (in 8-bit integers, AVX-512 VNNI)")
        public static let landmarkPrecision = NodeOption<NetworkPrecision>.choice(
            "landmark-precision", [("fp32", .float32), ("bf16", .bfloat16), ("int8", .int8)], default: "bf16",
            "the landmark model's arithmetic: bf16 (its dense convolutions with bfloat16 products, AVX-512 BF16; fp32 on a CPU without), fp32, or int8 (in 8-bit integers, AVX-512 VNNI)")
        public static let all = [model.spec, palmModel.spec, landmarkModel.spec, maxHands.spec, minDetection.spec, minTracking.spec, redetectEvery.spec, detectEvery.spec,
                                 smoothing.spec, minCutoff.spec, beta.spec, world.spec, threads.spec, parallel.spec, palmPrecision.spec, landmarkPrecision.spec]
    }
}
