import CFrameGraphKernels
import Foundation
import NeuralGraph
import ONNXImport
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// An inverted-residual block — expansion (1×1), depthwise, projection (1×1) — run band by band
/// (`fg_banded_block_part`, ``BandedBlockGroup``).
@Suite struct BandedBlockTests {
    /// Random shapes, kernels, strides, paddings, epilogues, band sizes, row ranges and blocks (with
    /// and without the expansion, with and without the projection and its residual): the banded pass
    /// gives the bits of the kernels run one after the other over whole tensors, in both builds, and
    /// writes only the rows it is given.
    @Test func bandsGiveTheBitsOfTheKernelsOneAfterTheOther() {
        var seed: UInt64 = 2024
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        var compared = 0, reused = 0, kinds = Set<String>()
        for caseIndex in 0..<120 {
            let batch = int(1...2), h = int(1...17), w = int(1...15), k = int(1...20), n = int(1...40), m = int(1...30)
            let kernel = [1, 3, 5][int(0...2)], stride = int(1...2), dilation = int(0...4) == 0 ? 2 : 1
            let pad = int(0...(kernel / 2) * dilation)
            let reach = (kernel - 1) * dilation + 1
            guard h + 2 * pad >= reach, w + 2 * pad >= reach else { continue }
            let outH = (h + 2 * pad - reach) / stride + 1, outW = (w + 2 * pad - reach) / stride + 1
            let expands = int(0...2) > 0, projects = int(0...1) == 1
            let c = expands ? n : k
            let input = pseudoRandomValues(batch * h * w * k, seed: &seed)
            let we = pseudoRandomValues(n * k, seed: &seed), be = pseudoRandomValues(n, seed: &seed)
            let wd = pseudoRandomValues(kernel * kernel * c, seed: &seed), bd = pseudoRandomValues(c, seed: &seed)
            let wp = pseudoRandomValues(m * c, seed: &seed), bp = pseudoRandomValues(m, seed: &seed)
            let outC = projects ? m : c
            let residual = pseudoRandomValues(batch * outH * outW * outC, seed: &seed), slopes = pseudoRandomValues(max(n, m), seed: &seed)
            var pe = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
            fg_conv_pack(we, be, Int32(k), Int32(n), &pe)
            var pd = [Float](repeating: .nan, count: fg_dwconv_packed_count(Int32(kernel * kernel), Int32(c)))
            fg_dwconv_pack(wd, bd, Int32(kernel * kernel), Int32(c), &pd)
            var pp = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(c), Int32(m)))
            fg_conv_pack(wp, bp, Int32(c), Int32(m), &pp)
            var g = fg_conv_geometry(batch: Int32(batch), in_h: Int32(h), in_w: Int32(w), in_c: Int32(c), kernel_h: Int32(kernel),
                                     kernel_w: Int32(kernel), stride_h: Int32(stride), stride_w: Int32(stride),
                                     dilation_h: Int32(dilation), dilation_w: Int32(dilation), pad_top: Int32(pad), pad_left: Int32(pad),
                                     out_h: Int32(outH), out_w: Int32(outW))
            let expansionTail = int(0...2), withResidual = int(0...1) == 1
            let bandRows = expands ? reach + int(0...2) * stride + (int(0...3) == 0 ? h : 0) : 1
            let middleRows = projects ? int(1...4) : 0
            let rows = batch * outH
            let first = int(0...1) == 0 ? 0 : int(0...(rows - 1)), end = int(0...1) == 0 ? rows : int(first...rows)
            let kind = (expands ? "expand+" : "") + "depthwise" + (projects ? "+project" : "")
            kinds.insert(kind)
            let label = "case \(caseIndex): \(kind), batch \(batch) \(h)×\(w)×\(k)→\(n)→\(m), kernel \(kernel) stride \(stride) "
                + "dilation \(dilation) pad \(pad), band \(bandRows) rows, middle \(middleRows) rows, output rows \(first)..<\(end)"
            #expect(fg_banded_block_band_rows(&g, 1) == reach, "\(label): the smallest band is one window high")
            for simd: Int32 in [0, 1] {
                slopes.withUnsafeBufferPointer { s in
                    residual.withUnsafeBufferPointer { r in
                        var ee = fg_conv_epilogue(min1: -1, max1: 1.5, residual: nil, residual_stride: 0, residual_channels: 0,
                                                  min2: -.infinity, max2: .infinity, prelu_slopes: expansionTail == 1 ? s.baseAddress : nil,
                                                  hard_swish: expansionTail == 2 ? 1 : 0)
                        // The residual goes to the block's last convolution.
                        let residualHere = withResidual ? r.baseAddress : nil
                        var ed = fg_conv_epilogue(min1: 0, max1: 6, residual: projects ? nil : residualHere,
                                                  residual_stride: projects || !withResidual ? 0 : c,
                                                  residual_channels: projects || !withResidual ? 0 : Int32(c),
                                                  min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
                        let ep = fg_conv_epilogue(min1: -.infinity, max1: .infinity, residual: residualHere,
                                                  residual_stride: withResidual ? m : 0, residual_channels: withResidual ? Int32(m) : 0,
                                                  min2: -2, max2: 2, prelu_slopes: nil, hard_swish: expansionTail == 2 ? 1 : 0)
                        var dwInput = input
                        if expands {
                            dwInput = [Float](repeating: .nan, count: batch * h * w * n)
                            fg_pointwise_conv(input, batch * h * w, Int32(k), pe, Int32(n), &dwInput, &ee, simd)
                        }
                        var depthwise = [Float](repeating: .nan, count: batch * outH * outW * c)
                        fg_dwconv_part(dwInput, &g, pd, &depthwise, &ed, first, end, simd)
                        var reference = depthwise
                        if projects {
                            reference = [Float](repeating: .nan, count: batch * outH * outW * m)
                            let pixels = (end - first) * outW
                            if pixels > 0 {
                                var p = ep
                                p.residual = p.residual.map { $0 + first * outW * m }
                                depthwise.withUnsafeBufferPointer { dbuf in
                                    reference.withUnsafeMutableBufferPointer { out in
                                        fg_pointwise_conv(dbuf.baseAddress! + first * outW * c, pixels, Int32(c), pp, Int32(m),
                                                          out.baseAddress! + first * outW * m, &p, simd)
                                    }
                                }
                            }
                        }
                        var band = [Float](repeating: .nan, count: bandRows * w * c)
                        var middle = [Float](repeating: .nan, count: max(1, middleRows * outW * c))
                        var banded = [Float](repeating: .nan, count: reference.count)
                        pe.withUnsafeBufferPointer { peb in
                            pp.withUnsafeBufferPointer { ppb in
                                withUnsafePointer(to: ee) { eep in
                                    withUnsafePointer(to: ep) { epp in
                                        var xs = fg_pointwise_stage(packed: peb.baseAddress, k: Int32(k), n: Int32(n), epilogue: eep)
                                        var ps = fg_pointwise_stage(packed: ppb.baseAddress, k: Int32(c), n: Int32(m), epilogue: epp)
                                        withUnsafePointer(to: &xs) { x in
                                            withUnsafePointer(to: &ps) { p in
                                                fg_banded_block_part(input, expands ? x : nil, &g, pd, &ed, projects ? p : nil, &banded,
                                                                     &band, bandRows, &middle, middleRows, first, end, simd)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        let mismatches = zip(reference, banded).filter { $0.bitPattern != $1.bitPattern }.count
                        #expect(mismatches == 0, "\(label) simd \(simd): \(mismatches) of \(reference.count) values differ")
                        let written = banded.filter { !$0.isNaN }.count
                        #expect(written == (end - first) * outW * outC, "\(label): \(written) values written")
                        compared += written
                    }
                }
            }
            if expands, (bandRows - reach) / stride + 1 < outH { reused += 1 }
        }
        #expect(compared > 50_000)
        #expect(reused > 10, "the cases move rows from one band to the next")
        #expect(kinds.count == 4, "every kind of block: \(kinds.sorted())")
    }

    /// EfficientNet-Lite0 (which the setup builds): its blocks run in bands where an intermediate
    /// tensor is large (the 112×112 blocks: the depthwise input of 1.6 MB, the expansion of 4.8 MB,
    /// more than twice any L2 measured here), the 7×7 ones never, and the plan gives what XNNPACK's
    /// plan gives, on one thread and on two.
    @Test func efficientNetsLargeBlocksRunBandedAndKeepTheirValues() throws {
        guard let path = TestEnvironment.mediaPipeModel("efficientnet_lite0.onnx") else {
            Issue.record("models/cache/efficientnet_lite0.onnx is missing: run scripts/test.sh (the setup builds it)")
            return
        }
        let graph = try ONNXImporter.load(path: path)
        let fused = try Predictor(graph: graph, options: .init(convolutions: .own))
        let banded = fused.planSummary.components(separatedBy: "DEPTHWISE_CONV_2D+CONV_2D").count - 1
        #expect(banded >= 2, "\(banded) banded blocks in: \(fused.planSummary)")
        #expect(fused.planSummary.contains("CONV_2D+DEPTHWISE_CONV_2D+CONV_2D"), "the 112×112 expansion banded: \(fused.planSummary)")
        // The 7×7 blocks' expansions (7×7×1152 floats) stay in the caches: two kernels, one after the other.
        #expect(banded < 16, "every block banded: \(fused.planSummary)")
        let parallel = try Predictor(graph: graph, options: .init(threads: 2, convolutions: .own))
        // On two threads a block of fewer than 8 output rows per thread runs as separate kernels,
        // which split them by channels; the 112×112 blocks stay banded.
        let bandedOnTwo = parallel.planSummary.components(separatedBy: "DEPTHWISE_CONV_2D+CONV_2D").count - 1
        #expect(bandedOnTwo >= 2 && bandedOnTwo <= banded, "\(bandedOnTwo) banded blocks on two threads, \(banded) on one")
        var seed: UInt64 = 5
        let inputs = (0..<fused.inputCount).map { pseudoRandomValues(fused.input($0).count, seed: &seed) }
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
