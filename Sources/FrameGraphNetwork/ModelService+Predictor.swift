import FrameGraphModels
import MetalTensorImport
import NeuralGraph
import XNNPACKRuntime

extension ModelService {
    /// A predictor for the model file at `path` (found already), imported within the service's
    /// limits (once per file, shared), compiled for `threads`, and warmed up with one prediction (so
    /// that the first real frame does not pay for first-touch memory). Model errors name `node`.
    /// `outputs` keeps only the outputs it accepts (and the operations they need:
    /// ``NeuralGraph/keepingOutputs(where:)``); default all. `batch` > 1: the graph with its batch
    /// dimension set to that many images (``NeuralGraph/batched(_:)``; throws when it takes none).
    public func predictor(at path: String, threads: Int, precision: Predictor.Precision = .float32,
                          metalTensor: MetalTensorImporter.Options = .init(), node: String,
                          outputs: ((TensorValue) -> Bool)? = nil, batch: Int = 1) throws -> Predictor {
        do {
            var metalTensor = metalTensor
            metalTensor.weights = try metalTensor.weights.map { try locate($0, what: "weights file") }  // a pipeline's paths are relative to it
            var g = try graph(at: path, metalTensor: metalTensor)
            if let outputs { g = g.keepingOutputs(where: outputs) }
            if batch > 1 { g = try g.batched(batch) }
            let p = try Predictor(graph: g, options: .init(threads: threads, precision: precision))
            try p.predict()
            return p
        } catch let error as ModelError {
            throw NetworkNodeError(node: node, error: error)
        }
    }

    /// ``predictor(at:threads:precision:metalTensor:node:)`` for a reference (a name or a path),
    /// found along the search path first.
    public func predictor(for reference: String, threads: Int, precision: Predictor.Precision = .float32,
                          metalTensor: MetalTensorImporter.Options = .init(), node: String,
                          outputs: ((TensorValue) -> Bool)? = nil) throws -> Predictor {
        let path: String
        do { path = try locate(reference) } catch { throw NetworkNodeError(node: node, error: error) }
        return try predictor(at: path, threads: threads, precision: precision, metalTensor: metalTensor, node: node, outputs: outputs)
    }
}

/// A network node's model could not be found, imported, compiled or run. The ``ModelError`` is kept
/// as it is (typed), with the node that owns the model.
public struct NetworkNodeError: Error, Sendable, CustomStringConvertible, Equatable {
    public let node: String
    public let error: ModelError
    public init(node: String, error: ModelError) {
        self.node = node
        self.error = error
    }
    public var description: String { "node '\(node)' failed: \(error.description)" }
}
