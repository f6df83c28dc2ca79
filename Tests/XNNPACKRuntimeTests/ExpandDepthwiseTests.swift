import CFrameGraphKernels
import Foundation
import NeuralGraph
import ONNXImport
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// An expansion (1×1 convolution) and the depthwise convolution after it, run band by band
/// (`fg_expand_dwconv_part`, ``ExpandDepthwiseGroup``).
@Suite struct ExpandDepthwiseTests {
    /// Deterministic pseudo-random floats in −1…1.
    func values(_ count: Int, seed: inout UInt64) -> [Float] {
        (0..<count).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
        }
    }

    /// Random shapes, kernels, strides, paddings, epilogues, band sizes and row ranges: the banded
    /// pass gives the bits of the 1×1 convolution over the whole input followed by the depthwise
    /// convolution, in both builds, and writes only the rows it is given.
    @Test func bandsGiveTheBitsOfTheTwoPassesOneAfterTheOther() {
        var seed: UInt64 = 2024
        func int(_ range: ClosedRange<Int>) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int((seed >> 33) % UInt64(range.count))
        }
        var compared = 0, reused = 0
        for caseIndex in 0..<80 {
            let batch = int(1...2), h = int(1...17), w = int(1...15), k = int(1...20), n = int(1...40)
            let kernel = [1, 3, 5][int(0...2)], stride = int(1...2), dilation = int(0...4) == 0 ? 2 : 1
            let pad = int(0...(kernel / 2) * dilation)
            let reach = (kernel - 1) * dilation + 1
            let outH = max(1, (h + 2 * pad - reach) / stride + 1), outW = max(1, (w + 2 * pad - reach) / stride + 1)
            guard h + 2 * pad >= reach, w + 2 * pad >= reach else { continue }
            let input = values(batch * h * w * k, seed: &seed)
            let we = values(n * k, seed: &seed), be = values(n, seed: &seed)
            let wd = values(kernel * kernel * n, seed: &seed), bd = values(n, seed: &seed)
            let residual = values(batch * outH * outW * n, seed: &seed), slopes = values(n, seed: &seed)
            var pe = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
            fg_conv_pack(we, be, Int32(k), Int32(n), &pe)
            var pd = [Float](repeating: .nan, count: fg_dwconv_packed_count(Int32(kernel * kernel), Int32(n)))
            fg_dwconv_pack(wd, bd, Int32(kernel * kernel), Int32(n), &pd)
            var g = fg_conv_geometry(batch: Int32(batch), in_h: Int32(h), in_w: Int32(w), in_c: Int32(n), kernel_h: Int32(kernel),
                                     kernel_w: Int32(kernel), stride_h: Int32(stride), stride_w: Int32(stride),
                                     dilation_h: Int32(dilation), dilation_w: Int32(dilation), pad_top: Int32(pad), pad_left: Int32(pad),
                                     out_h: Int32(outH), out_w: Int32(outW))
            let expansionTail = int(0...2), withResidual = int(0...1) == 1
            let bandRows = reach + int(0...2) * stride + (int(0...3) == 0 ? h : 0)
            let rows = batch * outH
            let first = int(0...1) == 0 ? 0 : int(0...(rows - 1)), end = int(0...1) == 0 ? rows : int(first...rows)
            let label = "case \(caseIndex): batch \(batch) \(h)×\(w)×\(k)→\(n), kernel \(kernel) stride \(stride) dilation \(dilation) "
                + "pad \(pad), band \(bandRows) rows, output rows \(first)..<\(end)"
            #expect(fg_expand_dwconv_band_rows(&g, 1) == reach, "\(label): the smallest band is one window high")
            for simd: Int32 in [0, 1] {
                slopes.withUnsafeBufferPointer { s in
                    residual.withUnsafeBufferPointer { r in
                        var ee = fg_conv_epilogue(min1: -1, max1: 1.5, residual: nil, residual_stride: 0, residual_channels: 0,
                                                  min2: -.infinity, max2: .infinity, prelu_slopes: expansionTail == 1 ? s.baseAddress : nil,
                                                  hard_swish: expansionTail == 2 ? 1 : 0)
                        var ed = fg_conv_epilogue(min1: 0, max1: 6, residual: withResidual ? r.baseAddress : nil,
                                                  residual_stride: withResidual ? n : 0, residual_channels: withResidual ? Int32(n) : 0,
                                                  min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
                        var expanded = [Float](repeating: .nan, count: batch * h * w * n)
                        fg_pointwise_conv(input, batch * h * w, Int32(k), pe, Int32(n), &expanded, &ee, simd)
                        var reference = [Float](repeating: .nan, count: batch * outH * outW * n)
                        fg_dwconv_part(expanded, &g, pd, &reference, &ed, first, end, simd)
                        var band = [Float](repeating: .nan, count: bandRows * w * n)
                        var banded = [Float](repeating: .nan, count: reference.count)
                        fg_expand_dwconv_part(input, Int32(k), pe, &ee, &g, pd, &banded, &ed, &band, bandRows, first, end, simd)
                        let mismatches = zip(reference, banded).filter { $0.bitPattern != $1.bitPattern }.count
                        #expect(mismatches == 0, "\(label) simd \(simd): \(mismatches) of \(reference.count) values differ")
                        let written = banded.filter { !$0.isNaN }.count
                        #expect(written == (end - first) * outW * n, "\(label): \(written) values written")
                        compared += written
                    }
                }
            }
            if (bandRows - reach) / stride + 1 < outH { reused += 1 }
        }
        #expect(compared > 50_000)
        #expect(reused > 20, "the cases move rows from one band to the next")
    }

    /// EfficientNet-Lite0 (which the setup builds): its expansions and the depthwise convolutions
    /// after them run as one kernel where the expanded tensor is large (the first blocks), and the
    /// plan gives what the plan of separate kernels gives, on one thread and on two.
    @Test func efficientNetsLargeExpansionsRunBandedAndKeepTheirValues() throws {
        guard let path = TestEnvironment.mediaPipeModel("efficientnet_lite0.onnx") else {
            Issue.record("models/cache/efficientnet_lite0.onnx is missing: run scripts/test.sh (the setup builds it)")
            return
        }
        let graph = try ONNXImporter.load(path: path)
        let fused = try Predictor(graph: graph, options: .init(convolutions: .own))
        let banded = fused.planSummary.components(separatedBy: "own(CONV_2D+DEPTHWISE_CONV_2D)").count - 1
        #expect(banded >= 3, "\(banded) banded expansions in: \(fused.planSummary)")
        // The 7×7 blocks' expansions (7×7×1152 floats) stay in the caches: two kernels, one after the other.
        #expect(banded < 16, "every expansion banded: \(fused.planSummary)")
        let parallel = try Predictor(graph: graph, options: .init(threads: 2, convolutions: .own))
        var seed: UInt64 = 5
        let inputs = (0..<fused.inputCount).map { values(fused.input($0).count, seed: &seed) }
        let a = try fused.predict(inputs), p = try parallel.predict(inputs)
        let plain = try Predictor(graph: graph, options: .init(convolutions: .xnnpack)).predict(inputs)
        for (i, y) in plain.enumerated() {
            let scale = max(1, y.map { abs($0) }.max() ?? 1)
            let worst = zip(a[i], y).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst <= 1e-4 * scale, "output \(i): max |diff| against XNNPACK \(worst)")
            let threaded = zip(a[i], p[i]).map { abs($0 - $1) }.max() ?? .infinity
            #expect(threaded <= 1e-4 * scale, "output \(i), two threads: max |diff| \(threaded)")
        }
    }
}
