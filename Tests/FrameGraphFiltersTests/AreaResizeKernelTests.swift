import CFrameGraphKernels
@testable import FrameGraphFilters
import Testing

/// `fg_area_resize` (a network's input preparation: one 8-bit plane area-resized into floats)
/// against the scalar order of operations written out here: the vertical pass acc = w₀·row₀, then
/// acc += wₖ·rowₖ; the horizontal pass sum = 0, sum += wₖ·accₖ, each product rounded before it is
/// added. Whichever vector path this core takes (AVX2 gathers, or the AVX-512 permute plan with its
/// chunks of up to 16 outputs and masked loads at the row's end) must give those values bit for bit,
/// for shrinking and enlarging, widths that are not multiples of 8 or 16, and planes narrower than
/// one chunk's 32-sample window. The taps and the plan are ResampleToRGB's own.
@Suite struct AreaResizeKernelTests {
    @Test(arguments: [(640, 480, 256, 256), (1920, 1080, 256, 256), (320, 240, 256, 256), (641, 479, 100, 77),
                      (37, 29, 13, 11), (13, 7, 29, 5), (320, 240, 403, 61), (1280, 720, 250, 9), (100, 3, 99, 2)])
    func matchesTheScalarOrderBitForBit(sw: Int, sh: Int, dw: Int, dh: Int) {
        let stride = sw + 5
        var seed: UInt64 = UInt64(sw * 7919 + dw)
        let plane = (0..<(stride * sh)).map { _ -> UInt8 in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: seed >> 56)
        }
        let x = ResampleToRGB.Taps(outputs: dw, source: sw, horizontal: true)
        let y = ResampleToRGB.Taps(outputs: dh, source: sh, horizontal: false)
        var out = [Float](repeating: -1, count: dw * dh), acc = [Float](repeating: 0, count: sw)
        fg_area_resize(plane, stride, Int32(sw), Int32(sh), 1, &out, Int32(dw), Int32(dh), x.start, x.count, x.weight, x.maxTaps,
                       x.plan, x.planBytes, y.start, y.count, y.weight, y.maxTaps, &acc)
        var differing = 0, first = ""
        for oy in 0..<dh {
            var row = [Float](repeating: 0, count: sw)
            for k in 0..<Int(y.count[oy]) {
                let w = y.weight[oy * Int(y.maxTaps) + k], line = (Int(y.start[oy]) + k) * stride
                for i in 0..<sw {
                    let product = w * Float(plane[line + i])
                    row[i] = k == 0 ? product : row[i] + product
                }
            }
            for ox in 0..<dw {
                var sum: Float = 0
                for k in 0..<Int(x.count[ox]) {
                    let product = x.weight[ox * Int(x.maxTaps) + k] * row[Int(x.start[ox]) + k]
                    sum = sum + product
                }
                let got = out[oy * dw + ox]
                if got.bitPattern != sum.bitPattern {
                    if differing == 0 { first = "(\(ox), \(oy)): \(got) against \(sum)" }
                    differing += 1
                }
            }
        }
        #expect(differing == 0, "\(sw)×\(sh) → \(dw)×\(dh): \(differing) outputs differ from the scalar order, first \(first)")
    }
}
