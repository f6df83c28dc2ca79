import Foundation
import NeuralGraph
import Testing
import XNNPACKRuntime

/// Small graphs run through XNNPACK (and the native kernels) against plain reference loops.
@Suite struct PredictorTests {
    /// Deterministic pseudo-random floats in −1…1.
    func values(_ count: Int, seed: UInt64) -> [Float] {
        var s = seed
        return (0..<count).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: s >> 11) % 2000) / 1000 - 1
        }
    }

    /// Reference NHWC convolution with OHWI filters, TensorFlow SAME or VALID padding.
    func referenceConv(_ x: [Float], _ inShape: [Int], _ w: [Float], _ wShape: [Int], _ b: [Float],
                       stride: Int, same: Bool, outShape: [Int], depthwise: Bool = false) -> [Float] {
        let (h, wi, c) = (inShape[1], inShape[2], inShape[3])
        let (kh, kw) = (wShape[1], wShape[2])
        let (oh, ow, oc) = (outShape[1], outShape[2], outShape[3])
        let padTop = same ? max(0, (oh - 1) * stride + kh - h) / 2 : 0
        let padLeft = same ? max(0, (ow - 1) * stride + kw - wi) / 2 : 0
        var out = [Float](repeating: 0, count: oh * ow * oc)
        for y in 0..<oh { for xo in 0..<ow { for o in 0..<oc {
            var sum = b.isEmpty ? 0 : b[o]
            for ky in 0..<kh { for kx in 0..<kw {
                let iy = y * stride + ky - padTop, ix = xo * stride + kx - padLeft
                guard iy >= 0, iy < h, ix >= 0, ix < wi else { continue }
                if depthwise {
                    sum += x[(iy * wi + ix) * c + o] * w[(ky * kw + kx) * oc + o]
                } else {
                    for i in 0..<c { sum += x[(iy * wi + ix) * c + i] * w[((o * kh + ky) * kw + kx) * c + i] }
                }
            } }
            out[(y * ow + xo) * oc + o] = sum
        } } }
        return out
    }

    func maxDiff(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
    }

    @Test(arguments: [(1, true), (2, true), (1, false), (2, false)])
    func convolutionMatchesTheReference(stride: Int, same: Bool) throws {
        let inShape = [1, 9, 11, 3], wShape = [4, 3, 3, 3]
        let oh = same ? (9 + stride - 1) / stride : (9 - 3) / stride + 1
        let ow = same ? (11 + stride - 1) / stride : (11 - 3) / stride + 1
        let outShape = [1, oh, ow, 4]
        let x = values(9 * 11 * 3, seed: 1), w = values(4 * 27, seed: 2), b = values(4, seed: 3)
        var g = NeuralGraph()
        let input = g.addTensor(TensorValue(name: "x", shape: inShape))
        let filter = g.addTensor(TensorValue(name: "w", shape: wShape, constant: ConstantStorage(floats: w)))
        let bias = g.addTensor(TensorValue(name: "b", shape: [4], constant: ConstantStorage(floats: b)))
        let output = g.addTensor(TensorValue(name: "y", shape: outShape))
        g.nodes = [NeuralNode(operation: .conv2d(ConvolutionParameters(strideH: stride, strideW: stride, padding: same ? .same : .valid)),
                              inputs: [input, filter, bias], outputs: [output], name: "conv")]
        g.inputs = [input]
        g.outputs = [output]
        let y = try Predictor(graph: g).predict([x])[0]
        let expected = referenceConv(x, inShape, w, wShape, b, stride: stride, same: same, outShape: outShape)
        #expect(maxDiff(y, expected) < 1e-5)
    }

    @Test func depthwiseWithFusedRelu6AndNativeConcat() throws {
        let inShape = [1, 8, 8, 5]
        let x = values(8 * 8 * 5, seed: 4).map { $0 * 8 }, w = values(9 * 5, seed: 5), b = values(5, seed: 6)
        var g = NeuralGraph()
        let input = g.addTensor(TensorValue(name: "x", shape: inShape))
        let filter = g.addTensor(TensorValue(name: "w", shape: [1, 3, 3, 5], constant: ConstantStorage(floats: w)))
        let bias = g.addTensor(TensorValue(name: "b", shape: [5], constant: ConstantStorage(floats: b)))
        let dw = g.addTensor(TensorValue(name: "dw", shape: [1, 8, 8, 5]))
        let cat = g.addTensor(TensorValue(name: "cat", shape: [1, 8, 8, 10]))
        let out = g.addTensor(TensorValue(name: "out", shape: [1, 8, 8, 10]))
        g.nodes = [
            NeuralNode(operation: .depthwiseConv2d(ConvolutionParameters(padding: .same, activation: .relu6)),
                       inputs: [input, filter, bias], outputs: [dw], name: "dw"),
            NeuralNode(operation: .concatenation(axis: -1, activation: .none), inputs: [dw, input], outputs: [cat], name: "cat"),
            NeuralNode(operation: .tanh, inputs: [cat], outputs: [out], name: "tanh"),
        ]
        g.inputs = [input]
        g.outputs = [out]
        let d = referenceConv(x, inShape, w, [1, 3, 3, 5], b, stride: 1, same: true, outShape: [1, 8, 8, 5], depthwise: true)
            .map { min(max($0, 0), 6) }
        var expected: [Float] = []
        for p in 0..<64 { expected += d[(p * 5)..<(p * 5 + 5)]; expected += x[(p * 5)..<(p * 5 + 5)] }
        // The depthwise convolution in XNNPACK or in FrameGraph's own kernel; the rest natively either way.
        for (kernels, plan) in [(Predictor.ConvolutionKernels.xnnpack, "xnnpack(1 ops) → native(CONCATENATION) → native(TANH)"),
                                (.own, "own(DEPTHWISE_CONV_2D) → native(CONCATENATION) → native(TANH)")] {
            let predictor = try Predictor(graph: g, options: .init(convolutions: kernels))
            #expect(predictor.planSummary == plan)
            let y = try predictor.predict([x])[0]
            #expect(maxDiff(y, expected.map { Foundation.tanh($0) }) < 1e-5, "\(kernels)")
        }
    }

    @Test func wrongInputSizeIsRejected() throws {
        var g = NeuralGraph()
        let input = g.addTensor(TensorValue(name: "x", shape: [1, 4, 4, 1]))
        let out = g.addTensor(TensorValue(name: "y", shape: [1, 4, 4, 1]))
        g.nodes = [NeuralNode(operation: .relu, inputs: [input], outputs: [out], name: "relu")]
        g.inputs = [input]
        g.outputs = [out]
        #expect(throws: ModelError.inputMismatch(input: "x", expected: "16 values [1, 4, 4, 1]", got: "9 values")) {
            _ = try Predictor(graph: g).predict([[Float](repeating: 0, count: 9)])
        }
    }
}
