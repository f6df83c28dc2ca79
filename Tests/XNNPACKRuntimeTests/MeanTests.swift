import NeuralGraph
import Testing
import XNNPACKRuntime

/// MEAN over height and width without kept dimensions ([N, H, W, C] → [N, C], a classifier's head)
/// runs inside XNNPACK (global average pooling, then a reshape), with the averages of the definition.
@Suite struct MeanTests {
    @Test func aMeanWithoutKeptDimensionsRunsInXNNPACK() throws {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 3, 4, 5]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 5]))
        g.nodes = [NeuralNode(operation: .mean(axes: [1, 2], keepDims: false), inputs: [x], outputs: [y], name: "mean")]
        g.inputs = [x]
        g.outputs = [y]
        try g.validate()
        let p = try Predictor(graph: g)
        #expect(p.planSummary.contains("xnnpack") && !p.planSummary.contains("native"), "\(p.planSummary)")
        let input = p.input(0)
        for i in 0..<input.count { input.pointer[i] = Float(i % 17) - 3 }
        try p.predict()
        let out = p.output(0)
        for c in 0..<5 {
            var sum: Float = 0
            for pixel in 0..<12 { sum += Float((pixel * 5 + c) % 17) - 3 }
            #expect(abs(out.pointer[c] - sum / 12) < 1e-5)
        }
    }
}
