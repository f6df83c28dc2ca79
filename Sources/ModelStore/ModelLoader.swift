import Foundation
import NeuralGraph
import MetalTensorImport
import ONNXImport
import TFLiteImport

/// Finds and loads model files by path or by name.
///
/// A bare name such as `selfie_segmentation` is looked up as `<dir>/selfie_segmentation.tflite` (or
/// `.onnx`) in `$FRAMEGRAPH_MODELS` (when set), in `models/cache` (where
/// `tools/models/fetch_mediapipe_models.sh` puts the verified MediaPipe models) and in
/// `models/<name>` (FrameGraph's own models, e.g. `models/colorizer/colorizer.onnx`).
public enum ModelLoader {
    /// Model formats FrameGraph imports, by file extension.
    public static let extensions = ["tflite", "onnx", "plist"]
    /// Extensions that make a reference a path (looked for below the roots, never by name): the
    /// model formats and deployment archives (`.fgarchive`, opened by ModelDeployment).
    static let pathExtensions = extensions + ["fgarchive"]

    /// The file a model reference points to. Bare names are looked up below the working directory
    /// and below each of `roots` (the CLI passes the project folder of the pipeline file, so a
    /// pipeline runs from any working directory).
    public static func resolve(_ reference: String, roots: [String] = []) throws -> String {
        if ModelFile.exists(reference) { return reference }
        if reference.contains("/") || pathExtensions.contains(where: { reference.lowercased().hasSuffix("." + $0) }) {
            // A relative path is also tried below each root (a pipeline's project folder).
            var searched = [reference]
            if !reference.hasPrefix("/") {
                for root in roots {
                    let path = URL(fileURLWithPath: root).appendingPathComponent(reference).path
                    if FileManager.default.fileExists(atPath: path) { return path }
                    searched.append(path)
                }
            }
            throw GraphError_modelNotFound(reference, searched: searched)
        }
        var directories: [String] = []
        if let env = ProcessInfo.processInfo.environment["FRAMEGRAPH_MODELS"] { directories.append(env) }
        for root in [""] + roots.map({ $0.hasSuffix("/") ? $0 : $0 + "/" }) {
            directories.append("\(root)models/cache")
            directories.append("\(root)models/\(reference)")
        }
        var searched: [String] = []
        for d in directories {
            for ext in extensions {
                let path = "\(d)/\(reference).\(ext)"
                searched.append(path)
                if FileManager.default.fileExists(atPath: path) { return path }
            }
        }
        throw GraphError_modelNotFound(reference, searched: searched)
    }

    /// Imports the model at `path` into the graph IR (format by extension). A MetalTensor `.plist`
    /// takes its `.json` and `.bin` from beside it and is imported with `metalTensor` options
    /// (precision, every layer as an output); other formats ignore them.
    public static func load(path: String, limits: ModelLimits = .standard,
                            metalTensor: MetalTensorImporter.Options = .init()) throws -> NeuralGraph {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "tflite":
            return try TFLiteImporter.load(path: path, limits: limits)
        case "onnx":
            return try ONNXImporter.load(path: path, limits: limits)
        case "plist":
            return try MetalTensorImporter.load(path: path, options: metalTensor, limits: limits)
        default:
            throw ModelError.malformed(file: path, reason: "unknown model format (expected .\(extensions.joined(separator: ", .")))", offset: nil)
        }
    }

    private static func GraphError_modelNotFound(_ reference: String, searched: [String]) -> ModelError {
        ModelError.malformed(file: reference, reason: "model not found (looked for \(searched.joined(separator: ", ")); "
                             + "run scripts/test.sh (it fetches the MediaPipe models and builds efficientnet_lite0) or give a path", offset: nil)
    }
}
