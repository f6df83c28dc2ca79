import NeuralGraph
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// `convolvingBeforeUpsampling`: a 1×1 convolution fed only by a bilinear upsampling runs before it,
/// over the smaller tensor, and gives the same values (the decoder of MediaPipe's selfie models).
@Suite struct ConvolutionBeforeUpsamplingTests {
    /// x [1, 8, 8, 24] → resize → [1, 16, 16, 24] → 1×1 conv (24 → 5, bias, `activation`) → y; with
    /// `exposeUpsampled` the upsampled tensor is a graph output too (a second reader: no swap).
    func graph(activation: FusedActivation = .none, exposeUpsampled: Bool = false, corners: (Bool, Bool) = (false, true),
               upsampled: [Int] = [1, 16, 16, 24]) -> NeuralGraph {
        var g = NeuralGraph()
        var seed: UInt64 = 3
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 8, 8, 24]))
        let u = g.addTensor(TensorValue(name: "u", shape: upsampled))
        let w = g.addTensor(TensorValue(name: "w", shape: [5, 1, 1, 24], constant: ConstantStorage(floats: pseudoRandomValues(120, seed: &seed))))
        let b = g.addTensor(TensorValue(name: "b", shape: [5], constant: ConstantStorage(floats: [0.5, -1, 2, 0, 0.25])))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, upsampled[1], upsampled[2], 5]))
        g.nodes = [
            NeuralNode(operation: .resizeBilinear(alignCorners: corners.0, halfPixelCenters: corners.1), inputs: [x], outputs: [u], name: "up"),
            NeuralNode(operation: .conv2d(ConvolutionParameters(padding: .same, activation: activation)), inputs: [u, w, b], outputs: [y], name: "conv"),
        ]
        g.inputs = [x]
        g.outputs = exposeUpsampled ? [y, u] : [y]
        return g
    }

    @Test(arguments: [(false, false), (true, false), (false, true)])
    func theConvolutionMovesBeforeTheUpsamplingAndGivesTheSameValues(corners: (Bool, Bool)) throws {
        let swapped = graph(corners: corners), kept = graph(exposeUpsampled: true, corners: corners)
        try swapped.validate()
        try kept.validate()
        let lowered = swapped.loweredForXNNPACK()
        #expect(lowered.nodes.map(\.operation.name) == ["CONV_2D", "RESIZE_BILINEAR"])
        #expect(lowered.tensors[lowered.nodes[0].outputs[0]].shape == [1, 8, 8, 5])
        #expect(lowered.nodes[1].outputs == swapped.outputs)
        #expect(kept.loweredForXNNPACK().nodes.map(\.operation.name) == ["RESIZE_BILINEAR", "CONV_2D"])
        var seed: UInt64 = 9
        let values = pseudoRandomValues(8 * 8 * 24, seed: &seed)
        let a = try Predictor(graph: swapped).predict([values])[0]
        let b = try Predictor(graph: kept).predict([values])[0]
        #expect(a.count == 16 * 16 * 5 && a.count == b.count)
        let worst = zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= 1e-5, "swapped and kept differ by \(worst)")
    }

    @Test func anActivationOrAShrinkingResizeKeepsTheOrder() throws {
        #expect(graph(activation: .relu).loweredForXNNPACK().nodes.map(\.operation.name) == ["RESIZE_BILINEAR", "CONV_2D"])
        let shrinking = graph(upsampled: [1, 4, 4, 24])
        try shrinking.validate()
        #expect(shrinking.loweredForXNNPACK().nodes.map(\.operation.name) == ["RESIZE_BILINEAR", "CONV_2D"])
    }
}
