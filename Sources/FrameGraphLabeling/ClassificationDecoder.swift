import Foundation
import FrameGraph
import FrameGraphNetwork
import NeuralGraph
import XNNPACKRuntime

/// Decodes a classifier's scores (one output of C values, [1, C] or [1, 1, 1, C]) into the best
/// classes: the `top` highest scores at or above `minScore`, best first (ties by index), each with
/// its label (line i is class i; without labels, "class i"). Scores become probabilities with a
/// softmax when asked, or, by default, when the model does not end in a softmax or sigmoid itself.
/// Emits the frame that went in with the classifications attached.
public final class ClassificationDecoder: OutputDecoder {
    /// How the labels file names classes.
    public enum LabelFormat: String, Sendable, CaseIterable {
        /// The whole line is the label.
        case plain
        /// ImageNet's synset_words.txt: a WordNet id, a space, then the label (the id is dropped).
        case synset
    }

    public let labels: [String]
    public let top: Int
    public let minScore: Float
    /// Apply a softmax to the scores first: true, false, or nil (when the model's output is not made
    /// by a softmax or sigmoid).
    public let softmax: Bool?
    private var applySoftmax: Bool?
    /// The model's score calibration, applied to each class's score before the threshold.
    public let calibrationSource: ClassifierInfo.CalibrationSource?
    private var calibration: ScoreCalibration?
    private var output = 0
    private var classes = 0
    private var producer = ""

    public init(labels: [String], top: Int = 5, minScore: Float = 0, softmax: Bool? = nil, calibration: ClassifierInfo.CalibrationSource? = nil) {
        calibrationSource = calibration
        self.labels = labels
        self.top = max(1, top)
        self.minScore = minScore
        self.softmax = softmax
    }

    /// Reads a labels file (at most 1 MiB, UTF-8, one label per line).
    public static func labels(path: String, format: LabelFormat) throws -> [String] {
        labels(text: String(decoding: try FileCheck.read(path, what: "labels file", maxBytes: 1 << 20), as: UTF8.self), format: format)
    }

    /// The labels of a labels file's text: one per line, a final newline ignored.
    public static func labels(text: String, format: LabelFormat) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { raw in
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            guard format == .synset, let space = line.firstIndex(of: " ") else { return line }
            return String(line[line.index(after: space)...])
        }
        while lines.last?.isEmpty == true { lines.removeLast() }  // the file's final newline
        return lines
    }

    public var emits: StreamKind { .results }

    /// Whether `output` is made by a softmax or sigmoid (through reshapes, and the quantize and
    /// dequantize of a quantized model's output).
    static func endsInProbabilities(_ graph: NeuralGraph, output: Int) -> Bool {
        var tensor = output
        for _ in 0..<8 {
            guard let node = graph.nodes.last(where: { $0.outputs.contains(tensor) }) else { return false }
            switch node.operation {
            case .softmax, .logistic: return true
            case .reshape, .quantize, .dequantize, .roundToFloat16: tensor = node.inputs[0]
            default: return false
            }
        }
        return false
    }

    public func negotiate(outputs: [(name: String, shape: [Int])], input: FrameDescription, node: String) throws -> FrameDescription {
        guard let first = outputs.first, let count = first.shape.last, first.shape.dropLast().allSatisfy({ $0 == 1 }), count >= 1 else {
            throw GraphError.mismatch(node: node, port: "model output", field: "shape", expected: "[1, C] or [1, 1, 1, C] class scores",
                                      got: outputs.first.map { "'\($0.name)' \($0.shape)" } ?? "none")
        }
        if !labels.isEmpty && labels.count != count {
            throw GraphError.mismatch(node: node, port: "labels", field: "lines", expected: "one label for each of the \(count) classes",
                                      got: "\(labels.count) lines")
        }
        output = 0
        classes = count
        producer = node
        applySoftmax = softmax
        calibration = nil
        if let source = calibrationSource {
            do {
                calibration = try ScoreCalibration(file: source.text, transformation: source.transformation, defaultScore: source.defaultScore, classes: count)
            } catch {
                throw GraphError.mismatch(node: node, port: "score calibration", field: "lines", expected: "\(count) (one per class)", got: "\(error)")
            }
        }
        return input
    }

    public func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        let scores = predictor.output(output)
        var values = Array(UnsafeBufferPointer(start: scores.pointer, count: min(classes, scores.count)))
        if applySoftmax == nil { applySoftmax = !Self.endsInProbabilities(predictor.graph, output: predictor.graph.outputs[output]) }
        if applySoftmax == true, let m = values.max() {
            var sum: Float = 0
            for i in values.indices { values[i] = exp(values[i] - m); sum += values[i] }
            for i in values.indices { values[i] /= sum }
        }
        if let calibration {
            for i in values.indices { values[i] = calibration.calibrate(values[i], index: i) }
        }
        let best = values.indices.sorted { values[$0] > values[$1] || (values[$0] == values[$1] && $0 < $1) }
            .prefix(top).filter { values[$0] >= minScore }
        var out = frame
        out.results = Results(producer: producer, classifications: best.map { i in
            Classification(label: i < labels.count ? labels[i] : "class \(i)", confidence: values[i], index: i)
        })
        return out
    }
}

extension ClassificationDecoder {
    /// The options of the `classify` node type.
    public enum OptionSpecs {
        public static let model = NodeOption<String?>.text("model", required: true, "classifier model (.tflite, .onnx or a MetalTensor .plist)")
        public static let labels = NodeOption<String?>.text("labels", required: false, "labels file, one per line (line i is class i)")
        public static let labelFormat = NodeOption<LabelFormat>.choice("label-format", default: .plain,
                                                                       "plain (the line is the label) or synset (drop the WordNet id before the first space)")
        public static let top = NodeOption.int("top", default: 5, 1...1000, "the best N classes")
        public static let minScore = NodeOption.number("min-score", default: 0, 0...1, "classes scoring below this are left out")
        public static let softmax = NodeOption<Bool?>.choice("softmax", [("auto", nil), ("on", true), ("off", false)], default: "auto",
                                                      "scores to probabilities: auto (when the model does not end in a softmax or sigmoid), on, off")
    }
}
