import FFmpegSupport
import FrameGraph
@testable import FrameGraphMedia
import Testing

/// The `.fast` RGB conversion's own kernel (FastYUVToRGB): swscale's bytes exactly, for every colour
/// setting it serves, on pictures that sweep every level; frames it does not serve go to swscale.
@Suite struct FastYUVToRGBTests {
    /// A yuv420p picture whose samples come from a simple generator (every Y' level on every row,
    /// Cb/Cr pairs spread over the whole square).
    func sweep(width: Int, height: Int, color: ColorDescription) -> Frame {
        var f = Frame.make(.yuv420p, width: width, height: height)
        f.color = color
        var state: UInt32 = 12345
        func next() -> UInt8 {
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        for y in 0..<height {
            let row = f.row(y, plane: 0)
            for x in 0..<width { row[x] = x < 256 ? UInt8(truncatingIfNeeded: x &+ y) : next() }
        }
        for p in 1...2 {
            for y in 0..<(height + 1) / 2 {
                let row = f.row(y, plane: p)
                for x in 0..<row.count { row[x] = next() }
            }
        }
        return f
    }

    /// What swscale's fast path gives for `frame`.
    func swscale(_ frame: Frame) throws -> Frame {
        let scaler = Scaler(method: .bilinear)
        scaler.matchesCommonDecoders = true
        let rgb = Frame.make(.rgb24, width: frame.width, height: frame.height)
        try scaler.scale(frame, into: rgb)
        return rgb
    }

    func differingRows(_ a: Frame, _ b: Frame) -> [Int] {
        (0..<a.height).filter { !a.row($0).elementsEqual(b.row($0)) }
    }

    static let settings: [(String, ColorDescription)] = [
        ("BT.601 limited", .bt601), ("BT.709 limited", .bt709),
        ("BT.601 full", ColorDescription(range: .full, matrix: ColorDescription.bt601Code, primaries: ColorDescription.bt601Code,
                                         transfer: ColorDescription.bt601Code)),
    ]

    @Test(arguments: settings.map(\.0))
    func theKernelGivesSwscalesBytes(setting: String) throws {
        let color = try #require(Self.settings.first { $0.0 == setting }?.1)
        // The kernel serves this setting (else the comparison below would compare swscale with itself).
        #expect(FastYUVToRGB().serves(color))
        for (w, h) in [(640, 480), (1024, 256), (48, 6)] {   // 48: 32 pixels by AVX2, 16 by the scalar tail
            let frame = sweep(width: w, height: h, color: color)
            let ours = try RGBConverter(.fast).rgb(frame), theirs = try swscale(frame)
            #expect(differingRows(ours, theirs).isEmpty, "\(setting) \(w)×\(h)")
        }
    }

    @Test func scalarAndSIMDAgreeAndAFrameItDoesNotServeGoesToSwscale() throws {
        let frame = sweep(width: 96, height: 8, color: .bt601)
        var c = try #require(FastYUVToRGB.calibrate(.bt601))
        let scalar = Frame.make(.rgb24, width: 96, height: 8), simd = Frame.make(.rgb24, width: 96, height: 8)
        FastYUVToRGB.run(frame, into: scalar, &c, simd: 0)
        FastYUVToRGB.run(frame, into: simd, &c, simd: 1)
        #expect(differingRows(scalar, simd).isEmpty)
        // A width that is not a multiple of 16, and an odd height: swscale's own paths.
        for (w, h) in [(100, 8), (64, 7)] {
            let odd = sweep(width: w, height: h, color: .bt601)
            let out = Frame.make(.rgb24, width: w, height: h)
            #expect(!FastYUVToRGB().convert(odd, into: out))
            #expect(differingRows(try RGBConverter(.fast).rgb(odd), try swscale(odd)).isEmpty)
        }
    }
}
