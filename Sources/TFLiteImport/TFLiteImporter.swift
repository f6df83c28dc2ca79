import Foundation
import NeuralGraph

/// Imports TensorFlow Lite models (`.tflite` FlatBuffers, such as MediaPipe's) into the ``NeuralGraph``
/// IR, with a bounds-checked FlatBuffers reader of its own.
///
/// What it does:
/// - checks the `TFL3` file identifier and reads the first subgraph (the metadata says when there are more);
/// - copies constant buffers into aligned ``ConstantStorage``; float16 constants become float32, and a
///   DEQUANTIZE of a constant float16 buffer is folded away (its output becomes a float32 constant);
///   DENSIFY of a sparse constant is folded away too (expanded at import, TFLiteSparsity);
/// - maps each operator to a ``NeuralOperation``, moving shape, axis and padding constants into the
///   operation's parameters so node inputs are data tensors only;
/// - refuses quantized models (``ModelError/quantizedModel(file:tensor:)``), reports every unsupported
///   operator at once with counts (``ModelError/unsupportedOperations(file:operations:)``), and checks
///   every shape with ``NeuralGraph/validate()``.
///
/// ```swift
/// let graph = try TFLiteImporter.load(path: "models/selfie_segmentation.tflite")
/// print(graph.tensors[graph.inputs[0]].shape)   // [1, 256, 256, 3]
/// ```
public enum TFLiteImporter: ModelImporter {
    /// Loads a model from `bytes`; `fileName` names it in error messages.
    public static func load(bytes: [UInt8], fileName: String) throws(ModelError) -> NeuralGraph {
        let result = try check(bytes: bytes, fileName: fileName)
        if let failure = result.failure { throw failure }
        guard let graph = result.graph else { throw ModelError.malformed(file: fileName, reason: "nothing was imported", offset: nil) }
        return graph
    }

    /// Imports the model and says what became of each operator; unsupported operators are reported
    /// in ``ImportCheck/failure`` (with every operator's outcome) instead of thrown, damage is thrown.
    public static func check(bytes: [UInt8], fileName: String) throws(ModelError) -> ImportCheck {
        guard bytes.count >= 8 else {
            throw ModelError.malformed(file: fileName, reason: "the file is \(bytes.count) bytes, too short for a TFLite model",
                                       offset: 0)
        }
        let identifier = bytes[4..<8]
        guard Array(identifier) == Array("TFL3".utf8) else {
            let shown = identifier.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
                ? "'\(String(decoding: identifier, as: UTF8.self))'"
                : identifier.map { String(format: "%02x", $0) }.joined(separator: " ")
            throw ModelError.malformed(file: fileName,
                                       reason: "file identifier is \(shown), expected 'TFL3' (not a TFLite model)",
                                       offset: 4)
        }
        let reader = FlatBufferReader(bytes: bytes)
        do {
            var builder = try TFLiteGraphBuilder(model: TFLiteModelFile(reader: reader), fileName: fileName)
            let graph: NeuralGraph
            do {
                graph = try builder.build()
            } catch let error as ModelError {
                guard case .unsupportedOperations = error else { throw error }
                return ImportCheck(operators: builder.operators, graph: nil, failure: error)
            }
            try graph.validate()
            return ImportCheck(operators: builder.operators, graph: graph, failure: nil)
        } catch let error as FlatBufferError {
            throw ModelError.malformed(file: fileName, reason: error.reason, offset: error.offset)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError.malformed(file: fileName, reason: "\(error)", offset: nil)
        }
    }
}
