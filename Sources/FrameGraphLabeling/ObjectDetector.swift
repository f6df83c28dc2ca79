import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import Foundation
import ModelDeployment
import NeuralGraph
import XNNPACKRuntime

/// Object detection as ML Kit and MediaPipe's object detector do it, for the detectors people export
/// from TensorFlow's object detection API and Model Maker (SSD MobileNet, EfficientDet-Lite): a model
/// that ends in TFLite's `TFLite_Detection_PostProcess`, whose four outputs are boxes [1, K, 4]
/// (ymin, xmin, ymax, xmax, 0…1 of the model's input), classes [1, K], scores [1, K] and a count [1].
/// The frame is stretched to the model's input (as these detectors are trained), so the boxes are the
/// frame's own normalised coordinates. Labels, normalisation and threshold come from the model's
/// metadata (or NAME.labels.txt beside it), as for the `label` node.
public enum ObjectDetector {
    /// The `detect` node's options (one table: names, defaults, ranges).
    public enum Specs {
        public static let model = NodeOption<String?>.text(
            "model", required: true, "detector ending in TFLite_Detection_PostProcess (SSD MobileNet, EfficientDet-Lite; .tflite, quantized or float)")
        public static let minScore = NodeOption<Double?>.number(
            "min-score", optional: 0...1, "detections below this score are left out (default: the model's metadata threshold, else 0.5)")
        public static let maxResults = NodeOption.int("max-results", default: 25, 1...10_000, "at most this many detections, best first")
        public static let labelOffset = NodeOption<Int?>.int(
            "label-offset", required: false, -1...1000,
            "label of class c is line c + offset of the labels (default: 1 when the first label is ??? or background, as TF's label maps, else 0)")
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let scale = NetworkNode.OptionSpecs.scale
        public static let offset = NetworkNode.OptionSpecs.offset
        public static let fallback = NetworkNode.OptionSpecs.fallback
        public static let all = [model.spec, minScore.spec, maxResults.spec, labelOffset.spec, threads.spec, scale.spec, offset.spec, fallback.spec]
    }

    /// The score threshold when neither the node nor the model's metadata gives one.
    public static let defaultMinScore: Float = 0.5

    /// A `detect` node: reads the model's labels, normalisation and threshold now, so that a damaged
    /// model fails before the first frame. A float model without metadata and without `scale`/`offset`
    /// gets TensorFlow's object detection input, −1…1.
    public static func node(name: String, model: String, models: ModelService, minScore: Float?, maxResults: Int, labelOffset: Int?,
                            threads: Int, normalization: InputNormalization?, fallback: String? = nil,
                            warn: @escaping @Sendable (String) -> Void) throws -> NetworkNode {
        let resolved: ResolvedModel
        do {
            resolved = try models.resolve(model, fallback: fallback, warn: warn)
        } catch let error as ModelError {
            throw NetworkNodeError(node: name, error: error)
        } catch let error as DeploymentError {
            throw GraphError.invalidOption(node: name, option: "model", reason: error.description)
        }
        @Sendable func decoder(for path: String) throws -> (decoder: any OutputDecoder, normalization: InputNormalization?) {
            let info = try ClassifierInfo.read(modelAt: path)
            let offset = labelOffset ?? defaultLabelOffset(info.labels)
            let made = PostProcessedDetectionDecoder(labels: info.labels, labelOffset: offset,
                                                     minScore: minScore ?? info.scoreThreshold ?? defaultMinScore, maxResults: maxResults)
            return (made, normalization ?? info.normalization ?? .signed)
        }
        let made: (decoder: any OutputDecoder, normalization: InputNormalization?)
        do { made = try decoder(for: resolved.path) } catch let error as ModelError {
            throw NetworkNodeError(node: name, error: error)
        }
        let node = NetworkNode(name: name, model: ModelReference.isCollection(model) ? model : resolved.path, decoder: made.decoder,
                               options: .init(threads: threads, normalization: made.normalization, fit: .stretch, fallback: fallback))
        node.models = models
        node.resolvedModel = resolved
        node.warn = warn
        node.decoderForModel = { try decoder(for: $0) }
        return node
    }

    /// TensorFlow's label maps start with a placeholder for the background class ("???").
    static func defaultLabelOffset(_ labels: [String]) -> Int {
        guard let first = labels.first?.trimmingCharacters(in: .whitespaces).lowercased() else { return 0 }
        return first == "???" || first == "background" ? 1 : 0
    }
}

/// Decodes the four outputs of `TFLite_Detection_PostProcess` into detections: the first `count`
/// rows with a score of at least ``minScore``, best first, at most ``maxResults``.
public final class PostProcessedDetectionDecoder: OutputDecoder {
    public let labels: [String]
    public let labelOffset: Int
    public let minScore: Float
    public let maxResults: Int
    private var boxes = 0, classes = 1, scores = 2, count = 3
    private var rows = 0
    private var resolved = false
    private var producer = ""

    public init(labels: [String], labelOffset: Int, minScore: Float, maxResults: Int) {
        self.labels = labels
        self.labelOffset = labelOffset
        self.minScore = minScore
        self.maxResults = maxResults
    }

    public var emits: StreamKind { .results }

    public func negotiate(outputs: [(name: String, shape: [Int])], input: FrameDescription, node: String) throws -> FrameDescription {
        let box = outputs.firstIndex { $0.shape.count == 3 && $0.shape.first == 1 && $0.shape.last == 4 }
        let k = box.map { outputs[$0].shape[1] } ?? 0
        let rows = outputs.indices.filter { outputs[$0].shape == [1, k] }
        let number = outputs.firstIndex { $0.shape == [1] }
        guard let box, k > 0, rows.count == 2, let number else {
            let seen = outputs.map { "'\($0.name)' \($0.shape)" }.joined(separator: ", ")
            throw GraphError.mismatch(node: node, port: "model outputs", field: "shape",
                                      expected: "boxes [1, K, 4], classes [1, K], scores [1, K], count [1] (a detector ending in TFLite_Detection_PostProcess)",
                                      got: seen.isEmpty ? "none" : seen)
        }
        // TFLite's order is boxes, classes, scores, count; the graph's outputs may list them otherwise.
        (boxes, classes, scores, count) = (box, rows[0], rows[1], number)
        self.rows = k
        producer = node
        resolved = false
        return input
    }

    /// Which graph outputs are the post-process operation's classes and scores, from the graph.
    private func resolve(_ predictor: Predictor) {
        resolved = true
        let graph = predictor.graph
        guard let op = graph.nodes.first(where: { if case .detectionPostProcess = $0.operation { return true } else { return false } }),
              op.outputs.count == 4 else { return }
        for (k, t) in op.outputs.enumerated() {
            guard let i = graph.outputs.firstIndex(of: t) else { continue }
            switch k {
            case 0: boxes = i
            case 1: classes = i
            case 2: scores = i
            default: count = i
            }
        }
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        if !resolved { resolve(predictor) }
        let b = predictor.output(boxes), c = predictor.output(classes), s = predictor.output(scores), n = predictor.output(count)
        guard b.count >= rows * 4, c.count >= rows, s.count >= rows, n.count >= 1 else { return nil }
        let found = n.pointer[0].isFinite ? min(rows, max(0, Int(n.pointer[0]))) : 0
        var detections: [Detection] = []
        for r in 0..<found where s.pointer[r] >= minScore {
            let (ymin, xmin, ymax, xmax) = (b.pointer[4 * r], b.pointer[4 * r + 1], b.pointer[4 * r + 2], b.pointer[4 * r + 3])
            guard [ymin, xmin, ymax, xmax].allSatisfy(\.isFinite), c.pointer[r].isFinite else { continue }
            let index = Int(c.pointer[r])
            let line = index + labelOffset
            let label = labels.indices.contains(line) ? labels[line] : nil
            detections.append(Detection(box: ResultBox(x: xmin, y: ymin, width: xmax - xmin, height: ymax - ymin), score: s.pointer[r],
                                        label: label, index: index))
        }
        detections.sort { $0.score > $1.score }
        var out = frame
        out.results = Results(producer: producer, detections: Array(detections.prefix(maxResults)))
        return out
    }
}
