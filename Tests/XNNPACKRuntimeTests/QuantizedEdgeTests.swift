import Foundation
import NeuralGraph
import Testing
@testable import XNNPACKRuntime

/// Quantized models with scales this XNNPACK's integer kernels do not take (it would assert while
/// creating the operator, found by the TFLite fuzz target) run in float32 with their outputs rounded
/// instead; values that are not a tensor's exact dequantized integers (NaN, out of range) never trap
/// FrameGraph's own integer kernels.
@Suite struct QuantizedEdgeTests {
    /// x (uint8, scale 1) → 1×1 convolution (uint8 weights, scale `weightScale`) → y (uint8, scale 1).
    static func convolution(weightScale: Float) -> NeuralGraph {
        var g = NeuralGraph()
        let q = Quantization(scale: 1, zeroPoint: 0)
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 2, 2, 1], elementType: .uint8, quantization: q))
        let weights = ConstantStorage(copying: UnsafeRawBufferPointer(start: [UInt8(200)], count: 1), elementType: .uint8)
        let w = g.addTensor(TensorValue(name: "w", shape: [1, 1, 1, 1], elementType: .uint8, constant: weights,
                                        quantization: Quantization(scale: weightScale, zeroPoint: 0)))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 2, 2, 1], elementType: .uint8, quantization: q))
        g.nodes = [NeuralNode(operation: .conv2d(ConvolutionParameters()), inputs: [x, w], outputs: [y], name: "conv")]
        g.inputs = [x]
        g.outputs = [y]
        return g
    }

    @Test func scalesOutsideXNNPACKsRangeRunInFloatRounded() throws {
        let tiny = Self.convolution(weightScale: 1e-12)  // 1 × 1e-12 / 1 < 2⁻³²
        #expect(XNNPACKStage.quantizedScaleProblem(tiny.nodes[0], in: tiny) != nil)
        let p = try Predictor(graph: tiny, options: .init(threads: 1))
        for i in 0..<4 { p.input(0).pointer[i] = Float(i * 80) }
        try p.predict()
        #expect((0..<4).allSatisfy { p.output(0).pointer[$0] == 0 })  // 240 × 200 × 1e-12 rounds to 0
        let fine = Self.convolution(weightScale: 0.01)
        #expect(XNNPACKStage.quantizedScaleProblem(fine.nodes[0], in: fine) == nil)
        let q = try Predictor(graph: fine, options: .init(threads: 1))
        for i in 0..<4 { q.input(0).pointer[i] = Float(i) }
        try q.predict()
        #expect((0..<4).map { q.output(0).pointer[$0] } == [0, 2, 4, 6])  // i × 200 × 0.01
    }

    @Test func ownIntegerKernelsTakeAnyValue() throws {
        // A quantized softmax (FrameGraph's LiteRT-exact kernel) fed NaN, ±infinity and huge values.
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 4], elementType: .int8, quantization: Quantization(scale: 0.1, zeroPoint: 3)))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 4], elementType: .int8, quantization: Quantization(scale: 1e-30, zeroPoint: -128)))
        g.nodes = [NeuralNode(operation: .softmax(beta: 1), inputs: [x], outputs: [y], name: "softmax")]
        g.inputs = [x]
        g.outputs = [y]
        let p = try Predictor(graph: g, options: .init(threads: 1))
        for (i, v) in [Float.nan, .infinity, -.infinity, 1e30].enumerated() { p.input(0).pointer[i] = v }
        try p.predict()
        #expect((0..<4).allSatisfy { p.output(0).pointer[$0].isFinite })
    }
}
