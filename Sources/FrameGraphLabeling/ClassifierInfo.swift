import Foundation
import FrameGraphNetwork
import ModelFormats
import NeuralGraph
import ONNXImport
import TFLiteImport

/// What a classifier model says about itself, as ML Kit reads it: its labels (a TFLite model's
/// packed `TENSOR_AXIS_LABELS` file; an ONNX model's `labels` metadata property; else a
/// `NAME.labels.txt` beside the model), its input normalisation (TFLite `NormalizationOptions`;
/// ONNX `normalization_mean` / `normalization_std`), and its score threshold (TFLite
/// `ScoreThresholdingOptions`; ONNX `score_threshold`).
public struct ClassifierInfo: Sendable, Equatable {
    /// One label per output class (empty: the model has none; results then carry indices only).
    public var labels: [String] = []
    /// Where the labels came from, for messages ("the packed labels.txt", "metadata_props", a path).
    public var labelSource: String?
    /// value = byte × scale + offset, from the model's mean and std; nil when it says nothing.
    public var normalization: InputNormalization?
    /// The model's own score threshold (nil: none).
    public var scoreThreshold: Float?
    /// The model's score calibration: its file's text, the transformation and the default score
    /// (TFLite `ScoreCalibrationOptions` + `TENSOR_AXIS_SCORE_CALIBRATION`; ONNX `score_calibration`,
    /// `score_transformation`, `score_calibration_default`). Nil: none.
    public var calibration: CalibrationSource?

    /// A score calibration as the model carries it (parsed when the class count is known).
    public struct CalibrationSource: Sendable, Equatable {
        public var text: String
        public var transformation: ScoreCalibration.Transformation
        public var defaultScore: Float
        public init(text: String, transformation: ScoreCalibration.Transformation, defaultScore: Float) {
            self.text = text
            self.transformation = transformation
            self.defaultScore = defaultScore
        }
    }

    public init(labels: [String] = [], labelSource: String? = nil, normalization: InputNormalization? = nil, scoreThreshold: Float? = nil) {
        self.labels = labels
        self.labelSource = labelSource
        self.normalization = normalization
        self.scoreThreshold = scoreThreshold
    }

    /// Reads the model file at `path` once (and a labels file beside it); an ONNX model already
    /// imported gives its metadata through `graph`, else only its metadata is decoded. Errors name the file.
    public static func read(modelAt path: String, graph: NeuralGraph? = nil) throws -> ClassifierInfo {
        var info = ClassifierInfo()
        let name = (path as NSString).lastPathComponent
        let format = try ModelFormat.detect(path: path)
        if format == .tflite {
            let bytes = try TFLiteMetadata.modelBytes(path: path)
            if let metadata = try TFLiteMetadata.read(bytes: bytes, fileName: name) {
                if let input = metadata.inputs.first, !(input.mean.isEmpty && input.std.isEmpty) {
                    // One mean and std for every channel, or one per channel (R, G, B).
                    info.normalization = try normalization(mean: input.mean, std: input.std, file: name)
                }
                if let t = metadata.outputs.first?.scoreThreshold {
                    guard t.isFinite, (0...1).contains(t) else {
                        throw ModelError.malformed(file: name, reason: "metadata score threshold \(t) is not a number from 0 to 1", offset: nil)
                    }
                    info.scoreThreshold = t
                }
                if let output = metadata.outputs.first, let transformation = output.scoreCalibration,
                   let text = try TFLiteMetadata.outputFile(bytes: bytes, fileName: name, type: "TENSOR_AXIS_SCORE_CALIBRATION") {
                    info.calibration = CalibrationSource(text: text, transformation: ScoreCalibration.Transformation(rawValue: transformation) ?? .identity,
                                                         defaultScore: output.scoreCalibrationDefault)
                }
            }
            if let labels = try TFLiteMetadata.labels(bytes: bytes, fileName: name) {
                info.labels = labels
                info.labelSource = "the labels packed in \(name)"
            }
        } else if format == .onnx {
            let properties: [String: String]
            if let graph {
                properties = Dictionary(graph.metadata.compactMap { key, value in key.hasPrefix("metadata.") ? (String(key.dropFirst(9)), value) : nil },
                                        uniquingKeysWith: { _, last in last })
            } else {
                properties = try ONNXImporter.metadataProperties(bytes: [UInt8](try ModelFile.read(path, maxBytes: ModelLimits.standard.maxFileBytes)),
                                                                 fileName: name)
            }
            if let text = properties["labels"] {
                info.labels = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                info.labelSource = "the labels metadata property of \(name)"
            }
            if properties["normalization_mean"] != nil || properties["normalization_std"] != nil {
                guard let mean = properties["normalization_mean"].flatMap(Float.init), let std = properties["normalization_std"].flatMap(Float.init) else {
                    throw ModelError.malformed(file: name, reason: "metadata normalization_mean and normalization_std must both be numbers", offset: nil)
                }
                info.normalization = try normalization(mean: [mean], std: [std], file: name)
            }
            if let text = properties["score_threshold"] {
                guard let t = Float(text), t.isFinite, (0...1).contains(t) else {
                    throw ModelError.malformed(file: name, reason: "metadata score_threshold '\(text.prefix(40))' is not a number from 0 to 1", offset: nil)
                }
                info.scoreThreshold = t
            }
            if let text = properties["score_calibration"] {
                let transformation = properties["score_transformation"] ?? "IDENTITY"
                guard let kind = ScoreCalibration.Transformation(rawValue: transformation) else {
                    throw ModelError.malformed(file: name, reason: "metadata score_transformation '\(transformation.prefix(40))' is not IDENTITY, LOG or INVERSE_LOGISTIC",
                                               offset: nil)
                }
                let fallback = properties["score_calibration_default"].flatMap(Float.init) ?? 0
                info.calibration = CalibrationSource(text: text, transformation: kind, defaultScore: fallback.isFinite ? fallback : 0)
            }
        }
        if info.labels.isEmpty {
            let beside = URL(fileURLWithPath: path).deletingPathExtension().appendingPathExtension("labels.txt").path
            if ModelFile.exists(beside) {
                // Through ModelFile: beside a decrypted model, the labels are in memory too.
                info.labels = ClassificationDecoder.labels(text: String(decoding: try ModelFile.read(beside, maxBytes: 1 << 20, what: "labels file"), as: UTF8.self),
                                                           format: .plain)
                info.labelSource = beside
            }
        }
        return info
    }

    /// A model's normalisation from its metadata's mean and std: finite, std not 0, one value or one
    /// per channel (R, G, B); anything else is a damaged model, not a silent "no normalisation".
    static func normalization(mean: [Float], std: [Float], file: String) throws -> InputNormalization {
        guard mean.count == std.count, mean.count == 1 || mean.count == 3 else {
            throw ModelError.malformed(file: file, reason: "metadata normalisation has \(mean.count) means and \(std.count) stds (expected 1 or 3 of each)", offset: nil)
        }
        guard mean.allSatisfy(\.isFinite), std.allSatisfy({ $0.isFinite && $0 != 0 }), let n = InputNormalization(mean: mean, std: std) else {
            throw ModelError.malformed(file: file, reason: "metadata normalisation mean \(mean) std \(std): every mean must be finite and every std finite and not 0", offset: nil)
        }
        return n
    }

    /// The decoder a labeler uses: these labels, the threshold in force (the given one, else the
    /// model's, else 0 — ML Kit's rule), at most `maxResults`, this calibration.
    public func decoder(threshold: Float?, maxResults: Int, softmax: Bool? = nil) -> ClassificationDecoder {
        ClassificationDecoder(labels: labels, top: max(1, maxResults), minScore: threshold ?? scoreThreshold ?? 0, softmax: softmax,
                              calibration: calibration)
    }
}
