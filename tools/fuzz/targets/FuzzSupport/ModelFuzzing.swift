import NeuralGraph
import XNNPACKRuntime

/// What the model fuzz targets do with an imported graph: the resource checks the loaders make
/// (with a small budget, so the fuzzer does not spend its time allocating), then a compile and one
/// prediction, which is where a graph that passed import must never crash.
public enum ModelFuzzing {
    /// A budget small enough for fast executions and big enough for the seed models.
    public static let limits = ModelLimits(maxFileBytes: 16 << 20, memoryBudgetBytes: 64 << 20)

    public static func exercise(_ graph: NeuralGraph, fileName: String) {
        do {
            try graph.checkResources(limits, file: fileName)
            _ = graph.flops
            let predictor = try Predictor(graph: graph, options: .init(threads: 1))
            try predictor.predict()
        } catch {
            // A typed error is the right answer to a bad model.
        }
    }
}
