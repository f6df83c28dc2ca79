import CFrameGraphKernels
import Foundation
import TestSupport
import Testing

/// A depthwise convolution handing its output to a 1×1 convolution with bfloat16 products in
/// bfloat16 (`fg_dwconv_part_bf16`, then `fg_bconv_part_rounded`): the depthwise values are the float
/// kernel's rounded as `fg_bf16_round` rounds them, and the 1×1 convolution of those rows is
/// `fg_bconv_part` of the float rows, bit for bit, whole or split into parts.
@Suite struct BFloat16HandOffTests {
    /// Random geometries of the kernels the bfloat16 build takes (3×3 and 5×5, strides 1 and 2),
    /// odd sizes, channel counts with partial blocks of 16 and of 8, every epilogue, whole and split
    /// by rows and by channel blocks.
    @Test func theDepthwiseBFloat16OutputIsTheFloatOneRounded() throws {
        var probe = fg_conv_geometry(batch: 1, in_h: 8, in_w: 8, in_c: 16, kernel_h: 3, kernel_w: 3, stride_h: 1, stride_w: 1,
                                     dilation_h: 1, dilation_w: 1, pad_top: 1, pad_left: 1, out_h: 8, out_w: 8)
        try #require(fg_dwconv_bf16_supported(&probe) != 0, "this CPU has no full-width AVX-512 with BF16: the hand-off is not used here")
        var seed: UInt64 = 4343
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        var compared = 0
        for caseIndex in 0..<120 {
            let k = [3, 5][int(0...1)], stride = int(1...2)
            let batch = int(1...2), inH = int(1...23), inW = int(1...37), channels = int(1...70)
            let padTop = int(0...k / 2 + 1), padLeft = int(0...k / 2 + 1)
            let outH = max(1, (inH + 2 * padTop - k) / stride + 1), outW = max(1, (inW + 2 * padLeft - k) / stride + 1)
            let taps = k * k
            let o = RandomDepthwiseOperands(inputCount: batch * inH * inW * channels, taps: taps, channels: channels,
                                            outputCount: batch * outH * outW * channels, seed: &seed)
            let input = o.input
            var g = fg_conv_geometry(batch: Int32(batch), in_h: Int32(inH), in_w: Int32(inW), in_c: Int32(channels), kernel_h: Int32(k),
                                     kernel_w: Int32(k), stride_h: Int32(stride), stride_w: Int32(stride), dilation_h: 1, dilation_w: 1,
                                     pad_top: Int32(padTop), pad_left: Int32(padLeft), out_h: Int32(outH), out_w: Int32(outW))
            var packed = [Float](repeating: .nan, count: fg_dwconv_packed_count(Int32(taps), Int32(channels)))
            fg_dwconv_pack(o.weights, o.bias, Int32(taps), Int32(channels), &packed)
            let count = batch * outH * outW * channels, rows = fg_dwconv_rows(&g), blocks = fg_dwconv_blocks(&g)
            var float = [Float](repeating: .nan, count: count), rounded = [UInt16](repeating: 0xffff, count: count)
            var byRows = rounded, byBlocks = rounded
            o.withEpilogue(channels: channels) { e in
                fg_dwconv_part(input, &g, packed, &float, &e, 0, .max, 1)
                fg_dwconv_part_bf16(input, &g, packed, &rounded, &e, 0, .max, 0, .max)
                let cut = rows / 2
                fg_dwconv_part_bf16(input, &g, packed, &byRows, &e, 0, cut, 0, .max)
                fg_dwconv_part_bf16(input, &g, packed, &byRows, &e, cut, rows, 0, .max)
                let split = blocks / 2
                fg_dwconv_part_bf16(input, &g, packed, &byBlocks, &e, 0, rows, 0, split)
                fg_dwconv_part_bf16(input, &g, packed, &byBlocks, &e, 0, rows, split, blocks)
            }
            let expected = float.map(fg_bf16_round)
            let label = "case \(caseIndex): batch \(batch) input \(inH)×\(inW)×\(channels) kernel \(k) stride \(stride) pad \(padTop),\(padLeft) "
                + "residual \(o.residualChannels) tail \(o.tail)"
            #expect(zip(rounded, expected).filter { $0 != $1 }.count == 0, "\(label): whole")
            #expect(zip(byRows, expected).filter { $0 != $1 }.count == 0, "\(label): split by rows")
            #expect(zip(byBlocks, expected).filter { $0 != $1 }.count == 0, "\(label): split by channel blocks")
            compared += count
        }
        #expect(compared > 100_000)
    }

    /// Rows already rounded (even k, rows over several 12-row blocks and a ragged last one, every
    /// epilogue), whole and split by rows and by panels: fg_bconv_part's values bit for bit.
    @Test func theRoundedRowsGiveTheFloatRowsProducts() throws {
        try #require(fg_bconv_has_simd() != 0, "this CPU has no AVX-512 BF16")
        var seed: UInt64 = 4344
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        for caseIndex in 0..<60 {
            let rows = int(1...100), k = 2 * int(1...80), n = int(1...70)
            let floats = pseudoRandomValues(rows * k, seed: &seed).map { $0 * 2 }
            let rounded = floats.map(fg_bf16_round)
            let weights = pseudoRandomValues(n * k, seed: &seed).map { $0 * 0.3 }, bias = pseudoRandomValues(n, seed: &seed)
            let residualChannels = int(0...2) == 0 ? 0 : int(1...n)
            let residual = pseudoRandomValues(rows * max(residualChannels, 1), seed: &seed), slopes = pseudoRandomValues(n, seed: &seed)
            let tail = int(0...2)
            var packed = [UInt16](repeating: 0, count: fg_bconv_packed_count(Int32(k), Int32(n)))
            var biases = [Float](repeating: 0, count: fg_bconv_channels(Int32(n)))
            fg_bconv_pack(weights, bias, Int32(k), Int32(n), &packed, &biases)
            var scratch = [UInt16](repeating: 0, count: fg_bconv_scratch_count(Int32(k)))
            var expected = [Float](repeating: .nan, count: rows * n), whole = expected, parts = expected
            let panels = Int(fg_bconv_channels(Int32(n))) / 16
            residual.withUnsafeBufferPointer { r in
                slopes.withUnsafeBufferPointer { s in
                    var e = fg_conv_epilogue(min1: 0, max1: 6, residual: residualChannels > 0 ? r.baseAddress : nil,
                                             residual_stride: residualChannels, residual_channels: Int32(residualChannels),
                                             min2: -.infinity, max2: .infinity, prelu_slopes: tail == 1 ? s.baseAddress : nil,
                                             hard_swish: tail == 2 ? 1 : 0)
                    fg_bconv_part(floats, Int32(k), packed, biases, Int32(n), &expected, &e, &scratch, 0, rows, 0, .max, 1)
                    fg_bconv_part_rounded(rounded, Int32(k), packed, biases, Int32(n), &whole, &e, &scratch, 0, rows, 0, .max, 1)
                    let cut = rows / 24 * 12, split = panels / 2
                    fg_bconv_part_rounded(rounded, Int32(k), packed, biases, Int32(n), &parts, &e, &scratch, 0, cut, 0, split, 1)
                    fg_bconv_part_rounded(rounded, Int32(k), packed, biases, Int32(n), &parts, &e, &scratch, 0, cut, split, .max, 1)
                    fg_bconv_part_rounded(rounded, Int32(k), packed, biases, Int32(n), &parts, &e, &scratch, cut, rows, 0, .max, 1)
                }
            }
            let label = "case \(caseIndex): rows \(rows) k \(k) n \(n) residual \(residualChannels) tail \(tail)"
            #expect(zip(whole, expected).filter { $0.bitPattern != $1.bitPattern }.count == 0, "\(label): whole")
            #expect(zip(parts, expected).filter { $0.bitPattern != $1.bitPattern }.count == 0, "\(label): in parts")
        }
    }
}
