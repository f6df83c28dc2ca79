import FrameGraph
import FrameGraphMedia
import Testing

/// RGBConverter (what the C library's items and FrameTap convert with): flat colours by both paths,
/// where they differ (chroma edges), and RGB frames handed back untouched.
@Suite struct RGBConverterTests {
    /// A 64×32 yuv420p BT.601 frame: the left half one chroma, the right half another, Y flat.
    func halves(y: UInt8, left: (UInt8, UInt8), right: (UInt8, UInt8)) -> Frame {
        var f = Frame.make(.yuv420p, width: 64, height: 32)
        f.color = .bt601
        for r in 0..<32 { let row = f.row(r, plane: 0); for i in 0..<row.count { row[i] = y } }
        for p in 1...2 {
            for r in 0..<16 {
                let row = f.row(r, plane: p)
                for i in 0..<row.count { row[i] = i < 16 ? (p == 1 ? left.0 : left.1) : (p == 1 ? right.0 : right.1) }
            }
        }
        f.sequence = 7
        return f
    }

    @Test func flatColoursComeOutTheSameByBothPaths() throws {
        // BT.601 limited Y 81, Cb 90, Cr 240 is red (255, 0, 0); Y 180, Cb = Cr = 128 a grey of 191.
        for (yuv, want) in [((UInt8(81), UInt8(90), UInt8(240)), (255, 0, 0)), ((180, 128, 128), (191, 191, 191))] {
            let frame = halves(y: yuv.0, left: (yuv.1, yuv.2), right: (yuv.1, yuv.2))
            for conversion in RGBConversion.allCases {
                let rgb = try RGBConverter(conversion).rgb(frame)
                #expect(rgb.format == .rgb24 && rgb.width == 64 && rgb.height == 32 && rgb.sequence == 7)
                let row = rgb.row(10)
                for x in [0, 31, 63] {
                    let got = (Int(row[3 * x]), Int(row[3 * x + 1]), Int(row[3 * x + 2]))
                    // swscale's fast path rounds less carefully: within 3 levels.
                    #expect(abs(got.0 - want.0) <= 3 && abs(got.1 - want.1) <= 3 && abs(got.2 - want.2) <= 3, "\(conversion) x \(x): \(got)")
                }
            }
        }
    }

    @Test func thePathsDifferOnlyAtAChromaEdge() throws {
        // Red on the left, blue on the right (BT.601: Cb 90 Cr 240, Cb 240 Cr 110), Y flat at 81.
        let frame = halves(y: 81, left: (90, 240), right: (240, 110))
        let fast = try RGBConverter(.fast).rgb(frame), exact = try RGBConverter(.exact).rgb(frame)
        let a = fast.row(5), b = exact.row(5)
        // Away from the edge (x 0…28 and 36…63) both give the same pixels within the fast path's rounding (4 levels).
        for x in Array(0...28) + Array(36...63) {
            for c in 0..<3 { #expect(abs(Int(a[3 * x + c]) - Int(b[3 * x + c])) <= 4, "x \(x) channel \(c)") }
        }
        // At the edge (x 31, 32) the fast path takes the nearest chroma sample, the exact one interpolates.
        let differs = (30...33).contains { x in (0..<3).contains { c in abs(Int(a[3 * x + c]) - Int(b[3 * x + c])) > 20 } }
        #expect(differs)
    }

    @Test func anRGBFrameIsHandedBackAsItIs() throws {
        var frame = Frame.make(.rgb24, width: 8, height: 4)
        frame.row(0)[0] = 42
        let same = try RGBConverter(.fast).rgb(frame)
        #expect(same.base(plane: 0) == frame.base(plane: 0) && same.row(0)[0] == 42)
    }
}
