import CFrameGraphKernels
import Foundation
import NeuralGraph
import TestSupport
import Testing
@testable import XNNPACKRuntime

/// FrameGraph's own depthwise convolution kernel (`fg_dwconv_part`) and the plans that use it.
@Suite struct DepthwiseKernelTests {
    /// Random geometries (the common 3×3 and 5×5 kernels with strides 1 and 2, which take the wide
    /// tiles, and any other kernel, stride and dilation), channel counts with and without a partial
    /// block, every epilogue: the AVX2 and scalar builds agree bit for bit, and the scalar build
    /// follows the definition (zeros outside the input) within 1e-4.
    @Test func theVectorKernelMatchesTheScalarOneBitForBitAndBothMatchTheDefinition() {
        var seed: UInt64 = 2024
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        var compared = 0, wide = 0
        for caseIndex in 0..<150 {
            let common = caseIndex % 3 != 2
            let kh = common ? [3, 5][int(0...1)] : int(1...6), kw = common ? kh : int(1...6)
            let sh = common ? int(1...2) : int(1...3), sw = common ? sh : int(1...3)
            let dh = common ? 1 : int(1...2), dw = common ? 1 : int(1...2)
            let batch = int(1...2), inH = int(1...23), inW = int(1...37), channels = int(1...45)
            let padTop = int(0...kh / 2 + 1), padLeft = int(0...kw / 2 + 1)
            let outH = max(1, (inH + 2 * padTop - dh * (kh - 1) - 1) / sh + 1), outW = max(1, (inW + 2 * padLeft - dw * (kw - 1) - 1) / sw + 1)
            if common && outW >= 8 { wide += 1 }
            let taps = kh * kw
            let o = RandomDepthwiseOperands(inputCount: batch * inH * inW * channels, taps: taps, channels: channels,
                                            outputCount: batch * outH * outW * channels, seed: &seed)
            let (input, weights, bias, slopes, residual) = (o.input, o.weights, o.bias, o.slopes, o.residual)
            let (residualChannels, tail, min1, max1) = (o.residualChannels, o.tail, o.min1, o.max1)
            let (min2, max2): (Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity) : (-0.5, 0.75)
            var g = fg_conv_geometry(batch: Int32(batch), in_h: Int32(inH), in_w: Int32(inW), in_c: Int32(channels), kernel_h: Int32(kh),
                                     kernel_w: Int32(kw), stride_h: Int32(sh), stride_w: Int32(sw), dilation_h: Int32(dh), dilation_w: Int32(dw),
                                     pad_top: Int32(padTop), pad_left: Int32(padLeft), out_h: Int32(outH), out_w: Int32(outW))
            var packed = [Float](repeating: .nan, count: fg_dwconv_packed_count(Int32(taps), Int32(channels)))
            fg_dwconv_pack(weights, bias, Int32(taps), Int32(channels), &packed)
            func run(simd: Int32) -> [Float] {
                var out = [Float](repeating: .nan, count: batch * outH * outW * channels)
                o.withEpilogue(channels: channels, min2: min2, max2: max2) { e in
                    fg_dwconv_part(input, &g, packed, &out, &e, 0, .max, simd)
                }
                return out
            }
            let vector = run(simd: 1), avx2 = run(simd: 2), scalar = run(simd: 0)
            var worst = 0.0
            for b in 0..<batch { for oy in 0..<outH { for ox in 0..<outW { for c in 0..<channels {
                var v = Double(bias[c])
                for ky in 0..<kh { for kx in 0..<kw {
                    let iy = oy * sh + ky * dh - padTop, ix = ox * sw + kx * dw - padLeft
                    guard iy >= 0, iy < inH, ix >= 0, ix < inW else { continue }
                    v += Double(input[((b * inH + iy) * inW + ix) * channels + c]) * Double(weights[(ky * kw + kx) * channels + c])
                } }
                let pixel = (b * outH + oy) * outW + ox
                v = min(max(v, Double(min1)), Double(max1))
                if c < residualChannels { v += Double(residual[pixel * channels + c]) }
                v = min(max(v, Double(min2)), Double(max2))
                if tail == 1, v <= 0 { v *= Double(slopes[c]) }
                if tail == 2 { v = v * min(max(v + 3, 0), 6) / 6 }
                worst = max(worst, abs(v - Double(scalar[pixel * channels + c])))
            } } } }
            let label = "batch \(batch) input \(inH)×\(inW)×\(channels) kernel \(kh)×\(kw) stride \(sh),\(sw) dilation \(dh),\(dw) "
                + "pad \(padTop),\(padLeft) residual \(residualChannels) tail \(tail) clamps \(min1)…\(max1), \(min2)…\(max2)"
            #expect(worst < 1e-4, "case \(caseIndex) (\(label)): scalar build differs from the definition by \(worst)")
            let mismatches = zip(vector, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "case \(caseIndex) (\(label)): \(mismatches) values differ between the widest vector and the scalar build")
            let avx2Mismatches = zip(avx2, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(avx2Mismatches == 0, "case \(caseIndex) (\(label)): \(avx2Mismatches) values differ between the AVX2 and scalar builds")
            #expect(!vector.contains { $0.isNaN }, "case \(caseIndex) (\(label)): an output was not written")
            compared += vector.count
        }
        #expect(compared > 100_000)
        #expect(wide > 30, "the cases exercise the wide tiles")
    }

    /// Rows split between parts (as threads split them) give the same values as one call.
    @Test func rowsSplitIntoPartsGiveTheSameValues() {
        var seed: UInt64 = 7
        let (h, w, c) = (19, 21, 24)
        let input = pseudoRandomValues(h * w * c, seed: &seed), weights = pseudoRandomValues(9 * c, seed: &seed), bias = pseudoRandomValues(c, seed: &seed)
        var g = fg_conv_geometry(batch: 1, in_h: Int32(h), in_w: Int32(w), in_c: Int32(c), kernel_h: 3, kernel_w: 3, stride_h: 1, stride_w: 1,
                                 dilation_h: 1, dilation_w: 1, pad_top: 1, pad_left: 1, out_h: Int32(h), out_w: Int32(w))
        var packed = [Float](repeating: 0, count: fg_dwconv_packed_count(9, Int32(c)))
        fg_dwconv_pack(weights, bias, 9, Int32(c), &packed)
        var e = fg_conv_epilogue(min1: 0, max1: 6, residual: nil, residual_stride: 0, residual_channels: 0,
                                 min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
        var whole = [Float](repeating: .nan, count: h * w * c), parts = whole
        fg_dwconv_part(input, &g, packed, &whole, &e, 0, .max, 1)
        #expect(fg_dwconv_rows(&g) == h)
        for first in stride(from: 0, to: h, by: 5) { fg_dwconv_part(input, &g, packed, &parts, &e, first, first + 5, 1) }
        #expect(zip(whole, parts).allSatisfy { $0.bitPattern == $1.bitPattern })
    }

    /// Channel blocks split between parts (as threads split a 7×7 layer) give the same bits as one
    /// call, in both builds, with a channel count that ends in a partial block and the wide tiles used.
    @Test func channelsSplitIntoBlocksGiveTheSameValues() {
        var seed: UInt64 = 8
        let (h, w, c) = (7, 9, 44)
        let input = pseudoRandomValues(h * w * c, seed: &seed), weights = pseudoRandomValues(25 * c, seed: &seed), bias = pseudoRandomValues(c, seed: &seed)
        let residual = pseudoRandomValues(h * w * c, seed: &seed)
        for stride in [1, 2] {
            let out = (h - 1) / stride + 1, outW = (w - 1) / stride + 1
            var g = fg_conv_geometry(batch: 1, in_h: Int32(h), in_w: Int32(w), in_c: Int32(c), kernel_h: 5, kernel_w: 5,
                                     stride_h: Int32(stride), stride_w: Int32(stride), dilation_h: 1, dilation_w: 1, pad_top: 2, pad_left: 2,
                                     out_h: Int32(out), out_w: Int32(outW))
            var packed = [Float](repeating: 0, count: fg_dwconv_packed_count(25, Int32(c)))
            fg_dwconv_pack(weights, bias, 25, Int32(c), &packed)
            let blocks = fg_dwconv_blocks(&g)
            #expect(blocks == 6, "44 channels are 6 blocks of 8")
            for simd: Int32 in [0, 1] {
                residual.withUnsafeBufferPointer { r in
                    var e = fg_conv_epilogue(min1: 0, max1: 6, residual: r.baseAddress, residual_stride: c, residual_channels: Int32(c),
                                             min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
                    var whole = [Float](repeating: .nan, count: out * outW * c), parts = whole
                    fg_dwconv_part(input, &g, packed, &whole, &e, 0, .max, simd)
                    for first in Swift.stride(from: 0, to: blocks, by: 4) {
                        fg_dwconv_part_channels(input, &g, packed, &parts, &e, 0, .max, first, min(first + 4, blocks), simd)
                    }
                    #expect(!parts.contains { $0.isNaN }, "stride \(stride) simd \(simd): a channel was not written")
                    #expect(zip(whole, parts).allSatisfy { $0.bitPattern == $1.bitPattern }, "stride \(stride) simd \(simd)")
                    // Rows and channels together: the lower half of the rows, the upper half of the blocks.
                    var corner = [Float](repeating: .nan, count: out * outW * c)
                    fg_dwconv_part_channels(input, &g, packed, &corner, &e, 0, out / 2, 3, blocks, simd)
                    for y in 0..<out { for x in 0..<outW { for ch in 0..<c {
                        let i = (y * outW + x) * c + ch
                        let inside = y < out / 2 && ch >= 24
                        #expect(inside ? corner[i].bitPattern == whole[i].bitPattern : corner[i].isNaN,
                                "stride \(stride) simd \(simd): pixel \(y),\(x) channel \(ch) \(inside ? "differs" : "was written")")
                    } } }
                }
            }
        }
    }

    /// A depthwise convolution (ReLU6) followed by an addition and a hard-swish runs as one kernel
    /// in the fused plan and gives what XNNPACK gives operation by operation; a depthwise
    /// convolution with multiplier 2 stays with XNNPACK.
    @Test func aDepthwiseConvolutionWithItsEpilogueRunsAsOneKernelAndMatchesXNNPACK() throws {
        var seed: UInt64 = 31
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 11, 13, 12]))
        let skip = g.addTensor(TensorValue(name: "skip", shape: [1, 11, 13, 12]))
        let w = g.addTensor(TensorValue(name: "w", shape: [1, 3, 3, 12], constant: ConstantStorage(floats: pseudoRandomValues(108, seed: &seed))))
        let b = g.addTensor(TensorValue(name: "b", shape: [12], constant: ConstantStorage(floats: pseudoRandomValues(12, seed: &seed))))
        let conv = g.addTensor(TensorValue(name: "conv", shape: [1, 11, 13, 12]))
        let sum = g.addTensor(TensorValue(name: "sum", shape: [1, 11, 13, 12]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 11, 13, 12]))
        let w2 = g.addTensor(TensorValue(name: "w2", shape: [1, 3, 3, 24], constant: ConstantStorage(floats: pseudoRandomValues(216, seed: &seed))))
        let doubled = g.addTensor(TensorValue(name: "doubled", shape: [1, 11, 13, 24]))
        g.nodes = [
            NeuralNode(operation: .depthwiseConv2d(ConvolutionParameters(padding: .same, activation: .relu6)), inputs: [x, w, b],
                       outputs: [conv], name: "dw"),
            NeuralNode(operation: .add(.none), inputs: [conv, skip], outputs: [sum], name: "add"),
            NeuralNode(operation: .hardSwish, inputs: [sum], outputs: [y], name: "hswish"),
            NeuralNode(operation: .depthwiseConv2d(ConvolutionParameters(padding: .same, depthMultiplier: 2)), inputs: [y, w2],
                       outputs: [doubled], name: "dw2"),
        ]
        g.inputs = [x, skip]
        g.outputs = [y, doubled]
        try g.validate()
        let fused = try Predictor(graph: g, options: .init(convolutions: .own))
        let plain = try Predictor(graph: g, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary == "own(DEPTHWISE_CONV_2D+ADD+HARD_SWISH) → xnnpack(1 ops)")
        #expect(plain.planSummary == "xnnpack(4 ops)")
        let inputs = [pseudoRandomValues(11 * 13 * 12, seed: &seed).map { $0 * 3 }, pseudoRandomValues(11 * 13 * 12, seed: &seed).map { $0 * 3 }]
        let a = try fused.predict(inputs), c = try plain.predict(inputs)
        for (i, (p, q)) in zip(a, c).enumerated() {
            let worst = zip(p, q).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst < 1e-5, "output \(i): fused kernel vs XNNPACK: max |diff| \(worst)")
        }
        #expect(a[0].contains { $0 < 0 } && a[0].contains { $0 > 3 }, "the case exercises hard-swish's curve and its linear part")
    }
}
