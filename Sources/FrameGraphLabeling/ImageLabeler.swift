import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphModels
import FrameGraphNetwork
import ModelDeployment
import NeuralGraph
import XNNPACKRuntime

/// A classifier model file on disk, as ML Kit's `LocalModel(path:)`: a `.tflite` with metadata, an
/// `.onnx` with labels in its metadata properties, or any classifier with a `NAME.labels.txt` beside it.
public struct LocalModel: Sendable, Equatable {
    public let path: String
    public init(path: String) { self.path = path }
}

/// An image labeler's settings, with ML Kit's defaults and rules.
public struct ImageLabelerOptions: Sendable {
    public var localModel: LocalModel
    /// Labels below this confidence are left out. Nil (the default): the model's own threshold from
    /// its metadata, and 0 when it has none (ML Kit's rule).
    public var confidenceThreshold: Float?
    /// At most this many labels, best first (default 10, as ML Kit).
    public var maxResultCount = 10
    /// The largest centred square of the image (true) or the whole image stretched (false, ML Kit's).
    public var centreCrop = false
    /// Inference threads.
    public var threads = 1
    /// Softmax over the scores: nil (auto: when they do not already sum to 1), on or off.
    public var softmax: Bool?
    /// Where the model is found (a name along its search path, an archive, a hosted collection);
    /// default: the standard model service.
    public var models = ModelService()

    public init(localModel: LocalModel, confidenceThreshold: Float? = nil, maxResultCount: Int = 10) {
        self.localModel = localModel
        self.confidenceThreshold = confidenceThreshold
        self.maxResultCount = maxResultCount
    }
}

/// One label found in an image: its text (from the model's labels; "class N" without them), the
/// confidence, and the index of the model's output it comes from.
public struct ImageLabel: Sendable, Equatable, Codable {
    public let text: String
    public let confidence: Float
    public let index: Int
}

/// ML Kit's image labeler on FrameGraph: `results(in:)` (synchronous), `process(_:completion:)`
/// and `process(_:) async`. One labeler may be used from several threads: predictions are
/// serialised (one at a time, in the order the calls take the labeler's lock).
///
/// ```swift
/// let labeler = try ImageLabeler(options: ImageLabelerOptions(localModel: LocalModel(path: "models/cache/efficientnet_lite0.onnx")))
/// for label in try labeler.results(inImageAt: "photo.jpg") { print(label.text, label.confidence) }
/// ```
public final class ImageLabeler: @unchecked Sendable {
    public let options: ImageLabelerOptions
    /// What the model says about itself (labels, normalisation, threshold).
    public let info: ClassifierInfo
    /// The threshold in force: the option, else the model's, else 0.
    public let threshold: Float
    private let state: Protected<(predictor: Predictor, input: ModelInput, decoder: ClassificationDecoder)>

    public init(options: ImageLabelerOptions) throws {
        self.options = options
        // A file, an archive (.fgarchive) or a hosted model (collection:NAME/ENTRY, from this machine's cache).
        let path = try options.models.resolve(options.localModel.path).path
        let graph = try options.models.graph(at: path)
        let info = try ClassifierInfo.read(modelAt: path, graph: graph)
        self.info = info
        let decoder = info.decoder(threshold: options.confidenceThreshold, maxResults: options.maxResultCount, softmax: options.softmax)
        threshold = decoder.minScore
        let predictor = try Predictor(graph: graph, options: .init(threads: options.threads))
        let shape = predictor.inputInfo(0).shape
        guard shape.count == 4, shape[0] == 1, shape[3] == 3 else {
            throw ModelError.inputMismatch(input: predictor.inputInfo(0).name, expected: "an RGB image [1, H, W, 3]", got: "\(shape)")
        }
        let normalization = InputNormalization.forQuantizedInput(predictor.inputInfo(0)) ?? info.normalization ?? .unit
        let input = ModelInput(width: shape[2], height: shape[1], channels: 3, normalization: normalization,
                               fit: options.centreCrop ? .centreCrop : .stretch)
        let outputs = (0..<predictor.outputCount).map { (predictor.outputInfo($0).name, predictor.outputInfo($0).shape) }
        _ = try decoder.negotiate(outputs: outputs, input: FrameDescription(format: .rgb24, width: shape[2], height: shape[1]),
                                  node: (path as NSString).lastPathComponent)
        state = Protected((predictor, input, decoder))
    }

    /// The labels of one image (any 8-bit frame: rgb24, yuv420p …).
    public func results(in image: Frame) throws -> [ImageLabel] {
        try state.withLock { s in
            try s.input.fill(s.predictor.input(0), from: image)
            try s.predictor.predict()
            let found = try s.decoder.decode(s.predictor, for: image)?.results?.classifications ?? []
            return found.map { ImageLabel(text: $0.label, confidence: $0.confidence, index: $0.index) }
        }
    }

    /// The labels of a photo file (the first picture of anything FFmpeg reads; a video's is turned
    /// upright by its display matrix, a photo's EXIF orientation is not applied).
    public func results(inImageAt path: String) throws -> [ImageLabel] {
        let reader = try MediaReader(path: path, options: .init())
        guard let frame = try reader.nextFrame() else { throw GraphError.io(path: path, reason: "holds no picture") }
        return try results(in: frame)
    }

    /// Labels `image` on another thread and calls `completion` there.
    public func process(_ image: Frame, completion: @escaping @Sendable (Result<[ImageLabel], any Error>) -> Void) {
        Thread.detachNewThread { [self] in completion(Result { try self.results(in: image) }) }
    }

    /// Labels `image` without blocking the caller's thread.
    public func process(_ image: Frame) async throws -> [ImageLabel] {
        try await withCheckedThrowingContinuation { continuation in
            process(image) { continuation.resume(with: $0) }
        }
    }
}

extension ImageLabelerOptions {
    /// The options of the `label` node type (and the `framegraph label` command's defaults).
    public enum Specs {
        public static let model = NodeOption.text("model", default: "efficientnet_lite0",
                                                  "classifier model (.tflite with metadata, .onnx with labels in metadata_props, or NAME.labels.txt beside it)")
        public static let threshold = NodeOption<Double?>.number("threshold", optional: 0...1,
                                                                 "labels below this confidence are left out (default: the model's metadata threshold, else 0)")
        public static let maxResults = NodeOption.int("max-results", default: 10, 1...1000, "at most this many labels, best first")
        public static let crop = NodeOption<Bool>.choice("crop", [("whole", false), ("centre", true), ("center", true)], default: "whole",
                                                   "whole (the frame stretched, ML Kit's) or centre (the largest centred square)")
        public static let softmax = ClassificationDecoder.OptionSpecs.softmax
        public static let threads = NetworkNode.OptionSpecs.threads
        public static let fallback = NetworkNode.OptionSpecs.fallback
        public static let all = [model.spec, threshold.spec, maxResults.spec, crop.spec, softmax.spec, threads.spec, fallback.spec]
    }
}

extension NetworkNode {
    /// An image labeler as a node (`label`): a network node whose decoder and input follow the
    /// model's metadata and ML Kit's rules (see ``ImageLabelerOptions``). Reads the model's labels,
    /// normalisation and threshold now, so a damaged model fails before the first frame.
    public static func labeler(name: String, model: String, models: ModelService, threshold: Float?, maxResults: Int, centreCrop: Bool,
                               softmax: Bool?, threads: Int, fallback: String? = nil, warn: @escaping @Sendable (String) -> Void) throws -> NetworkNode {
        let resolved: ResolvedModel
        do {
            resolved = try models.resolve(model, fallback: fallback, warn: warn)
        } catch let error as ModelError {
            throw NetworkNodeError(node: name, error: error)
        } catch let error as DeploymentError {
            throw GraphError.invalidOption(node: name, option: "model", reason: error.description)
        }
        let path = resolved.path
        let info: ClassifierInfo
        do { info = try ClassifierInfo.read(modelAt: path) } catch let error as ModelError {
            throw NetworkNodeError(node: name, error: error)
        }
        if info.labels.isEmpty {
            warn("node '\(name)': \((path as NSString).lastPathComponent) has no labels (no packed labels file, no labels metadata, no "
                 + "\(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent).labels.txt): results carry class indices only")
        }
        let decoder = info.decoder(threshold: threshold, maxResults: maxResults, softmax: softmax)
        let node = NetworkNode(name: name, model: ModelReference.isCollection(model) ? model : path, decoder: decoder,
                               options: .init(threads: threads, normalization: info.normalization, fit: centreCrop ? .centreCrop : .stretch,
                                              fallback: fallback))
        node.models = models
        node.resolvedModel = resolved
        node.warn = warn
        node.decoderForModel = { newPath in
            let info = try ClassifierInfo.read(modelAt: newPath)
            return (info.decoder(threshold: threshold, maxResults: maxResults, softmax: softmax), info.normalization)
        }
        return node
    }
}
