import Foundation
import ModelStore
import NeuralGraph
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

    public init(labels: [String] = [], labelSource: String? = nil, normalization: InputNormalization? = nil, scoreThreshold: Float? = nil) {
        self.labels = labels
        self.labelSource = labelSource
        self.normalization = normalization
        self.scoreThreshold = scoreThreshold
    }

    /// Reads the model file at `path` (and a labels file beside it). Errors name the file.
    public static func read(modelAt path: String, graph: NeuralGraph? = nil) throws -> ClassifierInfo {
        var info = ClassifierInfo()
        let lower = path.lowercased()
        if lower.hasSuffix(".tflite") {
            if let metadata = try TFLiteMetadata.read(path: path) {
                if let input = metadata.inputs.first, let mean = input.mean.first, let std = input.std.first, std != 0 {
                    info.normalization = InputNormalization(scale: 1 / std, offset: -mean / std)
                }
                info.scoreThreshold = metadata.outputs.first?.scoreThreshold
            }
            if let labels = try TFLiteMetadata.labels(path: path) {
                info.labels = labels
                info.labelSource = "the labels packed in \((path as NSString).lastPathComponent)"
            }
        } else if lower.hasSuffix(".onnx") {
            let g = try graph ?? ModelLoader.load(path: path)
            if let text = g.metadata["metadata.labels"] {
                info.labels = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                info.labelSource = "the labels metadata property of \((path as NSString).lastPathComponent)"
            }
            if let mean = g.metadata["metadata.normalization_mean"].flatMap(Float.init),
               let std = g.metadata["metadata.normalization_std"].flatMap(Float.init), std != 0, mean.isFinite, std.isFinite {
                info.normalization = InputNormalization(scale: 1 / std, offset: -mean / std)
            }
            if let t = g.metadata["metadata.score_threshold"].flatMap(Float.init), t.isFinite { info.scoreThreshold = t }
        }
        if info.labels.isEmpty {
            let beside = URL(fileURLWithPath: path).deletingPathExtension().appendingPathExtension("labels.txt").path
            if FileManager.default.fileExists(atPath: beside) {
                info.labels = try ClassificationDecoder.labels(path: beside, format: .plain)
                info.labelSource = beside
            }
        }
        return info
    }
}
