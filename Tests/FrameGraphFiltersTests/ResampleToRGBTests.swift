import FFmpegSupport
import FrameGraph
import FrameGraphFilters
import Testing

/// The one-pass input preparation (area filter + Y'CbCr → RGB) against exact colour values and
/// against libswscale on the same pictures.
@Suite struct ResampleToRGBTests {
    /// A 1920×1080 yuv420p frame of one flat colour.
    func flat(y: UInt8, u: UInt8, v: UInt8, color: ColorDescription, width: Int = 1920, height: Int = 1080) -> Frame {
        var f = Frame.make(.yuv420p, width: width, height: height)
        f.color = color
        for p in 0..<3 {
            let rows = p == 0 ? height : height / 2
            for r in 0..<rows { let row = f.row(r, plane: p); for i in 0..<row.count { row[i] = [y, u, v][p] } }
        }
        return f
    }

    @Test func flatColoursConvertWithTheFramesOwnMatrixAndRange() {
        // BT.709 limited: Y 63, Cb 102, Cr 240 is sRGB ≈ (255, 0, 0) red; BT.601 reads the same bytes as another red.
        let cases: [(ColorDescription, (UInt8, UInt8, UInt8), (Int, Int, Int))] = [
            (.bt709, (63, 102, 240), (255, 0, 0)),
            (.bt601, (81, 90, 240), (255, 0, 0)),
            (.bt709, (180, 128, 128), (191, 191, 191)),
            (ColorDescription(range: .full, matrix: 6, primaries: 6, transfer: 6), (76, 85, 255), (254, 0, 0)),
        ]
        var resample = ResampleToRGB()
        for (color, yuv, want) in cases {
            let frame = flat(y: yuv.0, u: yuv.1, v: yuv.2, color: color)
            let out = Frame.make(.rgb24, width: 256, height: 256)
            let converted = resample.convert(frame, into: out)
            #expect(converted)
            withExtendedLifetime(out) {
                let p = out.packedPixel(x: 100, y: 200)
                #expect(abs(Int(p[0]) - want.0) <= 2 && abs(Int(p[1]) - want.1) <= 2 && abs(Int(p[2]) - want.2) <= 2, "\(color): \(p) vs \(want)")
            }
        }
    }

    @Test func matchesLibswscaleOnASmoothPicture() throws {
        for (w, h) in [(1920, 1080), (640, 480), (160, 120)] {
            var frame = Frame.make(.yuv420p, width: w, height: h)
            frame.color = .bt709
            for p in 0..<3 {
                let rows = p == 0 ? h : h / 2
                for r in 0..<rows {
                    let row = frame.row(r, plane: p)
                    for i in 0..<row.count { row[i] = UInt8(truncatingIfNeeded: p == 0 ? 30 + 180 * i / row.count : 100 + 60 * r / rows) }
                }
            }
            let ours = Frame.make(.rgb24, width: 256, height: 256), theirs = Frame.make(.rgb24, width: 256, height: 256)
            var resample = ResampleToRGB()
            let converted = resample.convert(frame, into: ours)
            #expect(converted)
            try Scaler(method: .area).scale(frame, into: theirs)
            let (a, b) = withExtendedLifetime((ours, theirs)) { (ours.packedBytes(), theirs.packedBytes()) }
            let mean = Double(zip(a, b).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(a.count)
            let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(mean < 1.0 && worst <= 6, "\(w)x\(h): mean |difference| \(mean), worst \(worst)")
        }
    }

    /// Random grey pictures (Cb = Cr = 128, full range, so R = G = B = Y) shrunk and enlarged to sizes
    /// of every width modulo 8: each output is the area mean of the source pixels under it (exact
    /// overlaps, double precision), rounded, to within 1.
    @Test(arguments: [(640, 480, 256, 256), (641, 479, 100, 77), (37, 29, 13, 11), (320, 240, 403, 61), (1280, 720, 250, 9)])
    func greyPicturesBecomeTheAreaMeansOfTheirPixels(sw: Int, sh: Int, dw: Int, dh: Int) {
        var frame = Frame.make(.yuv420p, width: sw, height: sh)
        frame.color = ColorDescription(range: .full, matrix: ColorDescription.bt709Code, primaries: ColorDescription.bt709Code, transfer: ColorDescription.bt709Code)
        var seed: UInt64 = UInt64(sw * 1000 + dw)
        for p in 0..<3 {
            for r in 0..<(p == 0 ? sh : (sh + 1) / 2) {
                let row = frame.row(r, plane: p)
                for i in 0..<row.count {
                    seed = seed &* 6364136223846793005 &+ 1442695040888963407
                    row[i] = p == 0 ? UInt8(truncatingIfNeeded: seed >> 56) : 128
                }
            }
        }
        let out = Frame.make(.rgb24, width: dw, height: dh)
        var resample = ResampleToRGB()
        let converted = resample.convert(frame, into: out)
        #expect(converted)
        /// The overlap of source pixels [i, i+1) with output o's interval on an axis of n → m.
        func overlaps(_ o: Int, _ n: Int, _ m: Int) -> [(Int, Double)] {
            let f = Double(n) / Double(m), a = Double(o) * f, b = Double(o + 1) * f
            return (Int(a)..<min(n, Int(b.rounded(.up)))).map { i in (i, min(Double(i + 1), b) - max(Double(i), a)) }.filter { $0.1 > 0 }
        }
        var worst = 0
        withExtendedLifetime((frame, out)) {
            for oy in 0..<dh {
                let ys = overlaps(oy, sh, dh)
                for ox in 0..<dw {
                    let xs = overlaps(ox, sw, dw)
                    var sum = 0.0, total = 0.0
                    for (y, wy) in ys { let row = frame.row(y, plane: 0); for (x, wx) in xs { sum += wy * wx * Double(row[x]); total += wy * wx } }
                    let expected = Int((sum / total).rounded()), got = out.packedPixel(x: ox, y: oy)
                    worst = max(worst, got.map { abs(Int($0) - expected) }.max() ?? 255)
                }
            }
        }
        #expect(worst <= 1, "\(sw)×\(sh) → \(dw)×\(dh): an output is \(worst) from its area mean")
    }

    @Test func rgbInputAndUnhandledFormats() {
        let rgb = Frame.make(.rgb24, width: 300, height: 200)
        for y in 0..<200 { let row = rgb.row(y); for i in 0..<row.count { row[i] = UInt8(i % 3 == 0 ? 200 : (i % 3 == 1 ? 100 : 50)) } }
        let out = Frame.make(.rgb24, width: 64, height: 64)
        var resample = ResampleToRGB()
        let converted = resample.convert(rgb, into: out)
        #expect(converted)
        withExtendedLifetime(out) { #expect(out.packedPixel(x: 10, y: 10) == [200, 100, 50]) }
        let nv12 = resample.convert(Frame.make(.nv12, width: 64, height: 64), into: out)
        let gray = resample.convert(rgb, into: Frame.make(.gray8, width: 64, height: 64))
        #expect(!nv12 && !gray, "nv12 input and gray8 output fall back to swscale")
    }
}
