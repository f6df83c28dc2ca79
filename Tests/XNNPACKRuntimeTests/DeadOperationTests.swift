import NeuralGraph
import Testing
import XNNPACKRuntime

/// Regression test for the first crash tools/fuzz/run.sh tflite found: a model whose convolution
/// writes a tensor nobody reads (and that is no graph output) made XNNPACK assert
/// (`setup_convolution_operator: output_data != NULL`). Dead operations are now removed before the
/// graph is compiled.
@Suite struct DeadOperationTests {
    @Test func anOperationWhoseOutputNobodyReadsIsRemovedAndThePredictionRuns() async throws {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 4, 4, 2]))
        let w = g.addTensor(TensorValue(name: "w", shape: [3, 1, 1, 2], constant: ConstantStorage(floats: [1, 0, 0, 1, 1, 1])))
        let dead = g.addTensor(TensorValue(name: "dead", shape: [1, 4, 4, 3]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 4, 4, 2]))
        g.nodes = [
            NeuralNode(operation: .conv2d(ConvolutionParameters()), inputs: [x, w], outputs: [dead], name: "dead-conv"),
            NeuralNode(operation: .relu, inputs: [x], outputs: [y], name: "relu"),
        ]
        g.inputs = [x]
        g.outputs = [y]
        try g.validate()
        #expect(g.removingDeadOperations().nodes.map(\.name) == ["relu"])
        let predictor = try Predictor(graph: g)
        let input = predictor.input(0)
        for i in 0..<input.count { input.pointer[i] = Float(i % 5) - 2 }
        try predictor.predict()
        let out = predictor.output(0)
        #expect((0..<out.count).allSatisfy { out.pointer[$0] == max(0, Float($0 % 5) - 2) })
        // The asynchronous variant gives the same result.
        for i in 0..<out.count { out.pointer[i] = -1 }
        try await predictor.predictAsync()
        #expect((0..<out.count).allSatisfy { out.pointer[$0] == max(0, Float($0 % 5) - 2) })
    }
}
