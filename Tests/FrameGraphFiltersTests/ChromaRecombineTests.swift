import FFmpegSupport
import FrameGraph
import FrameGraphFilters
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
}
