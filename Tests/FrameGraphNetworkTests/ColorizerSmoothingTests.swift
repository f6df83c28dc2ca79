import FrameGraph
import FrameGraphNetwork
import NeuralGraph
import Testing
import XNNPACKRuntime

/// The colorize node's temporal smoothing, on a tiny stand-in model whose a/b are (L', 2·L') of its
/// normalised input L': blending, and the reset on the first frame and on a scene cut.
@Suite struct ColorizerSmoothingTests {
    func model() throws -> Predictor {
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "L", shape: [1, 4, 4, 1]))
        let w = g.addTensor(TensorValue(name: "w", shape: [2, 1, 1, 1], constant: ConstantStorage(floats: [1, 2])))
        let y = g.addTensor(TensorValue(name: "ab", shape: [1, 4, 4, 2]))
        g.nodes = [NeuralNode(operation: .conv2d(ConvolutionParameters()), inputs: [x, w], outputs: [y], name: "conv")]
        g.inputs = [x]
        g.outputs = [y]
        return try Predictor(graph: g)
    }

    /// Runs one prediction on a uniform input and returns the decoded (a, b) at pixel (0, 0).
    func step(_ p: Predictor, _ decoder: ColorizerDecoder, input value: Float) throws -> (Float, Float) {
        let input = p.input(0)
        for i in 0..<input.count { input.pointer[i] = value }
        try p.predict()
        let ab = try #require(try decoder.decode(p, for: Frame.make(.gray8, width: 4, height: 4)))
        return (ab.floatRow(0, plane: 0)[0], ab.floatRow(0, plane: 1)[0])
    }

    @Test func smoothingBlendsAndResetsOnSceneCuts() throws {
        let p = try model()
        // Input scale 0.02 (L/50 − 1): an input change of 0.1 is 5 L units, of 0.3 is 15.
        let decoder = ColorizerDecoder(smoothing: 0.6, sceneCut: 6, inputScale: 0.02)
        _ = try decoder.negotiate(outputs: [("ab", [1, 4, 4, 2])], input: FrameDescription(format: .gray8, width: 4, height: 4), node: "c")
        let first = try step(p, decoder, input: 0.1)   // first frame: as predicted
        #expect(abs(first.0 - 0.1) < 1e-6 && abs(first.1 - 0.2) < 1e-6)
        let second = try step(p, decoder, input: 0.2)  // ΔL 5 ≤ 6: 0.6 × previous + 0.4 × new
        #expect(abs(second.0 - (0.6 * 0.1 + 0.4 * 0.2)) < 1e-6 && abs(second.1 - (0.6 * 0.2 + 0.4 * 0.4)) < 1e-6)
        let third = try step(p, decoder, input: 0.5)   // ΔL 15 > 6: a scene cut, the history restarts
        #expect(abs(third.0 - 0.5) < 1e-6 && abs(third.1 - 1.0) < 1e-6)
        let off = ColorizerDecoder(smoothing: 0)
        _ = try off.negotiate(outputs: [("ab", [1, 4, 4, 2])], input: FrameDescription(format: .gray8, width: 4, height: 4), node: "c")
        _ = try step(p, off, input: 0.1)
        #expect(try step(p, off, input: 0.2).0 == 0.2)
    }

    @Test func vividnessScalesTheSmoothedColour() throws {
        let p = try model()
        // The stand-in's a/b at input 0.2 are (0.2, 0.4); vividness v multiplies them by 2v.
        for (v, gain) in [(Float(0.5), Float(1)), (0.25, 0.5), (0, 0), (1, 2), (3, 2)] {   // 3 is clamped to 1
            let decoder = ColorizerDecoder(smoothing: 0.6, sceneCut: 6, vividness: v, inputScale: 0.02)
            _ = try decoder.negotiate(outputs: [("ab", [1, 4, 4, 2])], input: FrameDescription(format: .gray8, width: 4, height: 4), node: "c")
            let first = try step(p, decoder, input: 0.2)
            #expect(abs(first.0 - 0.2 * gain) < 1e-6 && abs(first.1 - 0.4 * gain) < 1e-6)
            // Smoothing blends the model's raw a/b; the gain applies to the blend: 0.6 × 0.2 + 0.4 × 0.3 = 0.24.
            let second = try step(p, decoder, input: 0.3)
            #expect(abs(second.0 - 0.24 * gain) < 1e-6 && abs(second.1 - 0.48 * gain) < 1e-6)
        }
        #expect(ColorizerDecoder().vividness == 0.5)
    }
}
