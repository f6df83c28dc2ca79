import Foundation
import MetalTensorImport
import NeuralGraph
import ONNXImport
import TFLiteImport

/// Imports a model file into the graph IR, choosing the importer by the file's content
/// (``ModelFormat``). Finding a model by name is the model service's (FrameGraphModels).
///
/// ```swift
/// let graph = try ModelImport.load(path: "models/cache/selfie_segmentation.tflite")
/// ```
public enum ModelImport {
    /// Imports the model at `path` (on disk or in memory). A MetalTensor plist takes its `.json`
    /// and `.bin` from beside it and is imported with `metalTensor` options (precision, every layer
    /// as an output); other formats ignore them. Archives and bundles are opened by their owners
    /// first (ModelDeployment, the model service) and refused here.
    public static func load(path: String, limits: ModelLimits = .standard,
                            metalTensor: MetalTensorImporter.Options = .init()) throws -> NeuralGraph {
        let format = try ModelFormat.detect(path: path, limits: limits)
        switch format {
        case .tflite:
            return try TFLiteImporter.load(path: path, limits: limits)
        case .onnx:
            return try ONNXImporter.load(path: path, limits: limits)
        case .metalTensor:
            return try MetalTensorImporter.load(path: path, options: metalTensor, limits: limits)
        case .archive, .zip:
            throw ModelError.malformed(file: path, reason: "is a \(format), not a single model: give it to a node or to framegraph model info, which open it", offset: nil)
        }
    }
}
