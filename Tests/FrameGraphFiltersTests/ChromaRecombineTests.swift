import FFmpegSupport
import FrameGraph
@testable import FrameGraphFilters
import Testing

/// `recombine mode=chroma` (HD colorization's fast form) against the exact Lab recombination.
@Suite struct ChromaRecombineTests {
    /// A 1280×720 BT.709 frame: a horizontal luma ramp, neutral chroma; a/b that vary smoothly.
    func inputs() -> (Frame, Frame) {
        var frame = Frame.make(.yuv420p, width: 1280, height: 720)
        frame.color = .bt709
        for p in 0..<3 {
            for y in 0..<(p == 0 ? 720 : 360) {
                let row = frame.row(y, plane: p)
                for x in 0..<row.count { row[x] = p == 0 ? UInt8(40 + 160 * x / row.count) : 128 }
            }
        }
        let ab = Frame.make(.planarFloat32(channels: 2), width: 64, height: 64)
        for y in 0..<64 {
            let a = ab.floatRow(y, plane: 0), b = ab.floatRow(y, plane: 1)
            for x in 0..<64 { a[x] = Float(x - 32) * 0.8; b[x] = Float(y - 32) * 0.8 }
        }
        return (frame, ab)
    }

    @Test func keepsLumaAndColoursChromaLikeTheExactForm() throws {
        let (frame, ab) = inputs()
        let context = RunContext(options: RunOptions())
        let exact = LabRecombine(name: "lab", mode: .lab), fast = LabRecombine(name: "chroma", mode: .auto)
        #expect(try exact.negotiate(inputs: [frame.description, ab.description])?.format == .rgb24)
        #expect(try fast.negotiate(inputs: [frame.description, ab.description])?.format == .yuv420p, "auto is chroma for yuv420p")
        #expect(fast.resolvedMode == .chroma)
        let a = try #require(try exact.combine([frame, ab], context: context))
        let b = try #require(try fast.combine([frame, ab], context: context))
        // The Y' plane is the frame's own, byte for byte.
        withExtendedLifetime((frame, b)) { for y in stride(from: 0, to: 720, by: 97) { #expect(Array(frame.row(y)) == Array(b.row(y))) } }
        // The colours agree with the exact form where the picture is smooth (away from clipping).
        var rgb = Frame.make(.rgb24, width: 1280, height: 720)
        rgb.color = .bt709
        var converted = b
        converted.color = .bt709
        try Scaler().scale(converted, into: rgb)
        var worst = 0, total = 0, count = 0
        withExtendedLifetime((a, rgb)) {
            for y in stride(from: 100, to: 620, by: 40) {
                for x in stride(from: 300, to: 1000, by: 50) {
                    let p = a.packedPixel(x: x, y: y), q = rgb.packedPixel(x: x, y: y)
                    for c in 0..<3 { let d = abs(Int(p[c]) - Int(q[c])); worst = max(worst, d); total += d; count += 1 }
                }
            }
        }
        #expect(Double(total) / Double(count) < 4 && worst <= 14, "mean |difference| \(Double(total) / Double(count)), worst \(worst)")
    }

    @Test func rgbAndGrayFramesStayExact() throws {
        let small = FrameDescription(format: .yuv420p, width: 640, height: 480), ab = FrameDescription(format: .planarFloat32(channels: 2), width: 64, height: 64)
        let node = LabRecombine(name: "r")
        #expect(try node.negotiate(inputs: [small, ab])?.format == .yuv420p && node.resolvedMode == .chroma)
        let gray = FrameDescription(format: .gray8, width: 640, height: 480)
        #expect(try node.negotiate(inputs: [gray, ab])?.format == .rgb24 && node.resolvedMode == .lab)
        let rgbHD = FrameDescription(format: .rgb24, width: 1920, height: 1080)
        #expect(try node.negotiate(inputs: [rgbHD, ab])?.format == .rgb24 && node.resolvedMode == .lab, "chroma needs yuv420p")
        let forced = LabRecombine(name: "f", mode: .chroma)
        #expect(throws: GraphError.self) { _ = try forced.negotiate(inputs: [rgbHD, ab]) }
    }

    /// A 1283×723 BT.601 frame of pseudo-random samples (odd sizes: the last chroma column and row
    /// sit over one luma column / row) and a uniform a/b.
    func randomInputs(a: Float, b: Float) -> (Frame, Frame) {
        var frame = Frame.make(.yuv420p, width: 1283, height: 723)
        frame.color = .bt601
        var state: UInt32 = 12345
        for p in 0..<3 {
            for y in 0..<(p == 0 ? 723 : 362) {
                let row = frame.row(y, plane: p)
                for x in 0..<row.count {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    row[x] = UInt8(truncatingIfNeeded: state >> 24)
                }
            }
        }
        let ab = Frame.make(.planarFloat32(channels: 2), width: 48, height: 48)
        for y in 0..<48 {
            let ar = ab.floatRow(y, plane: 0), br = ab.floatRow(y, plane: 1)
            for x in 0..<48 { ar[x] = a; br[x] = b }
        }
        return (frame, ab)
    }

    /// The fused row kernel's AVX2 and baseline builds give the same bytes, and each chroma sample
    /// is what the steps give one at a time in Swift: the 2×2 mean's R'G'B' bytes → Lab lightness
    /// (LabColor) → with a/b back to sRGB (LabColor.rgb) → Cb/Cr (within one level: the kernel's
    /// 16 384-step byte table against the interpolated one).
    @Test func fusedKernelMatchesTheStepsAndItsBaselineBuild() {
        let (frame, ab) = randomInputs(a: 23.5, b: -31.25)
        var kernel = ChromaRecombine(width: frame.width, height: frame.height, abWidth: ab.width, abHeight: ab.height)
        let vector = Frame.make(.yuv420p, width: frame.width, height: frame.height)
        let scalar = Frame.make(.yuv420p, width: frame.width, height: frame.height)
        kernel.combine(frame: frame, ab: ab, into: vector, allowSIMD: true)
        kernel.combine(frame: frame, ab: ab, into: scalar, allowSIMD: false)
        let color = frame.color.resolved(height: frame.height)
        let (kr, kb) = color.lumaCoefficients
        let c = ResampleToRGB.coefficients(color)
        func byte(_ v: Float) -> Int { Int(min(max(v + 0.5, 0), 255)) }
        var worst = 0, checked = 0
        withExtendedLifetime((frame, vector, scalar)) {
            for p in 0..<3 {
                for y in 0..<(p == 0 ? 723 : 362) { #expect(Array(vector.row(y, plane: p)) == Array(scalar.row(y, plane: p)), "plane \(p) row \(y)") }
            }
            #expect(Array(vector.row(722)) == Array(frame.row(722)), "Y' is the frame's own")
            for cy in stride(from: 0, to: 362, by: 19) {
                for cx in Array(stride(from: 0, to: 642, by: 23)) + [641] {
                    let xa = 2 * cx, xb = min(2 * cx + 1, 1282), ya = 2 * cy, yb = min(2 * cy + 1, 722)
                    let sum = Int(frame.row(ya)[xa]) + Int(frame.row(ya)[xb]) + Int(frame.row(yb)[xa]) + Int(frame.row(yb)[xb])
                    let l = c.ys * (0.25 * Float(sum) - c.yo)
                    let cb = Float(frame.row(cy, plane: 1)[cx]) - 128, cr = Float(frame.row(cy, plane: 2)[cx]) - 128
                    let r = byte(l + c.rv * cr), bl = byte(l + c.bu * cb), g = byte(l - c.gu * cb - c.gv * cr)
                    let lightness = LabColor.lightness(r: UInt8(r), g: UInt8(g), b: UInt8(bl))
                    let s = LabColor.rgb(l: lightness, a: 23.5, b: -31.25)
                    let (R, G, B) = (Float(byte(s.r * 255)), Float(byte(s.g * 255)), Float(byte(s.b * 255)))
                    let luma = kr * R + (1 - kr - kb) * G + kb * B
                    let u = byte(128 + (B - luma) * (224.0 / 255.0) / (2 * (1 - kb))), v = byte(128 + (R - luma) * (224.0 / 255.0) / (2 * (1 - kr)))
                    worst = max(worst, abs(u - Int(vector.row(cy, plane: 1)[cx])), abs(v - Int(vector.row(cy, plane: 2)[cx])))
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
        #expect(worst <= 2, "worst |difference| \(worst) levels")
    }
}
