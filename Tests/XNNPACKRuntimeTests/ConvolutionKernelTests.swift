import CFrameGraphKernels
import Foundation
import NeuralGraph
import ONNXImport
import TestSupport
import Testing
import TFLiteImport
@testable import XNNPACKRuntime

/// FrameGraph's own convolution kernel (`fg_conv`, `fg_pointwise_conv`) and the fusion that hands it
/// the addition, channel pad and PReLU / hard-swish after a convolution.
@Suite struct ConvolutionKernelTests {
    /// One random case: shapes, epilogue, and the outputs of the widest vector build this CPU runs
    /// (AVX-512F where it pays), the AVX2 build and the scalar one, and of a double-precision
    /// reference.
    func runCase(seed start: UInt64) -> (vector: [Float], avx2: [Float], scalar: [Float], reference: [Double], label: String) {
        var seed = start
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        let rows = int(1...40), k = int(1...70), n = int(1...50)
        let input = pseudoRandomValues(rows * k, seed: &seed), weights = pseudoRandomValues(n * k, seed: &seed), bias = pseudoRandomValues(n, seed: &seed)
        let residualChannels = int(0...2) == 0 ? 0 : int(1...n)
        let residual = pseudoRandomValues(rows * max(residualChannels, 1), seed: &seed)
        let slopes = pseudoRandomValues(n, seed: &seed)
        let tail = int(0...2)  // 0 none, 1 PReLU, 2 hard-swish
        let (min1, max1): (Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity) : (0, 6)
        let (min2, max2): (Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity) : (-0.5, 0.75)
        var packed = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
        fg_conv_pack(weights, bias, Int32(k), Int32(n), &packed)
        func run(simd: Int32) -> [Float] {
            var out = [Float](repeating: .nan, count: rows * n)
            residual.withUnsafeBufferPointer { r in
                slopes.withUnsafeBufferPointer { s in
                    var e = fg_conv_epilogue(min1: min1, max1: max1, residual: residualChannels > 0 ? r.baseAddress : nil,
                                                  residual_stride: residualChannels, residual_channels: Int32(residualChannels),
                                                  min2: min2, max2: max2, prelu_slopes: tail == 1 ? s.baseAddress : nil,
                                                  hard_swish: tail == 2 ? 1 : 0)
                    fg_pointwise_conv(input, rows, Int32(k), packed, Int32(n), &out, &e, simd)
                }
            }
            return out
        }
        var reference = [Double](repeating: 0, count: rows * n)
        for r in 0..<rows {
            for c in 0..<n {
                var v = Double(bias[c])
                for i in 0..<k { v += Double(input[r * k + i]) * Double(weights[c * k + i]) }
                v = min(max(v, Double(min1)), Double(max1))
                if c < residualChannels { v += Double(residual[r * residualChannels + c]) }
                v = min(max(v, Double(min2)), Double(max2))
                if tail == 1, v <= 0 { v *= Double(slopes[c]) }
                if tail == 2 { v = v * min(max(v + 3, 0), 6) / 6 }
                reference[r * n + c] = v
            }
        }
        let label = "rows \(rows) k \(k) n \(n) residual \(residualChannels) tail \(tail) clamps \(min1)…\(max1), \(min2)…\(max2)"
        return (run(simd: 1), run(simd: 2), run(simd: 0), reference, label)
    }

    @Test func theVectorKernelMatchesTheScalarOneBitForBitAndBothMatchTheDefinition() {
        var compared = 0
        for caseIndex in 0..<120 {
            let (vector, avx2, scalar, reference, label) = runCase(seed: UInt64(caseIndex) &* 7919 &+ 17)
            let mismatches = zip(vector, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "case \(caseIndex) (\(label)): \(mismatches) values differ between the widest vector and the scalar build")
            let avx2Mismatches = zip(avx2, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(avx2Mismatches == 0, "case \(caseIndex) (\(label)): \(avx2Mismatches) values differ between the AVX2 and scalar builds")
            let worst = zip(scalar, reference).map { abs(Double($0) - $1) }.max() ?? .infinity
            #expect(worst < 1e-4, "case \(caseIndex) (\(label)): scalar build differs from the definition by \(worst)")
            compared += vector.count
        }
        #expect(compared > 50_000)
    }

    /// A single row (a layer over a 1×1 input: the face mesh's last one) takes four 16-channel panels
    /// at a time in the AVX2 build: with 9 panels and each epilogue, the same bits as the scalar build
    /// and the definition.
    @Test func aSingleRowTakesFourPanelsAtATimeAndKeepsItsValues() {
        var seed: UInt64 = 1404
        let (k, n) = (37, 140)
        let input = pseudoRandomValues(k, seed: &seed), weights = pseudoRandomValues(n * k, seed: &seed), bias = pseudoRandomValues(n, seed: &seed)
        let residual = pseudoRandomValues(n, seed: &seed), slopes = pseudoRandomValues(n, seed: &seed)
        var packed = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
        fg_conv_pack(weights, bias, Int32(k), Int32(n), &packed)
        for tail in 0...2 {
            for clamped in [false, true] {
                func run(simd: Int32) -> [Float] {
                    var out = [Float](repeating: .nan, count: n)
                    residual.withUnsafeBufferPointer { r in
                        slopes.withUnsafeBufferPointer { sl in
                            var e = fg_conv_epilogue(min1: clamped ? -2 : -.infinity, max1: clamped ? 2 : .infinity,
                                                     residual: r.baseAddress, residual_stride: n, residual_channels: Int32(n),
                                                     min2: -.infinity, max2: .infinity, prelu_slopes: tail == 1 ? sl.baseAddress : nil,
                                                     hard_swish: tail == 2 ? 1 : 0)
                            fg_pointwise_conv(input, 1, Int32(k), packed, Int32(n), &out, &e, simd)
                        }
                    }
                    return out
                }
                let vector = run(simd: 1), scalar = run(simd: 0)
                #expect(zip(vector, scalar).allSatisfy { $0.bitPattern == $1.bitPattern }, "tail \(tail) clamped \(clamped): builds differ")
                for c in 0..<n {
                    var v = Double(bias[c])
                    for i in 0..<k { v += Double(input[i]) * Double(weights[c * k + i]) }
                    if clamped { v = min(max(v, -2), 2) }
                    v += Double(residual[c])
                    if tail == 1, v <= 0 { v *= Double(slopes[c]) }
                    if tail == 2 { v = v * min(max(v + 3, 0), 6) / 6 }
                    #expect(abs(v - Double(scalar[c])) < 1e-4, "tail \(tail) clamped \(clamped) channel \(c)")
                }
            }
        }
    }

    /// A 1×1 convolution whose input is larger than half the core's L2 runs in several blocks of rows
    /// (equal in size, tiles of equal height in each), and one whose weights fill more than a quarter
    /// of it goes panel by panel instead of tile by tile: every row and channel still gets the
    /// scalar build's bits in each vector build, in the blocks' seams too.
    @Test(arguments: [(64, 24, fg_l2_bytes() / (64 * 4) + 5), (600, 300, 40)])
    func rowsInSeveralBlocksAndEitherOrderKeepTheirValues(k: Int, n: Int, rows: Int) {
        var seed: UInt64 = 2024
        let input = pseudoRandomValues(rows * k, seed: &seed), weights = pseudoRandomValues(n * k, seed: &seed), bias = pseudoRandomValues(n, seed: &seed)
        var packed = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
        fg_conv_pack(weights, bias, Int32(k), Int32(n), &packed)
        func run(simd: Int32) -> [Float] {
            var out = [Float](repeating: .nan, count: rows * n)
            var e = fg_conv_epilogue(min1: 0, max1: 6, residual: nil, residual_stride: 0, residual_channels: 0,
                                     min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
            fg_pointwise_conv(input, rows, Int32(k), packed, Int32(n), &out, &e, simd)
            return out
        }
        let scalar = run(simd: 0)
        for (name, simd) in [("widest vector", Int32(1)), ("AVX2", Int32(2))] {
            let differing = zip(run(simd: simd), scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(differing == 0, "\(differing) of \(rows * n) values differ between the \(name) and scalar builds (\(rows) rows)")
        }
        #expect(!scalar.contains { $0.isNaN })
    }

    /// A network's first layer on an image (1 or 3 channels, 3×3, moved by 1 or 2, padded, with a
    /// clamp and hard-swish), wide enough for the stem's runs of twelve and six pixels and the
    /// copied borders: every vector build gives the scalar build's bits, which follow the definition.
    @Test(arguments: [(1, 1, 16), (3, 2, 16), (3, 1, 24), (1, 2, 32), (3, 2, 5)])
    func imageStemsKeepTheirValuesInEveryBuild(inC: Int, stride: Int, n: Int) {
        var seed: UInt64 = UInt64(inC * 100 + stride * 10 + n)
        let (inH, inW, k3) = (9, 61, 3)
        let outH = (inH + 2 - k3) / stride + 1, outW = (inW + 2 - k3) / stride + 1, k = k3 * k3 * inC
        let input = pseudoRandomValues(inH * inW * inC, seed: &seed), weights = pseudoRandomValues(n * k, seed: &seed), bias = pseudoRandomValues(n, seed: &seed)
        var g = fg_conv_geometry(batch: 1, in_h: Int32(inH), in_w: Int32(inW), in_c: Int32(inC), kernel_h: 3, kernel_w: 3,
                                 stride_h: Int32(stride), stride_w: Int32(stride), dilation_h: 1, dilation_w: 1,
                                 pad_top: 1, pad_left: 1, out_h: Int32(outH), out_w: Int32(outW))
        var packed = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
        fg_conv_pack(weights, bias, Int32(k), Int32(n), &packed)
        func run(simd: Int32) -> [Float] {
            var out = [Float](repeating: .nan, count: outH * outW * n)
            var scratch = [Float](repeating: .nan, count: max(1, fg_conv_scratch_count(&g)))
            var e = fg_conv_epilogue(min1: -1, max1: 1.5, residual: nil, residual_stride: 0, residual_channels: 0,
                                     min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 1)
            fg_conv(input, &g, packed, Int32(n), &out, &e, &scratch, simd)
            return out
        }
        let scalar = run(simd: 0)
        for (name, simd) in [("widest vector", Int32(1)), ("AVX2", Int32(2))] {
            let differing = zip(run(simd: simd), scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(differing == 0, "\(differing) of \(scalar.count) values differ between the \(name) and scalar builds")
        }
        var worst = 0.0
        for oy in 0..<outH { for ox in 0..<outW { for c in 0..<n {
            var v = Double(bias[c])
            for ky in 0..<3 { for kx in 0..<3 {
                let iy = oy * stride + ky - 1, ix = ox * stride + kx - 1
                guard iy >= 0, iy < inH, ix >= 0, ix < inW else { continue }
                for i in 0..<inC { v += Double(input[(iy * inW + ix) * inC + i]) * Double(weights[((c * 3 + ky) * 3 + kx) * inC + i]) }
            } }
            v = min(max(v, -1), 1.5)
            v = v * min(max(v + 3, 0), 6) / 6
            worst = max(worst, abs(v - Double(scalar[(oy * outW + ox) * n + c])))
        } } }
        #expect(worst < 1e-4, "the scalar build differs from the definition by \(worst)")
    }

    /// Convolutions with windows (kernel sizes, strides, dilations, padding, batches): the AVX2 and
    /// scalar builds agree bit for bit and follow the definition (zeros outside the input).
    @Test func windowedConvolutionsMatchTheDefinitionInBothBuilds() {
        var seed: UInt64 = 99
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        var compared = 0
        for caseIndex in 0..<60 {
            let batch = int(1...2), inH = int(1...13), inW = int(1...13), inC = int(1...9), n = int(1...37)
            let kh = int(1...5), kw = int(1...5), sh = int(1...3), sw = int(1...3), dh = int(1...2), dw = int(1...2)
            let padTop = int(0...kh), padLeft = int(0...kw)
            let outH = max(1, (inH + 2 * padTop - dh * (kh - 1) - 1) / sh + 1), outW = max(1, (inW + 2 * padLeft - dw * (kw - 1) - 1) / sw + 1)
            let k = kh * kw * inC
            let input = pseudoRandomValues(batch * inH * inW * inC, seed: &seed), weights = pseudoRandomValues(n * k, seed: &seed), bias = pseudoRandomValues(n, seed: &seed)
            var g = fg_conv_geometry(batch: Int32(batch), in_h: Int32(inH), in_w: Int32(inW), in_c: Int32(inC), kernel_h: Int32(kh), kernel_w: Int32(kw),
                                     stride_h: Int32(sh), stride_w: Int32(sw), dilation_h: Int32(dh), dilation_w: Int32(dw),
                                     pad_top: Int32(padTop), pad_left: Int32(padLeft), out_h: Int32(outH), out_w: Int32(outW))
            var packed = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
            fg_conv_pack(weights, bias, Int32(k), Int32(n), &packed)
            func run(simd: Int32) -> [Float] {
                var out = [Float](repeating: .nan, count: batch * outH * outW * n)
                var scratch = [Float](repeating: .nan, count: max(1, fg_conv_scratch_count(&g)))
                var e = fg_conv_epilogue(min1: -.infinity, max1: .infinity, residual: nil, residual_stride: 0, residual_channels: 0,
                                              min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
                fg_conv(input, &g, packed, Int32(n), &out, &e, &scratch, simd)
                return out
            }
            let vector = run(simd: 1), avx2 = run(simd: 2), scalar = run(simd: 0)
            var worst = 0.0
            for b in 0..<batch { for oy in 0..<outH { for ox in 0..<outW { for c in 0..<n {
                var v = Double(bias[c])
                for ky in 0..<kh { for kx in 0..<kw {
                    let iy = oy * sh + ky * dh - padTop, ix = ox * sw + kx * dw - padLeft
                    guard iy >= 0, iy < inH, ix >= 0, ix < inW else { continue }
                    for i in 0..<inC {
                        v += Double(input[((b * inH + iy) * inW + ix) * inC + i]) * Double(weights[((c * kh + ky) * kw + kx) * inC + i])
                    }
                } }
                worst = max(worst, abs(v - Double(scalar[((b * outH + oy) * outW + ox) * n + c])))
            } } } }
            let label = "batch \(batch) input \(inH)×\(inW)×\(inC) kernel \(kh)×\(kw) stride \(sh),\(sw) dilation \(dh),\(dw) pad \(padTop),\(padLeft) n \(n)"
            #expect(worst < 1e-4, "case \(caseIndex) (\(label)): scalar build differs from the definition by \(worst)")
            let mismatches = zip(vector, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "case \(caseIndex) (\(label)): \(mismatches) values differ between the widest vector and the scalar build")
            let avx2Mismatches = zip(avx2, scalar).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(avx2Mismatches == 0, "case \(caseIndex) (\(label)): \(avx2Mismatches) values differ between the AVX2 and scalar builds")
            compared += vector.count
        }
        #expect(compared > 20_000)
    }

    /// Output panels split between parts (as threads split a 7×7 layer with many channels) give the
    /// same bits as one call, for a 1×1 and a 3×3 stride-2 convolution with a partial last panel.
    @Test func channelsSplitIntoPanelsGiveTheSameValues() {
        var seed: UInt64 = 77
        let (h, w, inC, n) = (7, 7, 24, 88)
        let input = pseudoRandomValues(h * w * inC, seed: &seed)
        for (kernel, stride) in [(1, 1), (3, 2)] {
            let pad = kernel / 2, out = (h + 2 * pad - kernel) / stride + 1, k = kernel * kernel * inC
            let weights = pseudoRandomValues(n * k, seed: &seed), bias = pseudoRandomValues(n, seed: &seed)
            var g = fg_conv_geometry(batch: 1, in_h: Int32(h), in_w: Int32(w), in_c: Int32(inC), kernel_h: Int32(kernel), kernel_w: Int32(kernel),
                                     stride_h: Int32(stride), stride_w: Int32(stride), dilation_h: 1, dilation_w: 1,
                                     pad_top: Int32(pad), pad_left: Int32(pad), out_h: Int32(out), out_w: Int32(out))
            var packed = [Float](repeating: .nan, count: fg_conv_packed_count(Int32(k), Int32(n)))
            fg_conv_pack(weights, bias, Int32(k), Int32(n), &packed)
            let panels = fg_conv_panels(Int32(n))
            #expect(panels == 6, "88 channels are 6 panels of 16")
            var scratch = [Float](repeating: .nan, count: max(1, fg_conv_scratch_count(&g)))
            var e = fg_conv_epilogue(min1: 0, max1: 6, residual: nil, residual_stride: 0, residual_channels: 0,
                                     min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
            for simd: Int32 in [0, 1] {
                var whole = [Float](repeating: .nan, count: out * out * n), parts = whole
                fg_conv(input, &g, packed, Int32(n), &whole, &e, &scratch, simd)
                for (first, end) in [(0, 2), (2, 5), (5, panels)] {
                    fg_conv_part_channels(input, &g, packed, Int32(n), &parts, &e, &scratch, 0, .max, first, end, simd)
                }
                #expect(!parts.contains { $0.isNaN }, "\(kernel)×\(kernel) simd \(simd): a channel was not written")
                #expect(zip(whole, parts).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(kernel)×\(kernel) simd \(simd)")
                var one = [Float](repeating: .nan, count: out * out * n)
                fg_conv_part_channels(input, &g, packed, Int32(n), &one, &e, &scratch, 0, .max, 5, panels, simd)
                for i in 0..<one.count {
                    let inside = i % n >= 80
                    #expect(inside ? one[i].bitPattern == whole[i].bitPattern : one[i].isNaN,
                            "\(kernel)×\(kernel) simd \(simd): value \(i) \(inside ? "differs" : "was written")")
                }
            }
        }
    }

    /// A small graph: 1×1 convolution (ReLU6) → + residual padded by zeros from 3 to 5 channels
    /// → PReLU. The fused plan must absorb all four operations into one kernel and give what
    /// XNNPACK gives operation by operation.
    @Test func aConvolutionWithAPaddedResidualAndPReLURunsAsOneKernelAndMatchesXNNPACK() throws {
        var seed: UInt64 = 5
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 7, 9, 4]))
        let small = g.addTensor(TensorValue(name: "small", shape: [1, 7, 9, 3]))
        let w = g.addTensor(TensorValue(name: "w", shape: [5, 1, 1, 4], constant: ConstantStorage(floats: pseudoRandomValues(20, seed: &seed).map { $0 * 3 })))
        let b = g.addTensor(TensorValue(name: "b", shape: [5], constant: ConstantStorage(floats: pseudoRandomValues(5, seed: &seed))))
        let conv = g.addTensor(TensorValue(name: "conv", shape: [1, 7, 9, 5]))
        let padded = g.addTensor(TensorValue(name: "padded", shape: [1, 7, 9, 5]))
        let sum = g.addTensor(TensorValue(name: "sum", shape: [1, 7, 9, 5]))
        let slopes = g.addTensor(TensorValue(name: "slopes", shape: [1, 1, 5], constant: ConstantStorage(floats: [0.1, 0.2, -0.3, 0.4, 2])))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 7, 9, 5]))
        g.nodes = [
            NeuralNode(operation: .conv2d(ConvolutionParameters(padding: .same, activation: .relu6)), inputs: [x, w, b], outputs: [conv], name: "conv"),
            NeuralNode(operation: .pad(paddings: [(0, 0), (0, 0), (0, 0), (0, 2)], value: 0), inputs: [small], outputs: [padded], name: "pad"),
            NeuralNode(operation: .add(.none), inputs: [padded, conv], outputs: [sum], name: "add"),
            NeuralNode(operation: .prelu, inputs: [sum, slopes], outputs: [y], name: "prelu"),
        ]
        g.inputs = [x, small]
        g.outputs = [y]
        try g.validate()
        let fused = try Predictor(graph: g, options: .init(convolutions: .own))
        let plain = try Predictor(graph: g, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary == "own(CONV_2D+PAD+ADD+PRELU)")
        #expect(plain.planSummary == "xnnpack(4 ops)")
        let inputs = [pseudoRandomValues(7 * 9 * 4, seed: &seed).map { $0 * 2 }, pseudoRandomValues(7 * 9 * 3, seed: &seed).map { $0 * 2 }]
        let a = try fused.predict(inputs), c = try plain.predict(inputs)
        let worst = zip(a[0], c[0]).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-5, "fused kernel vs XNNPACK: max |diff| \(worst)")
        #expect(a[0].contains { $0 < 0 } && a[0].contains { $0 > 1 }, "the case exercises PReLU's negative side and the clamps")
    }

    /// The shipped models whose convolutions FrameGraph's kernel runs: the fused plan gives what
    /// XNNPACK's plan gives (on one thread and on two), and it fuses what each model's blocks end with.
    @Test(arguments: [
        ("face_landmark.tflite", "own(CONV_2D+PAD+ADD+PRELU)"),
        ("face_detection_short_range.tflite", "own(CONV_2D+PAD+ADD)"),
        ("selfie_segmentation.tflite", "own(CONV_2D+HARD_SWISH)"),
        ("colorizer.onnx", "own(CONV_2D+ADD)"),
        // Its 7×7 and 14×14 layers are split between two threads by output channels.
        ("efficientnet_lite0.onnx", "own(CONV_2D+ADD)"),
    ])
    func fusedPlansOfTheShippedModelsMatchXNNPACK(file: String, expectedGroup: String) throws {
        let path = file == "colorizer.onnx" ? TestEnvironment.root.appendingPathComponent("models/colorizer/\(file)").path
                                            : TestEnvironment.mediaPipeModel(file)
        guard let path else {
            Issue.record("\(file) is missing: run tools/models/fetch_mediapipe_models.sh")
            return
        }
        let graph = file.hasSuffix(".onnx") ? try ONNXImporter.load(path: path) : try TFLiteImporter.load(path: path)
        let fused = try Predictor(graph: graph, options: .init(convolutions: .own))
        let plain = try Predictor(graph: graph, options: .init(convolutions: .xnnpack))
        #expect(fused.planSummary.contains(expectedGroup), "\(file): \(fused.planSummary)")
        #expect(!plain.planSummary.contains("own("))
        var seed: UInt64 = 11
        let inputs = (0..<fused.inputCount).map { pseudoRandomValues(fused.input($0).count, seed: &seed).map { $0 * 0.5 + 0.5 } }
        // Two threads split each convolution's rows or channels between them: the same arithmetic per value.
        let parallel = try Predictor(graph: graph, options: .init(threads: 2, convolutions: .own))
        let a = try fused.predict(inputs), c = try plain.predict(inputs), p = try parallel.predict(inputs)
        for (i, (x, y)) in zip(a, c).enumerated() {
            let scale = max(1, y.map { abs($0) }.max() ?? 1)
            let worst = zip(x, y).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst <= 1e-4 * scale, "\(file) output \(i): max |diff| \(worst) (largest value \(scale))")
            let threaded = zip(x, p[i]).map { abs($0 - $1) }.max() ?? .infinity
            #expect(threaded <= 1e-4 * scale, "\(file) output \(i), two threads: max |diff| \(threaded)")
        }
    }
}
