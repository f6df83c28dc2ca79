import Foundation
import NeuralGraph
import Testing
@testable import ONNXImport

/// Conv (plain, grouped, depthwise), ConvTranspose and BatchNormalization folding, run through the
/// predictor and compared with NCHW reference loops.
struct ConvolutionTests {
    @Test func convWithStridePadsAndBias() throws {
        let xs = [1, 3, 7, 6], ws = [4, 3, 3, 3]
        let x = randomValues(xs.reduce(1, *), seed: 1), w = randomValues(ws.reduce(1, *), seed: 2), b: [Float] = [0.1, -0.2, 0.3, 0]
        var m = ONNXModelBuilder()
        m.input("x", xs)
        m.initializer("w", ws, w)
        m.initializer("b", [4], b)
        m.node("Conv", ["x", "w", "b"], ["y"], ["strides": .ints([2, 2]), "pads": .ints([1, 1, 1, 1]), "kernel_shape": .ints([3, 3])])
        m.output("y")
        let expected = referenceConv(x, xs, w, ws, bias: b, stride: (2, 2), pads: [1, 1, 1, 1])
        let graph = try ONNXImporter.load(bytes: m.bytes(), fileName: "conv.onnx")
        #expect(graph.tensors[graph.inputs[0]].shape == [1, 7, 6, 3])
        #expect(graph.tensors[graph.outputs[0]].shape == [1, 4, 3, 4])
        #expect(expected.shape == [1, 4, 4, 3])
        let y = try runONNX(m, [x])[0]
        #expect(maxAbsDiff(y, expected.values) < 1e-4)
    }

    @Test func convKnownValues() throws {
        // A 1×1 input channel, 2×2 kernel of ones: each output is the sum of a 2×2 window.
        var m = ONNXModelBuilder()
        m.input("x", [1, 1, 3, 3])
        m.initializer("w", [1, 1, 2, 2], [1, 1, 1, 1])
        m.node("Conv", ["x", "w"], ["y"])
        m.output("y")
        let y = try runONNX(m, [[1, 2, 3, 4, 5, 6, 7, 8, 9]])[0]
        #expect(y == [12, 16, 24, 28])
    }

    @Test func groupedDepthwiseAndDilatedSamePadding() throws {
        for (group, outChannels, dilation) in [(2, 4, 1), (4, 4, 1), (4, 8, 2)] {
            let xs = [1, 4, 6, 5], ws = [outChannels, 4 / group, 3, 3]
            let x = randomValues(xs.reduce(1, *), seed: 3), w = randomValues(ws.reduce(1, *), seed: 4)
            let b = randomValues(outChannels, seed: 5)
            var m = ONNXModelBuilder()
            m.input("x", xs)
            m.initializer("w", ws, w)
            m.initializer("b", [outChannels], b)
            m.node("Conv", ["x", "w", "b"], ["y"], ["group": .int(group), "auto_pad": .string("SAME_UPPER"),
                                                    "dilations": .ints([dilation, dilation])])
            m.output("y")
            let graph = try ONNXImporter.load(bytes: m.bytes(), fileName: "g.onnx")
            if group == 4 {
                guard case .depthwiseConv2d(let p) = graph.nodes[0].operation else { Issue.record("expected depthwise"); continue }
                #expect(p.depthMultiplier == outChannels / 4)
            }
            let pad = dilation  // (3 − 1)·d / 2 on each side
            let expected = referenceConv(x, xs, w, ws, bias: b, pads: [pad, pad, pad, pad], dilation: (dilation, dilation), group: group)
            let y = try runONNX(m, [x])[0]
            #expect(maxAbsDiff(y, expected.values) < 1e-4, "group \(group), \(outChannels) outputs")
        }
    }

    @Test func convTransposeStride2() throws {
        for (k, pads) in [(2, [0, 0, 0, 0]), (3, [1, 1, 1, 1]), (4, [1, 1, 1, 1])] {
            let xs = [1, 3, 4, 5], ws = [3, 2, k, k]
            let x = randomValues(xs.reduce(1, *), seed: 6), w = randomValues(ws.reduce(1, *), seed: 7), b: [Float] = [0.5, -0.5]
            var m = ONNXModelBuilder()
            m.input("x", xs)
            m.initializer("w", ws, w)
            m.initializer("b", [2], b)
            m.node("ConvTranspose", ["x", "w", "b"], ["y"], ["strides": .ints([2, 2]), "pads": .ints(pads)])
            m.output("y")
            let expected = referenceConvTranspose(x, xs, w, ws, bias: b, stride: (2, 2), pads: pads)
            let y = try runONNX(m, [x])[0]
            #expect(maxAbsDiff(y, expected.values) < 1e-4, "kernel \(k)")
        }
    }

    @Test func convTransposeWithOffCentreCropIsRefused() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 4, 4])
        m.initializer("w", [2, 2, 3, 3], randomValues(36, seed: 8))
        m.node("ConvTranspose", ["x", "w"], ["y"], ["strides": .ints([2, 2]), "pads": .ints([1, 1, 1, 1]), "output_padding": .ints([1, 1])])
        m.output("y")
        #expect {
            try ONNXImporter.load(bytes: m.bytes(), fileName: "ct.onnx")
        } throws: { error in
            guard case ModelError.unsupportedOperations(_, let ops) = error else { return false }
            return ops.count == 1 && ops[0].hasPrefix("ConvTranspose (pads [1, 1, 1, 1] with output_padding")
        }
    }

    @Test func batchNormFoldsIntoConvAndMatchesTheUnfoldedResult() throws {
        let xs = [1, 2, 5, 5], ws = [3, 2, 3, 3]
        let x = randomValues(50, seed: 9), w = randomValues(54, seed: 10)
        let scale: [Float] = [1.5, -0.5, 2], shift: [Float] = [0.1, 0.2, -0.3], mean: [Float] = [0.05, -0.1, 0.2], variance: [Float] = [0.5, 1, 2]
        var m = ONNXModelBuilder()
        m.input("x", xs)
        m.initializer("w", ws, w)
        for (name, v) in [("s", scale), ("t", shift), ("m", mean), ("v", variance)] { m.initializer(name, [3], v) }
        m.node("Conv", ["x", "w"], ["c"], ["pads": .ints([1, 1, 1, 1])])
        m.node("BatchNormalization", ["c", "s", "t", "m", "v"], ["y"], ["epsilon": .float(1e-3)])
        m.output("y")
        let graph = try ONNXImporter.load(bytes: m.bytes(), fileName: "bn.onnx")
        #expect(graph.nodes.count == 1, "BatchNormalization folded into the convolution")
        let conv = referenceConv(x, xs, w, ws, bias: nil, pads: [1, 1, 1, 1])
        let plane = 25
        let expected = conv.values.enumerated().map { i, v -> Float in
            let c = i / plane
            return (v - mean[c]) / (variance[c] + 1e-3).squareRoot() * scale[c] + shift[c]
        }
        let y = try runONNX(m, [x])[0]
        #expect(maxAbsDiff(y, expected) < 1e-4)
    }

    @Test func batchNormWithoutConvBecomesMulAdd() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 2, 2, 2])
        for (name, v) in [("s", [Float](arrayLiteral: 2, 3)), ("t", [1, -1]), ("m", [0, 1]), ("v", [1, 4])] { m.initializer(name, [2], v) }
        m.node("Relu", ["x"], ["r"])
        m.node("BatchNormalization", ["r", "s", "t", "m", "v"], ["y"], ["epsilon": .float(0)])
        m.output("y")
        let x: [Float] = [1, 2, -3, 4, 5, 6, 7, -8]
        let y = try runONNX(m, [x])[0]
        let expected: [Float] = [3, 5, 1, 9, 5, 6.5, 8, -2.5]
        #expect(maxAbsDiff(y, expected) < 1e-5)
    }
}
