import CFrameGraphKernels
import Testing

/// The float-to-byte kernels of input preparation and mask decoding against their scalar definitions
/// written out here (each product rounded before it is added; + 0.5, clamped to 0…255, truncated):
/// whichever build runs (AVX2 sixteen at a time, the scalar rest), every byte must be the scalar
/// one, for counts that are not multiples of 16 and values outside the range.
@Suite struct ByteConversionKernelTests {
    static func clamp255(_ v: Float) -> UInt8 {
        let x = v + 0.5
        return x <= 0 ? 0 : (x >= 255 ? 255 : UInt8(x))
    }

    static func values(_ n: Int, from lo: Float, to hi: Float, seed: UInt64) -> [Float] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return lo + (hi - lo) * Float(s >> 40) / Float(1 << 24)
        }
    }

    @Test(arguments: [1, 15, 16, 17, 48, 255, 256])
    func yuvFloatsBecomeTheScalarRGBBytes(n: Int) {
        let y = Self.values(n, from: -10, to: 270, seed: 1), u = Self.values(n, from: -5, to: 260, seed: 2)
        let v = Self.values(n, from: -5, to: 260, seed: 3)
        var c = fg_yuv_to_rgb(yo: 16, ys: 255.0 / 219.0, rv: 1.596, gu: 0.391, gv: 0.813, bu: 2.018)
        var out = [UInt8](repeating: 0, count: 3 * n)
        fg_yuv_float_to_rgb24(y, u, v, &out, Int32(n), &c)
        var expected = [UInt8](repeating: 0, count: 3 * n)
        for i in 0..<n {
            let l = c.ys * (y[i] - c.yo), cb = u[i] - 128, cr = v[i] - 128
            let rp = c.rv * cr, gp = c.gu * cb, gq = c.gv * cr, bp = c.bu * cb
            expected[3 * i] = Self.clamp255(l + rp)
            expected[3 * i + 1] = Self.clamp255(l - gp - gq)
            expected[3 * i + 2] = Self.clamp255(l + bp)
        }
        let differing = zip(out, expected).filter { $0 != $1 }.count
        #expect(differing == 0, "\(n) pixels: \(differing) bytes differ from the scalar conversion")
        var bytes = [UInt8](repeating: 0, count: n)
        fg_float_to_bytes(y, &bytes, Int32(n))
        #expect(bytes == y.map(Self.clamp255), "\(n) floats → bytes")
    }

    /// low 0 (scale 255) and MetalTensor's portrait range 0.1 … 0.9.
    @Test(arguments: [Float(0), Float(0.1)], [1, 16, 33, 256])
    func probabilitiesBecomeTheScalarMaskBytes(low: Float, n: Int) {
        let range = (low: low, scale: low == 0 ? Float(255) : 255 / (0.9 - low))
        var p = Self.values(n, from: -0.2, to: 1.2, seed: UInt64(n))
        let specials: [Float] = [.nan, .infinity, -.infinity, 1e-7, 1e-6, 0.999, 1, -0]
        for (i, s) in specials.enumerated() where i < n { p[(i * 7) % n] = s }
        var out = [UInt8](repeating: 7, count: n)
        fg_probability_bytes(p, &out, Int32(n), range.low, range.scale)
        let expected = p.map { x -> UInt8 in
            let f: Float = x < 1e-6 ? 0 : x
            let product = (f - range.low) * range.scale
            var v = product + 0.5
            v = v > 0 ? v : 0
            v = v < 255 ? v : 255
            return UInt8(v)
        }
        #expect(out == expected, "\(n) probabilities, low \(range.low): \(zip(out, expected).filter { $0 != $1 }.count) bytes differ")
    }
}
