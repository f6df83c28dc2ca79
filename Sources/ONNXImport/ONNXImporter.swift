import Foundation
import NeuralGraph

/// Imports ONNX models (`.onnx` protobuf files, such as PyTorch exports) into the ``NeuralGraph`` IR,
/// with a bounds-checked protobuf reader of its own.
///
/// What it does:
/// - reads the ModelProto's graph and the default domain's opset;
/// - converts NCHW to NHWC at import: 4-D activations get NHWC shapes, axes and pads are permuted,
///   weights are re-laid out the TFLite way (conv OIHW → OHWI, depthwise → [1, H, W, C×m], transposed
///   conv IOHW → OHWI, Gemm/MatMul → [O, I]); no transposes run at inference. Models with NHWC inputs
///   behind a Transpose(perm [0, 3, 1, 2]) (tf2onnx exports) keep their NHWC input and output shapes:
///   the NCHW ↔ NHWC transposes become aliases;
/// - decodes float32/float16/int32/int64 initializers (float16 becomes float32), folds
///   BatchNormalization into the convolution before it, and folds Constant/Identity/shape arithmetic;
/// - needs static shapes (a symbolic batch dimension is fixed to 1), computes every output shape and
///   checks it against the model's value_info, then checks the graph with ``NeuralGraph/validate()``;
/// - reports every unsupported operator at once with counts (``ModelError/unsupportedOperations(file:operations:)``)
///   and damaged files as ``ModelError/malformed(file:reason:offset:)`` with the byte offset.
///
/// The graph's inputs and outputs are NHWC: an ONNX input [1, 3, 224, 224] becomes [1, 224, 224, 3].
///
/// ```swift
/// let graph = try ONNXImporter.load(path: "models/colorizer/colorizer.onnx")
/// print(graph.tensors[graph.inputs[0]].shape)   // [1, 256, 256, 1]
/// ```
public enum ONNXImporter: ModelImporter {
    /// The model's `metadata_props` (key → value), read without decoding its graph.
    public static func metadataProperties(bytes: [UInt8], fileName: String) throws(ModelError) -> [String: String] {
        do {
            let model = try ONNXModelProto(ProtobufReader(bytes: bytes), readingGraph: false)
            return Dictionary(model.metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        } catch {
            throw ModelError.malformed(file: fileName, reason: error.reason, offset: error.offset)
        }
    }

    /// Loads a model from `bytes`; `fileName` names it in error messages.
    public static func load(bytes: [UInt8], fileName: String) throws(ModelError) -> NeuralGraph {
        let result = try check(bytes: bytes, fileName: fileName)
        if let failure = result.failure { throw failure }
        guard let graph = result.graph else { throw ModelError.malformed(file: fileName, reason: "nothing was imported", offset: nil) }
        return graph
    }

    /// Imports the model and says what became of each node; unsupported operators are reported in
    /// ``ImportCheck/failure`` (with every node's outcome) instead of thrown, damage is thrown.
    public static func check(bytes: [UInt8], fileName: String) throws(ModelError) -> ImportCheck {
        guard !bytes.isEmpty else { throw ModelError.malformed(file: fileName, reason: "the file is empty", offset: 0) }
        let hint = looksLikeText(bytes) ? " — the file looks like text, not a binary ONNX protobuf" : ""
        do {
            let model = try ONNXModelProto(ProtobufReader(bytes: bytes))
            guard model.graph != nil else {
                throw ModelError.malformed(file: fileName, reason: "the model has no graph (ModelProto.graph is missing)\(hint)", offset: 0)
            }
            var builder = try ONNXGraphBuilder(model: model, fileName: fileName)
            let graph: NeuralGraph
            do {
                graph = try builder.build()
            } catch let error as ModelError {
                guard case .unsupportedOperations = error else { throw error }
                return ImportCheck(operators: builder.operators, graph: nil, failure: error)
            }
            try graph.validate()
            return ImportCheck(operators: builder.operators, graph: graph, failure: nil)
        } catch let error as ProtobufError {
            throw ModelError.malformed(file: fileName, reason: error.reason + hint, offset: error.offset)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError.malformed(file: fileName, reason: "\(error)", offset: nil)
        }
    }

    /// The operator types the importer maps: the default domain's, and onnxruntime's com.microsoft
    /// QOperators (named with their domain).
    public static var supportedOperators: [String] {
        (ONNXGraphBuilder.supportedOperators.union(["QLinearConv", "QLinearMatMul"])).sorted()
            + ONNXGraphBuilder.microsoftQOperators.sorted().map { "com.microsoft:\($0)" }
    }

    /// Whether the first bytes are all printable ASCII or whitespace.
    static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        bytes.prefix(64).allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }
}
