import CFrameGraphKernels
import Foundation
import NeuralGraph
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// FrameGraph's kernel for transposed convolutions whose kernel equals their stride
/// (`fg_upsample_conv_part`: MediaPipe's final segmentation layer), with and without the sigmoid
/// after it.
@Suite struct UpsamplingKernelTests {
    /// Random sizes (MediaPipe's 2×2 → 1 with 8 or 16 input channels, which takes the transposed
    /// tiles, and other kernels, channel counts and output channels), clamps and the sigmoid: the
    /// AVX2 and scalar builds agree bit for bit and follow the definition.
    @Test func theVectorKernelMatchesTheScalarOneBitForBitAndBothMatchTheDefinition() {
        var seed: UInt64 = 404
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        var compared = 0
        for caseIndex in 0..<60 {
            let mediaPipe = caseIndex % 2 == 0
            let batch = int(1...2), h = int(1...9), w = int(1...29)
            let cin = mediaPipe ? 8 * int(1...3) : int(1...20), oc = mediaPipe ? 1 : int(1...5)
            let kh = mediaPipe ? 2 : int(1...3), kw = mediaPipe ? 2 : int(1...3)
            let sigmoid = int(0...1) == 1
            let (lo, hi): (Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity) : (-1, 2)
            let input = pseudoRandomValues(batch * h * w * cin, seed: &seed).map { $0 * 3 }
            let weights = pseudoRandomValues(oc * kh * kw * cin, seed: &seed), bias = pseudoRandomValues(oc, seed: &seed)
            var g = fg_upsample_geometry(batch: Int32(batch), in_h: Int32(h), in_w: Int32(w), in_c: Int32(cin), out_c: Int32(oc),
                                         kernel_h: Int32(kh), kernel_w: Int32(kw), min: lo, max: hi, sigmoid: sigmoid ? 1 : 0)
            var packed = [Float](repeating: .nan, count: fg_upsample_conv_packed_count(Int32(cin), Int32(oc * kh * kw)))
            fg_upsample_conv_pack(weights, bias, Int32(oc), Int32(kh), Int32(kw), Int32(cin), &packed)
            let (oh, ow) = (h * kh, w * kw)
            func run(simd: Int32) -> [Float] {
                var out = [Float](repeating: .nan, count: batch * oh * ow * oc)
                fg_upsample_conv_part(input, &g, packed, &out, 0, .max, simd)
                return out
            }
            let vector = run(simd: 1), scalar = run(simd: 0)
            var worst = 0.0
            for b in 0..<batch { for y in 0..<oh { for x in 0..<ow { for o in 0..<oc {
                let (iy, dy, ix, dx) = (y / kh, y % kh, x / kw, x % kw)
                var v = Double(bias[o])
                for ci in 0..<cin {
                    v += Double(input[((b * h + iy) * w + ix) * cin + ci]) * Double(weights[((o * kh + dy) * kw + dx) * cin + ci])
                }
                v = min(max(v, Double(lo)), Double(hi))
                if sigmoid { v = 1 / (1 + Foundation.exp(-v)) }
                worst = max(worst, abs(v - Double(scalar[((b * oh + y) * ow + x) * oc + o])))
            } } } }
            let label = "batch \(batch) input \(h)×\(w)×\(cin) kernel \(kh)×\(kw) → \(oc) sigmoid \(sigmoid) clamp \(lo)…\(hi)"
            #expect(worst < 1e-5, "case \(caseIndex) (\(label)): scalar build differs from the definition by \(worst)")
            let mismatches = zip(vector, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "case \(caseIndex) (\(label)): \(mismatches) values differ between the AVX2 and scalar builds")
            #expect(!vector.contains { $0.isNaN }, "case \(caseIndex) (\(label)): an output was not written")
            compared += vector.count
        }
        #expect(compared > 20_000)
    }

    /// A 2×2 / 2 transposed convolution to one channel and its sigmoid run as one kernel and give
    /// what XNNPACK gives.
    @Test func mediaPipesLastLayerRunsAsOneKernelAndMatchesXNNPACK() throws {
        var seed: UInt64 = 8
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 12, 20, 16]))
        let w = g.addTensor(TensorValue(name: "w", shape: [1, 2, 2, 16], constant: ConstantStorage(floats: pseudoRandomValues(64, seed: &seed))))
        let b = g.addTensor(TensorValue(name: "b", shape: [1], constant: ConstantStorage(floats: [0.25])))
        let logits = g.addTensor(TensorValue(name: "logits", shape: [1, 24, 40, 1]))
        let mask = g.addTensor(TensorValue(name: "mask", shape: [1, 24, 40, 1]))
        g.nodes = [
            NeuralNode(operation: .transposeConv2d(ConvolutionParameters(strideH: 2, strideW: 2, padding: .same)), inputs: [x, w, b],
                       outputs: [logits], name: "segment"),
            NeuralNode(operation: .logistic, inputs: [logits], outputs: [mask], name: "sigmoid"),
        ]
        g.inputs = [x]
        g.outputs = [mask]
        try g.validate()
        let fused = try Predictor(graph: g, options: .init(convolutions: .own))
        let plain = try Predictor(graph: g, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary == "own(TRANSPOSE_CONV+LOGISTIC)")
        let inputs = [pseudoRandomValues(12 * 20 * 16, seed: &seed).map { $0 * 2 }]
        let a = try fused.predict(inputs)[0], c = try plain.predict(inputs)[0]
        let worst = zip(a, c).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-6, "fused vs XNNPACK: max |diff| \(worst)")
        #expect(a.contains { $0 < 0.1 } && a.contains { $0 > 0.9 }, "the case reaches both ends of the sigmoid")
    }
}
