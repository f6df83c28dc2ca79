import NeuralGraph
import Testing
import XNNPACKRuntime

/// DEPTH_TO_SPACE (TensorFlow's DCR order) on XNNPACK against the definition, and its shape checks.
@Suite struct DepthToSpaceTests {
    @Test func channelGroupsMoveIntoSpatialBlocks() throws {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 2, 3, 8]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 4, 6, 2]))
        g.nodes = [NeuralNode(operation: .depthToSpace(blockSize: 2), inputs: [x], outputs: [y], name: "d2s")]
        g.inputs = [x]
        g.outputs = [y]
        try g.validate()
        let p = try Predictor(graph: g)
        let input = p.input(0)
        for i in 0..<input.count { input.pointer[i] = Float(i) }
        try p.predict()
        let out = p.output(0)
        // out[h·2 + dy][w·2 + dx][c] = in[h][w][(dy·2 + dx)·2 + c]
        for h in 0..<2 { for w in 0..<3 { for dy in 0..<2 { for dx in 0..<2 { for c in 0..<2 {
            let o = ((h * 2 + dy) * 6 + (w * 2 + dx)) * 2 + c
            let i = (h * 3 + w) * 8 + (dy * 2 + dx) * 2 + c
            #expect(out.pointer[o] == Float(i))
        } } } } }
    }

    @Test func channelsNotDivisibleByTheBlockAreRefused() {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 2, 2, 6]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 4, 4, 1]))
        g.nodes = [NeuralNode(operation: .depthToSpace(blockSize: 2), inputs: [x], outputs: [y], name: "d2s")]
        g.inputs = [x]
        g.outputs = [y]
        #expect(throws: ModelError.self) { try g.validate() }
        g.nodes = [NeuralNode(operation: .depthToSpace(blockSize: 0), inputs: [x], outputs: [y], name: "d2s")]
        #expect(throws: ModelError.self) { try g.validate() }
    }
}
