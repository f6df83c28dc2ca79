import CFrameGraphKernels
import Foundation
import TestSupport
import Testing

/// The convolutions with bfloat16 products (`fg_bconv_part` for 1×1, `fg_bconv_windows_part` for
/// windows): the rounding to bfloat16; the AVX-512 BF16 build against the scalar build (to float
/// rounding: the instruction's internal rounding is the processor's); both against the float
/// definition within the error that 8-bit significands allow; split by rows or by channel panels,
/// the same as whole.
@Suite struct BFloat16ConvolutionKernelTests {
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
        // Rows across several 12-row blocks and a ragged last tile; k odd or even.
        let rows = int(1...100), k = int(1...150), n = int(1...70)
        let shift: Float = int(0...1) == 0 ? 1 : 0
        let input = pseudoRandomValues(rows * k, seed: &seed).map { $0 * 2 + shift }
        let residualChannels = int(0...2) == 0 ? 0 : int(1...n)
        let clamps: (Float, Float, Float, Float) = int(0...1) == 0 ? (-.infinity, .infinity, -.infinity, .infinity) : (0, 6, -0.5, 4)
        return Case(rows: rows, k: k, n: n, input: input, weights: pseudoRandomValues(n * k, seed: &seed).map { $0 * 0.3 },
                    bias: pseudoRandomValues(n, seed: &seed), residual: pseudoRandomValues(rows * max(residualChannels, 1), seed: &seed),
                    slopes: pseudoRandomValues(n, seed: &seed), residualChannels: residualChannels, tail: int(0...2), clamps: clamps)
    }

    func pack(_ c: Case) -> (packed: [UInt16], biases: [Float]) {
        var packed = [UInt16](repeating: 0x7fc0, count: fg_bconv_packed_count(Int32(c.k), Int32(c.n)))
        var biases = [Float](repeating: .nan, count: fg_bconv_channels(Int32(c.n)))
        fg_bconv_pack(c.weights, c.bias, Int32(c.k), Int32(c.n), &packed, &biases)
        return (packed, biases)
    }

    func run(_ c: Case, simd: Int32, rows: Range<Int>? = nil, panels: Range<Int>? = nil, into out: inout [Float]) {
        let p = pack(c)
        var scratch = [UInt16](repeating: 0, count: fg_bconv_scratch_count(Int32(c.k)))
        let rows = rows ?? 0..<c.rows, panels = panels ?? 0..<Int.max
        c.residual.withUnsafeBufferPointer { r in
            c.slopes.withUnsafeBufferPointer { s in
                var e = fg_conv_epilogue(min1: c.clamps.0, max1: c.clamps.1, residual: c.residualChannels > 0 ? r.baseAddress : nil,
                                         residual_stride: c.residualChannels, residual_channels: Int32(c.residualChannels),
                                         min2: c.clamps.2, max2: c.clamps.3, prelu_slopes: c.tail == 1 ? s.baseAddress : nil,
                                         hard_swish: c.tail == 2 ? 1 : 0)
                fg_bconv_part(c.input, Int32(c.k), p.packed, p.biases, Int32(c.n), &out, &e, &scratch, rows.lowerBound, rows.upperBound,
                              panels.lowerBound, panels.upperBound, simd)
            }
        }
    }

    func run(_ c: Case, simd: Int32) -> [Float] {
        var out = [Float](repeating: .nan, count: c.rows * c.n)
        run(c, simd: simd, into: &out)
        return out
    }

    @Test func roundingToBFloat16IsToNearestTiesToEven() {
        // 1 + 2⁻⁸ lies half way between 1 and 1 + 2⁻⁷: to the even one, 1 (0x3f80).
        #expect(fg_bf16_round(1 + 0x1p-8) == 0x3f80)
        // 1 + 3·2⁻⁸ lies half way between 1 + 2⁻⁷ and 1 + 2⁻⁶: to the even one, 1 + 2⁻⁶ (0x3f82).
        #expect(fg_bf16_round(1 + 3 * 0x1p-8) == 0x3f82)
        #expect(fg_bf16_round(1 + 0x1p-8 + 0x1p-20) == 0x3f81)
        #expect(fg_bf16_round(-2.5) == 0xc020)
        #expect(fg_bf16_round(0) == 0 && fg_bf16_round(-0.0) == 0x8000)
        #expect(fg_bf16_round(.infinity) == 0x7f80)
        #expect(fg_bf16_round(.greatestFiniteMagnitude) == 0x7f80, "rounds up past the largest bfloat16")
        #expect(fg_bf16_round(.nan) & 0x7fc0 == 0x7fc0, "NaN stays NaN")
        #expect(fg_bf16_round(0x1p-130) == 0, "a denormal becomes zero")
    }

    @Test func theBF16BuildMatchesTheScalarOne() throws {
        try #require(fg_bconv_has_simd() != 0, "this CPU has no AVX-512 BF16: only the scalar build runs here")
        for seed in UInt64(1)...60 {
            let c = makeCase(seed: seed)
            let vector = run(c, simd: 1), scalar = run(c, simd: 0)
            #expect(!scalar.contains { $0.isNaN }, "\(c.label): an output was not written")
            // The same products, the same sums up to the float rounding of their additions.
            let close = zip(vector, scalar).allSatisfy { abs($0 - $1) <= 1e-5 * max(1, abs($1)) }
            #expect(close, "\(c.label): the BF16 and scalar builds differ beyond float rounding")
        }
    }

    /// Before the epilogue, |bf16 − exact| ≤ Σₖ |x|·|w|·(2⁻⁷ + 2⁻¹⁶) (bfloat16 keeps 8 significant
    /// bits: each factor within 2⁻⁸ of itself, so each product within (1 + 2⁻⁸)² − 1) and the float
    /// sums' rounding (k additions of at most 2⁻²⁴ of the running sum's size each).
    @Test func theResultIsTheFloatOneWithinTheRoundingError() {
        for seed in UInt64(100)...130 {
            var c = makeCase(seed: seed)
            c.residualChannels = 0
            c.tail = 0
            c.clamps = (-.infinity, .infinity, -.infinity, .infinity)
            let out = run(c, simd: 1)
            var worstRatio = 0.0
            for ch in 0..<c.n {
                for r in 0..<c.rows {
                    var exact = Double(c.bias[ch]), mass = 0.0
                    for i in 0..<c.k {
                        let product = Double(c.input[r * c.k + i]) * Double(c.weights[ch * c.k + i])
                        exact += product
                        mass += abs(product)
                    }
                    let bound = mass * (0x1p-7 + 0x1p-16) + Double(c.k) * 0x1p-24 * mass + 1e-6
                    worstRatio = max(worstRatio, abs(Double(out[r * c.n + ch]) - exact) / bound)
                }
            }
            #expect(worstRatio <= 1, "\(c.label): an output is \(worstRatio)× the rounding error bound from the exact sum")
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
            // Each value is rounded on its own: how the rows are cut changes nothing.
            #expect(zip(whole, byPanels).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(c.label): panel parts differ")
            #expect(zip(whole, byRows).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(c.label): row parts differ")
        }
    }

    @Test func windowedConvolutionsMatchTheFloatOneWithinTheRoundingError() {
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
            var packedFloat = [Float](repeating: 0, count: fg_conv_packed_count(Int32(k), Int32(n)))
            fg_conv_pack(weights, bias, Int32(k), Int32(n), &packedFloat)
            var floatScratch = [Float](repeating: 0, count: fg_conv_scratch_count(&g))
            var exact = [Float](repeating: .nan, count: rows * n)
            fg_conv(input, &g, packedFloat, Int32(n), &exact, &e, &floatScratch, 1)
            var packed = [UInt16](repeating: 0, count: fg_bconv_packed_count(Int32(k), Int32(n)))
            var biases = [Float](repeating: 0, count: fg_bconv_channels(Int32(n)))
            fg_bconv_pack(weights, bias, Int32(k), Int32(n), &packed, &biases)
            func run(_ simd: Int32) -> [Float] {
                var out = [Float](repeating: .nan, count: rows * n)
                var windows = [Float](repeating: 0, count: fg_bconv_window_floats(Int32(k)))
                var values = [UInt16](repeating: 0, count: fg_bconv_scratch_count(Int32(k)))
                fg_bconv_windows_part(input, &g, packed, biases, Int32(n), &out, &e, &windows, &values, 0, rows, 0, fg_bconv_channels(Int32(n)) / 16, simd)
                return out
            }
            let scalar = run(0), vector = run(1)
            #expect(zip(scalar, vector).allSatisfy { abs($0 - $1) <= 1e-5 * max(1, abs($1)) }, "\(label): the BF16 and scalar builds differ")
            let inputMost = Double(input.map { abs($0) }.max() ?? 0)
            for ch in 0..<n {
                let mass = weights[(ch * k)..<((ch + 1) * k)].reduce(0.0) { $0 + Double(abs($1)) } * inputMost
                let bound = mass * (0x1p-7 + 0x1p-16) + 1e-4
                for r in 0..<rows where abs(Double(scalar[r * n + ch]) - Double(exact[r * n + ch])) > bound {
                    Issue.record("\(label): row \(r) channel \(ch): bf16 \(scalar[r * n + ch]), float \(exact[r * n + ch]), bound \(bound)")
                    return
                }
            }
        }
    }
}
