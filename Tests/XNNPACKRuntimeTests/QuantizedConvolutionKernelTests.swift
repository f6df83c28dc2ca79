import CFrameGraphKernels
import Foundation
import TestSupport
import Testing

/// The int8 convolutions (`fg_qconv_part` for 1×1, `fg_qconv_windows_part` for windows): the
/// AVX-512 VNNI build against the scalar build, bit for bit; both against the float definition
/// within the error that 8-bit weights and activations allow; and split by rows or by channel
/// panels, the same as whole.
@Suite struct QuantizedConvolutionKernelTests {
    struct Case {
        var rows: Int, k: Int, n: Int
        var input: [Float], weights: [Float], bias: [Float], residual: [Float], slopes: [Float]
        var residualChannels: Int, tail: Int  // tail: 0 none, 1 PReLU, 2 hard-swish
        var clamps: (Float, Float, Float, Float)
        var label: String { "rows \(rows) k \(k) n \(n) residual \(residualChannels) tail \(tail) clamps \(clamps)" }
    }

    func makeCase(seed start: UInt64) -> Case {
        var seed = start
        func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &seed) }
        // Rows across several 12-row activation blocks and a ragged last tile; k not a multiple of 4.
        let rows = int(1...100), k = int(1...150), n = int(1...70)
        // Activations with an offset (ReLU-like, all positive) or centred.
        let shift: Float = int(0...1) == 0 ? 1 : 0
        let input = pseudoRandomValues(rows * k, seed: &seed).map { $0 * 2 + shift }
        let residualChannels = int(0...2) == 0 ? 0 : int(1...n)
        let clamps: (Float, Float, Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity, -.infinity, .infinity) : (0, 6, -0.5, 4)
        return Case(rows: rows, k: k, n: n, input: input, weights: pseudoRandomValues(n * k, seed: &seed).map { $0 * 0.3 },
                    bias: pseudoRandomValues(n, seed: &seed), residual: pseudoRandomValues(rows * max(residualChannels, 1), seed: &seed),
                    slopes: pseudoRandomValues(n, seed: &seed), residualChannels: residualChannels, tail: int(0...2), clamps: clamps)
    }

    /// The packed weights and per-channel arrays of `c`.
    func pack(_ c: Case) -> (packed: [Int8], scales: [Float], sums: [Float], biases: [Float]) {
        let channels = fg_qconv_channels(Int32(c.n))
        var packed = [Int8](repeating: 99, count: fg_qconv_packed_bytes(Int32(c.k), Int32(c.n)))
        var scales = [Float](repeating: .nan, count: channels), sums = scales, biases = scales
        fg_qconv_pack(c.weights, c.bias, Int32(c.k), Int32(c.n), &packed, &scales, &sums, &biases)
        return (packed, scales, sums, biases)
    }

    /// Rows first..<end and panels of `c` into `out`.
    func run(_ c: Case, simd: Int32, rows: Range<Int>? = nil, panels: Range<Int>? = nil, into out: inout [Float]) {
        let p = pack(c)
        var scratch = [UInt8](repeating: 0, count: fg_qconv_scratch_bytes(Int32(c.k)))
        let rows = rows ?? 0..<c.rows, panels = panels ?? 0..<Int.max
        c.residual.withUnsafeBufferPointer { r in
            c.slopes.withUnsafeBufferPointer { s in
                var e = fg_conv_epilogue(min1: c.clamps.0, max1: c.clamps.1, residual: c.residualChannels > 0 ? r.baseAddress : nil,
                                         residual_stride: c.residualChannels, residual_channels: Int32(c.residualChannels),
                                         min2: c.clamps.2, max2: c.clamps.3, prelu_slopes: c.tail == 1 ? s.baseAddress : nil,
                                         hard_swish: c.tail == 2 ? 1 : 0)
                fg_qconv_part(c.input, Int32(c.k), p.packed, p.scales, p.sums, p.biases, Int32(c.n), &out, &e, &scratch, rows.lowerBound,
                              rows.upperBound, panels.lowerBound, panels.upperBound, simd)
            }
        }
    }

    func run(_ c: Case, simd: Int32) -> [Float] {
        var out = [Float](repeating: .nan, count: c.rows * c.n)
        run(c, simd: simd, into: &out)
        return out
    }

    @Test func theVNNIBuildMatchesTheScalarOneBitForBit() throws {
        try #require(fg_qconv_has_simd() != 0, "this CPU has no AVX-512 VNNI: only the scalar build runs here")
        for seed in UInt64(1)...60 {
            let c = makeCase(seed: seed)
            let vector = run(c, simd: 1), scalar = run(c, simd: 0)
            let same = zip(vector, scalar).allSatisfy { $0.bitPattern == $1.bitPattern }
            #expect(same, "\(c.label): the VNNI and scalar builds differ")
            #expect(!scalar.contains { $0.isNaN }, "\(c.label): an output was not written")
        }
    }

    /// Before the epilogue, |int8 − exact| ≤ Σₖ |x|·(weight step / 2) + (activation step / 2)·Σₖ |ŵ|,
    /// the activation step being at most the whole tensor's range / 255.
    @Test func theResultIsTheFloatOneWithinTheQuantisationError() {
        for seed in UInt64(100)...130 {
            var c = makeCase(seed: seed)
            c.residualChannels = 0
            c.tail = 0
            c.clamps = (-.infinity, .infinity, -.infinity, .infinity)
            let out = run(c, simd: 1)
            let lo = c.input.min() ?? 0, hi = c.input.max() ?? 0
            let activationStep = Double(hi - lo) / 255
            var worstRatio = 0.0
            for ch in 0..<c.n {
                let w = c.weights[(ch * c.k)..<((ch + 1) * c.k)]
                let weightStep = Double(w.map { abs($0) }.max() ?? 0) / 127
                let weightMass = w.reduce(0.0) { $0 + Double(abs($1)) } + Double(c.k) * weightStep / 2
                for r in 0..<c.rows {
                    var exact = Double(c.bias[ch]), mass = 0.0
                    for i in 0..<c.k {
                        exact += Double(c.input[r * c.k + i]) * Double(w[w.startIndex + i])
                        mass += abs(Double(c.input[r * c.k + i]))
                    }
                    let bound = mass * weightStep / 2 + activationStep / 2 * weightMass + 1e-4 * (1 + abs(exact))
                    worstRatio = max(worstRatio, abs(Double(out[r * c.n + ch]) - exact) / bound)
                }
            }
            #expect(worstRatio <= 1, "\(c.label): an output is \(worstRatio)× the quantisation error bound from the exact sum")
        }
    }

    @Test func partsByRowsOrByPanelsGiveTheWhole() {
        for seed in UInt64(200)...215 {
            let c = makeCase(seed: seed)
            let whole = run(c, simd: 1)
            var byRows = [Float](repeating: .nan, count: c.rows * c.n), byPanels = byRows
            let cut = c.rows / 2
            run(c, simd: 1, rows: 0..<cut, into: &byRows)
            run(c, simd: 1, rows: cut..<c.rows, into: &byRows)
            let panels = (c.n + 15) / 16
            for p in 0..<panels { run(c, simd: 1, panels: p..<(p + 1), into: &byPanels) }
            // Row parts start their 12-row activation blocks afresh: equal to the whole where the cut
            // falls on a block boundary, within the quantisation error elsewhere; panels share every block.
            #expect(zip(whole, byPanels).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(c.label): panel parts differ")
            if cut % 12 == 0 {
                #expect(zip(whole, byRows).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(c.label): row parts differ")
            }
            #expect(!byRows.contains { $0.isNaN }, "\(c.label): a row part left an output unwritten")
        }
    }

    @Test func aChannelOfZeroWeightsGivesItsBiasAndEqualActivationsLoseNothing() {
        var c = makeCase(seed: 7)
        c.k = 8
        c.n = 3
        c.rows = 30
        c.input = [Float](repeating: 0.75, count: c.rows * c.k)  // one value: the range is empty
        c.weights = [Float](repeating: 0, count: c.k) + (0..<(2 * c.k)).map { Float($0 % 5) * 0.1 - 0.2 }
        c.bias = [0.5, -1, 2]
        c.residualChannels = 0
        c.tail = 0
        c.clamps = (-.infinity, .infinity, -.infinity, .infinity)
        for simd: Int32 in [0, 1] {
            let out = run(c, simd: simd)
            for r in 0..<c.rows {
                #expect(out[r * 3] == 0.5)
                for ch in 1...2 {
                    let exact = c.bias[ch] + (0..<c.k).reduce(Float(0)) { $0 + 0.75 * c.weights[ch * c.k + $1] }
                    // Only the weights' rounding: at most 0.75 × 8 × (0.2 / 127) / 2.
                    #expect(abs(out[r * 3 + ch] - exact) <= 0.005, "row \(r) channel \(ch): \(out[r * 3 + ch]) vs \(exact)")
                }
            }
        }
    }

    @Test func windowedConvolutionsMatchTheScalarBuildAndTheFloatOneWithinTheQuantisationError() {
        for seed in UInt64(300)...330 {
            var state = seed
            func int(_ range: ClosedRange<Int>) -> Int { pseudoRandomInt(range, seed: &state) }
            let kernel = int(1...2) * 2 + 1, stride = int(1...2), pad = int(0...1) * (kernel / 2)
            let (h, w, cin, n) = (int(3...14), int(3...14), int(1...40), int(1...40))
            let oh = (h + 2 * pad - kernel) / stride + 1, ow = (w + 2 * pad - kernel) / stride + 1
            guard oh > 0, ow > 0 else { continue }
            var g = fg_conv_geometry(batch: 1, in_h: Int32(h), in_w: Int32(w), in_c: Int32(cin), kernel_h: Int32(kernel), kernel_w: Int32(kernel),
                                     stride_h: Int32(stride), stride_w: Int32(stride), dilation_h: 1, dilation_w: 1, pad_top: Int32(pad),
                                     pad_left: Int32(pad), out_h: Int32(oh), out_w: Int32(ow))
            let k = kernel * kernel * cin, rows = oh * ow
            let input = pseudoRandomValues(h * w * cin, seed: &state).map { $0 + 0.5 }
            let weights = pseudoRandomValues(n * k, seed: &state).map { $0 * 0.2 }, bias = pseudoRandomValues(n, seed: &state)
            let label = "\(kernel)×\(kernel) / \(stride) pad \(pad), \(h)×\(w)×\(cin) → \(n)"
            var e = fg_conv_epilogue(min1: -.infinity, max1: .infinity, residual: nil, residual_stride: 0, residual_channels: 0,
                                     min2: -.infinity, max2: .infinity, prelu_slopes: nil, hard_swish: 0)
            // Float: the checked float kernel.
            var packedFloat = [Float](repeating: 0, count: fg_conv_packed_count(Int32(k), Int32(n)))
            fg_conv_pack(weights, bias, Int32(k), Int32(n), &packedFloat)
            var floatScratch = [Float](repeating: 0, count: fg_conv_scratch_count(&g))
            var exact = [Float](repeating: .nan, count: rows * n)
            fg_conv(input, &g, packedFloat, Int32(n), &exact, &e, &floatScratch, 1)
            // Int8, both builds.
            let channels = fg_qconv_channels(Int32(n))
            var packed = [Int8](repeating: 0, count: fg_qconv_packed_bytes(Int32(k), Int32(n)))
            var scales = [Float](repeating: 0, count: channels), sums = scales, biases = scales
            fg_qconv_pack(weights, bias, Int32(k), Int32(n), &packed, &scales, &sums, &biases)
            func run(_ simd: Int32) -> [Float] {
                var out = [Float](repeating: .nan, count: rows * n)
                var windows = [Float](repeating: 0, count: fg_qconv_window_floats(Int32(k)))
                var bytes = [UInt8](repeating: 0, count: fg_qconv_scratch_bytes(Int32(k)))
                fg_qconv_windows_part(input, &g, packed, scales, sums, biases, Int32(n), &out, &e, &windows, &bytes, 0, rows, 0, channels / 16, simd)
                return out
            }
            let scalar = run(0), vector = run(1)
            #expect(zip(scalar, vector).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(label): the VNNI and scalar builds differ")
            // Every window holds values in min(0, input)…max(input) (zeros in the padding).
            let step = Double((input.max() ?? 0) - min(0, input.min() ?? 0)) / 255
            for ch in 0..<n {
                let wc = weights[(ch * k)..<((ch + 1) * k)]
                let wstep = Double(wc.map { abs($0) }.max() ?? 0) / 127
                let mass = wc.reduce(0.0) { $0 + Double(abs($1)) } + Double(k) * wstep / 2
                let inputMass = Double(k) * Double(input.map { abs($0) }.max() ?? 0)
                let bound = inputMass * wstep / 2 + step / 2 * mass + 1e-3
                for r in 0..<rows where abs(Double(scalar[r * n + ch]) - Double(exact[r * n + ch])) > bound {
                    Issue.record("\(label): row \(r) channel \(ch): int8 \(scalar[r * n + ch]), float \(exact[r * n + ch]), bound \(bound)")
                    return
                }
            }
        }
    }
}
