import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import MetalTensorImport
import NeuralGraph
import XNNPACKRuntime

/// MetalTensor's face demo (`LandmarksFilter`, format spec §10.2–10.3) with its model files
/// unchanged: RapidFaceDetect finds the face in a square of the frame (centred on the previous
/// face, or on the frame when there was none) stretched to 160×160; its SSD outputs are decoded
/// with the priors of `RapidFaceDetectConfig.plist` and MetalTensor's own suppression; the best
/// face's box is averaged with the previous frame's when they overlap by more than 0.8; Landmarks
/// reads a 96×96 crop of 1.1 × the box's longer side around its centre, normalised inside the graph
/// by the mean and std images, and its 136 values become 68 points with `std_mean.plist`, smoothed
/// by the app's temporal filter. Both networks run on the node's worker (drop-while-busy live).
///
/// Emits results: the face (a detection, label "face") and its 68 points (topology
/// `face-contour-68`: jaw, brows, nose, eyes, lips).
public final class MetalTensorFacesNode: FilterNode, ModelUser, @unchecked Sendable {
    /// Settings with their defaults (the demo app's).
    public struct Options: Sendable {
        public var precision: NetworkPrecision = .float32
        /// What the landmark crop holds where it leaves the frame.
        public var outside: PixelCentreSampler.Outside = .grey
        /// The app's temporal filter on the points (false: the network's points as they are).
        public var smoothing = true
        /// Skip the landmarks (detection only).
        public var landmarks = true
        /// The detector's square as a fraction of the frame's shorter side (the app: 1).
        public var squareScale = 1.0
        /// When no face is tracked, look in squares across the whole frame (half a side apart) instead
        /// of only the centred one (the app: false).
        public var scan = false
        public var threads = 1
        public init() {}
    }

    public let detectorModel: String
    public let configFile: String
    public let landmarkModel: String
    public let meanShapeFile: String
    public let options: Options
    /// Where the models and their config files come from: the run's model service.
    public var models = ModelService()
    public var modelReferences: [String] { [detectorModel, configFile, landmarkModel, meanShapeFile] }

    private var detector: Predictor?
    private var landmarker: Predictor?
    private var ssd: MetalTensorSSD?
    private var denormalise: (std: [Float], mean: [Float])?
    private let commonRGB = CommonDecoderRGB()
    private let preparingRGB = CommonDecoderRGB()
    private var previousCentre: (x: Double, y: Double)?
    private var previousBoxes: [MetalTensorSSD.Box] = []
    private var filtered: [Float] = []
    public private(set) var detectorRuns = 0
    public private(set) var landmarkRuns = 0

    /// `detector` and `landmarks` are plist paths; `config` and `meanShape` default to
    /// `RapidFaceDetectConfig.plist` and `std_mean.plist` beside them.
    public init(name: String = "faces", detector: String, config: String? = nil, landmarks: String, meanShape: String? = nil,
                options: Options = Options()) {
        detectorModel = detector
        configFile = config ?? ((detector as NSString).deletingLastPathComponent as NSString).appendingPathComponent("RapidFaceDetectConfig.plist")
        landmarkModel = landmarks
        meanShapeFile = meanShape ?? ((landmarks as NSString).deletingLastPathComponent as NSString).appendingPathComponent("std_mean.plist")
        self.options = options
        super.init(name: name)
    }

    override public var kind: String { "metaltensor-faces" }
    override public var execution: Execution { .worker }
    override public var outputKind: StreamKind { .results }
    override public var filesRead: [String] {
        [detectorModel, landmarkModel].compactMap(models.locateIfPresent).flatMap { MetalTensorImporter.filesRead(path: $0, limits: models.limits) }
            + [configFile, meanShapeFile].compactMap(models.locateIfPresent)
    }

    private func load(_ reference: String) throws -> Predictor {
        try models.predictor(for: reference, threads: options.threads, precision: options.precision.predictor,
                             metalTensor: .init(precision: options.precision.metalTensorStorage), node: name)
    }

    private func resolve(_ file: String, what: String) throws -> String {
        do { return try models.locate(file, what: what) } catch {
            throw GraphError.invalidOption(node: name, option: what, reason: "\(error)")
        }
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        try require(format: frame.format, in: [.yuv420p, .rgb24])
        let det = try detector ?? load(detectorModel)
        detector = det
        do { ssd = try MetalTensorSSD(configPath: try resolve(configFile, what: "config")) } catch let e as MetalTensorSSDError {
            throw GraphError.nodeFailed(node: name, reason: e.description)
        }
        guard let ssd, det.inputInfo(0).shape == [1, ssd.networkHeight, ssd.networkWidth, 3], det.outputCount >= 2 else {
            throw GraphError.mismatch(node: name, port: "detector", field: "input", expected: "[1, H, W, 3] as the config's network_size, two outputs",
                                      got: "\(det.inputInfo(0).shape), \(det.outputCount) outputs")
        }
        if options.landmarks {
            let marks = try landmarker ?? load(landmarkModel)
            landmarker = marks
            guard marks.inputInfo(0).shape == [1, 96, 96, 3], marks.output(0).count == 136 else {
                throw GraphError.mismatch(node: name, port: "landmark model", field: "shape", expected: "input [1, 96, 96, 3], output 136 values",
                                          got: "\(marks.inputInfo(0).shape), \(marks.output(0).count) values")
            }
            denormalise = try readMeanShape(try resolve(meanShapeFile, what: "mean-shape"))
        }
        previousCentre = nil
        previousBoxes = []
        filtered = []
        return frame
    }

    /// `std_mean.plist`: 136 comma-separated numbers under `std` and under `mean`.
    private func readMeanShape(_ path: String) throws -> (std: [Float], mean: [Float]) {
        let root: PropertyList
        do { root = MetalTensorLexicon.deletingSpaces(try PropertyList.read(path: path)) } catch {
            throw GraphError.nodeFailed(node: name, reason: "\(path): not a readable property list: \(error)")
        }
        func values(_ key: String) throws -> [Float] {
            guard let text = root[key]?.string else { throw GraphError.nodeFailed(node: name, reason: "\(path), key '\(key)': missing (136 numbers)") }
            let v = MetalTensorLexicon.components(text, ",").map(MetalTensorLexicon.floatValue)
            guard v.count == 136, v.allSatisfy(\.isFinite) else {
                throw GraphError.nodeFailed(node: name, reason: "\(path), key '\(key)': \(v.count) numbers, expected 136")
            }
            return v
        }
        return (try values("std"), try values("mean"))
    }

    override public func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
        try preparingRGB.rgb(of: frame)
    }

    override public func process(_ input: Frame, context: RunContext) throws -> Frame? {
        try process(input, prepared: nil, context: context)
    }

    override public func process(_ input: Frame, prepared: (any Sendable)?, context: RunContext) throws -> Frame? {
        guard let detector, let ssd else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        let frame = try (prepared as? Frame) ?? commonRGB.rgb(of: input)
        let (w, h) = (Double(frame.width), Double(frame.height))
        var out = input
        var results = Results(producer: name)
        // 1. The square the detector sees: centred on the last face (kept inside the frame), or the
        //    frame (or, scanning, each square across the frame until one holds a face).
        let side = min(w, h) * options.squareScale
        var squares: [(Double, Double)] = []
        if let centre = previousCentre {
            squares = [(centre.x - side / 2, centre.y - side / 2)]
        } else {
            squares = [(w / 2 - side / 2, h / 2 - side / 2)]
            if options.scan {
                for y in stride(from: 0.0, through: h - side, by: side / 2) {
                    for x in stride(from: 0.0, through: w - side, by: side / 2) { squares.append((x, y)) }
                }
            }
        }
        var boxes: [MetalTensorSSD.Box] = []
        var cropX = 0.0, cropY = 0.0
        for square in squares {
            cropX = min(max(square.0, 0), w - side)
            cropY = min(max(square.1, 0), h - side)
            boxes = try detect(in: frame, x: cropX, y: cropY, side: side, detector: detector, ssd: ssd)
            if !boxes.isEmpty { break }
        }
        // 2. The app's box smoothing: the average with last frame's box when they overlap by more than 0.8.
        for i in boxes.indices {
            if let a = previousBoxes.first(where: { Self.appOverlap($0, boxes[i]) > 0.8 }) {
                boxes[i].xmin = (a.xmin + boxes[i].xmin) / 2
                boxes[i].xmax = (a.xmax + boxes[i].xmax) / 2
                boxes[i].ymin = (a.ymin + boxes[i].ymin) / 2
                boxes[i].ymax = (a.ymax + boxes[i].ymax) / 2
            }
        }
        previousBoxes = boxes
        guard let face = boxes.first else {
            previousCentre = nil
            filtered = []
            out.results = results
            return out
        }
        let bx = Double(face.xmin) * side + cropX, by = Double(face.ymin) * side + cropY
        let bw = Double(face.xmax - face.xmin) * side, bh = Double(face.ymax - face.ymin) * side
        previousCentre = (bx + bw / 2, by + bh / 2)
        results.detections.append(Detection(box: ResultBox(x: Float(bx / w), y: Float(by / h), width: Float(bw / w), height: Float(bh / h)),
                                            score: face.confidence, label: ssd.classes.indices.contains(face.classIndex) ? ssd.classes[face.classIndex] : "face",
                                            index: face.classIndex))
        // 3. Landmarks on the square of 1.1 × the box's longer side around its centre.
        if let landmarker, let (std, mean) = denormalise {
            let s = 0.55 * max(bw, bh)
            let (x0, y0) = (bx + bw / 2 - s, by + bh / 2 - s)
            PixelCentreSampler(width: 96, height: 96, outside: options.outside)
                .sample(frame, x: x0, y: y0, width: 2 * s, height: 2 * s, into: landmarker.input(0).pointer)
            try landmarker.predict()
            landmarkRuns += 1
            let raw = landmarker.output(0).pointer
            var v = (0..<136).map { raw[$0] * std[$0] + mean[$0] }
            if options.smoothing {
                if filtered.count != 136 { filtered = [Float](repeating: 0, count: 136) }
                for i in 0..<136 {
                    let d = (abs(filtered[i] - v[i]) + 1e-6) / 2
                    filtered[i] = (filtered[i] / d + v[i] * d) / (d + 1 / d)
                }
                v = filtered
            }
            let points = (0..<68).map { i in
                Landmark(x: Float((Double(v[2 * i]) / 96 * 2 * s + x0) / w), y: Float((Double(v[2 * i + 1]) / 96 * 2 * s + y0) / h))
            }
            results.landmarks.append(LandmarkSet(label: "face", points: points, topology: .faceContour68))
        }
        out.results = results
        return out
    }

    /// Faces in one square of the frame, best first, normalised to the square.
    private func detect(in frame: Frame, x: Double, y: Double, side: Double, detector: Predictor, ssd: MetalTensorSSD) throws -> [MetalTensorSSD.Box] {
        PixelCentreSampler(width: ssd.networkWidth, height: ssd.networkHeight)
            .sample(frame, x: x, y: y, width: side, height: side, into: detector.input(0).pointer)
        try detector.predict()
        detectorRuns += 1
        let loc = detector.output(0), conf = detector.output(1)
        guard let locations = MetalTensorSSD.gather(loc.pointer, shape: loc.shape, layers: ssd.locationShapes),
              let logits = MetalTensorSSD.gather(conf.pointer, shape: conf.shape, layers: ssd.confidenceShapes) else {
            throw GraphError.nodeFailed(node: name, reason: "detector outputs \(loc.shape), \(conf.shape) do not hold the config's location/confidence shapes")
        }
        return ssd.decode(locations: locations, logits: logits)
    }

    /// The app's box-matching overlap: IoU, except when one box contains the other.
    static func appOverlap(_ a: MetalTensorSSD.Box, _ b: MetalTensorSSD.Box) -> Float {
        let dx = min(a.xmax - b.xmin, b.xmax - a.xmin), dy = min(a.ymax - b.ymin, b.ymax - a.ymin)
        guard dx > 0, dy > 0 else { return 0 }
        return dx * dy / (a.area + b.area - dx * dy)
    }
}

extension MetalTensorFacesNode {
    /// The options of the `metaltensor-faces` node type.
    public enum OptionSpecs {
        public static let detector = NodeOption.text("detector", default: "../shared/models/metaltensor/RapidFaceDetect.plist",
                                                     "RapidFaceDetect plist (json and bin beside it)")
        public static let config = NodeOption<String?>.text("config", required: false, "detector config (default: RapidFaceDetectConfig.plist beside the detector)")
        public static let landmarks = NodeOption.text("landmarks", default: "../shared/models/metaltensor/Landmarks.plist",
                                                      "Landmarks plist (json, bin and the mean/std images beside it)")
        public static let meanShape = NodeOption<String?>.text("mean-shape", required: false, "std_mean.plist (default: beside the landmarks model)")
        public static let points = NodeOption.flag("points", default: true, "find the 68 points (false: the face box only)")
        public static let smoothing = NodeOption<Bool>.choice("smoothing", [("app", true), ("none", false)], default: "app", "the demo app's temporal filter on the points, or none")
        public static let outside = NodeOption<PixelCentreSampler.Outside>.choice("outside", default: .grey,
                                                                               "landmark crop beyond the frame: grey (the crop filter's clear colour) or clamp")
        public static let square = NodeOption.number("square", default: 1, 0.1...1,
                                                     "the detector's square, a fraction of the frame's shorter side (the app: 1)")
        public static let scan = NodeOption.flag("scan", default: false, "with no face tracked, look in squares across the frame, not only the centred one")
        public static let precision = NetworkNode.OptionSpecs.precision
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let all = [detector.spec, config.spec, landmarks.spec, meanShape.spec, points.spec, smoothing.spec, outside.spec,
                                 square.spec, scan.spec, precision.spec, threads.spec]
    }
}

extension LandmarkTopology {
    /// The iBUG 300-W 68-point face layout (dlib's, MetalTensor's demo): jaw, brows, nose, eyes
    /// (closed), lips (closed).
    public static let faceContour68 = LandmarkTopology(name: "face-contour-68", paths: [
        Array(0...16), Array(17...21), Array(22...26), Array(27...30), Array(30...35) + [30],
        Array(36...41) + [36], Array(42...47) + [42], Array(48...59) + [48], Array(60...67) + [60],
    ])
}
