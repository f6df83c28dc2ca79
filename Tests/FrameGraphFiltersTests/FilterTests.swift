import FFmpegSupport
import FrameGraph
import FrameGraphFilters
import Testing
import TestSupport

/// Filters checked pixel by pixel.
@Suite struct FilterTests {
    let context = RunContext(options: RunOptions())

    /// An RGB frame whose pixel (x, y) is (x, y, x + y) modulo 256.
    func coordinateFrame(width: Int, height: Int) -> Frame {
        let f = Frame.make(.rgb24, width: width, height: height)
        for y in 0..<height {
            let r = f.row(y)
            for x in 0..<width {
                r[3 * x] = UInt8(truncatingIfNeeded: x)
                r[3 * x + 1] = UInt8(truncatingIfNeeded: y)
                r[3 * x + 2] = UInt8(truncatingIfNeeded: x + y)
            }
        }
        return f
    }

    func run(_ node: FilterNode, _ frame: Frame) throws -> Frame {
        try #require(try NodeHarness().run(node, frame))
    }

    @Test func cropKeepsTheRectangleWithoutCopying() throws {
        let frame = coordinateFrame(width: 101, height: 61)
        let out = try run(Crop(region: .rect(x: 7, y: 5, width: 31, height: 11)), frame)
        #expect(out.width == 31 && out.height == 11)
        #expect(out.packedPixel(x: 0, y: 0) == [7, 5, 12])
        #expect(out.packedPixel(x: 30, y: 10) == [37, 15, 52])
        #expect(out.buffer === frame.buffer)
    }

    @Test func centreSquareOfYUVRoundsToEvenCoordinates() throws {
        let frame = Frame.make(.yuv420p, width: 101, height: 60)
        for y in 0..<60 { let r = frame.row(y, plane: 0); for x in 0..<101 { r[x] = UInt8(x) } }
        let crop = Crop(region: .centerSquare)
        let out = try #require(try crop.negotiate(inputs: [frame.description]))
        #expect(out.width == 60 && out.height == 60)
        let cropped = try #require(try crop.process(frame, context: context))
        #expect(cropped.row(0, plane: 0)[0] == 20)  // (101 − 60) / 2 = 20, already even
        let odd = Crop(region: .rect(x: 3, y: 3, width: 9, height: 9))
        let d = try #require(try odd.negotiate(inputs: [frame.description]))
        #expect(d.width == 8 && d.height == 8)
        #expect(try #require(try odd.process(frame, context: context)).row(0, plane: 0)[0] == 2)
    }

    @Test func cropOutsideTheFrameNamesNodePortAndField() {
        let crop = Crop(name: "face", region: .rect(x: 600, y: 0, width: 100, height: 100))
        #expect(throws: GraphError.mismatch(node: "face", port: "in", field: "size",
                                            expected: "a frame containing the rectangle 100x100 at (600,0)", got: "640x480")) {
            _ = try crop.negotiate(inputs: [FrameDescription(format: .rgb24, width: 640, height: 480)])
        }
    }

    @Test func resizeOfAUniformFrameStaysUniform() throws {
        let frame = Frame.make(.rgb24, width: 640, height: 480)
        for y in 0..<480 { let r = frame.row(y); for x in 0..<640 { r[3 * x] = 200; r[3 * x + 1] = 100; r[3 * x + 2] = 50 } }
        for method in Scaler.Method.allCases {
            let out = try run(Resize(width: 256, height: 256, method: method), frame)
            #expect(out.width == 256 && out.height == 256)
            for (x, y) in [(0, 0), (128, 128), (255, 255)] {
                let p = out.packedPixel(x: x, y: y)
                #expect(abs(Int(p[0]) - 200) <= 1 && abs(Int(p[1]) - 100) <= 1 && abs(Int(p[2]) - 50) <= 1, "\(method) \(p)")
            }
        }
    }

    @Test func letterboxKeepsTheAspectRatioWithBlackBars() throws {
        let frame = Frame.make(.rgb24, width: 640, height: 320)
        for y in 0..<320 { frame.row(y).update(repeating: 255) }
        let out = try run(Resize(width: 256, height: 256, letterbox: true), frame)
        // 640×320 fits as 256×128, centred: rows 0..<64 and 192..<256 are bars.
        #expect(out.packedPixel(x: 128, y: 10) == [0, 0, 0])
        #expect(out.packedPixel(x: 128, y: 250) == [0, 0, 0])
        #expect(out.packedPixel(x: 128, y: 128) == [255, 255, 255])
        #expect(out.packedPixel(x: 0, y: 70) == [255, 255, 255])
    }

    @Test func floatConversionRoundTripsExactly() throws {
        let frame = coordinateFrame(width: 37, height: 9)
        let float = try run(ConvertFormat(to: .planarFloat32(channels: 3)), frame)
        #expect(float.floatRow(3, plane: 0)[5] == Float(5) / 255)
        #expect(float.floatRow(3, plane: 1)[5] == Float(3) / 255)
        let back = try run(ConvertFormat(to: .rgb24), float)
        #expect(back.packedBytes() == frame.packedBytes())
    }

    @Test func grayscaleOfYUVSharesTheLumaPlane() throws {
        let frame = Frame.make(.yuv420p, width: 64, height: 32)
        frame.fillBlack()
        let out = try run(Grayscale(), frame)
        #expect(out.format == .gray8)
        #expect(out.buffer === frame.buffer)
        #expect(out.row(5)[5] == 16)
    }

    @Test func blendFollowsTheMaskExactly() throws {
        let blend = AlphaBlend()
        let size = FrameDescription(format: .rgb24, width: 3, height: 1)
        let fg = Frame.make(size), bg = Frame.make(size), mask = Frame.make(.gray8, width: 3, height: 1)
        fg.row(0).update(repeating: 200)
        bg.row(0).update(repeating: 10)
        mask.row(0)[0] = 255; mask.row(0)[1] = 0; mask.row(0)[2] = 128
        _ = try blend.negotiate(inputs: [size, size, mask.description])
        let out = try #require(try blend.combine([fg, bg, mask], context: context))
        #expect(out.packedPixel(x: 0, y: 0) == [200, 200, 200])
        #expect(out.packedPixel(x: 1, y: 0) == [10, 10, 10])
        // (200·128 + 10·127) / 255 = 105.39 → 105
        #expect(out.packedPixel(x: 2, y: 0) == [105, 105, 105])
    }

    /// yuv420p frames of widths on both sides of the vector blocks (the chroma rows reading every
    /// other mask sample): every byte of every plane is the exactly rounded mix of its samples under
    /// the mask sample at its position (the chroma's at twice its coordinates).
    @Test(arguments: [(1, 1), (15, 3), (33, 4), (37, 9), (64, 2), (641, 5)])
    func yuvBlendIsExactAtEverySample(width: Int, height: Int) {
        var seed = UInt64(width * 31 + height)
        func random() -> UInt8 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: seed >> 56)
        }
        let fg = Frame.make(.yuv420p, width: width, height: height), bg = Frame.make(.yuv420p, width: width, height: height)
        let mask = Frame.make(.gray8, width: width, height: height), out = Frame.make(.yuv420p, width: width, height: height)
        for f in [fg, bg] { for p in 0..<3 { for y in 0..<(p == 0 ? height : (height + 1) / 2) { let r = f.row(y, plane: p); for i in 0..<r.count { r[i] = random() } } } }
        for y in 0..<height { let r = mask.row(y); for i in 0..<r.count { r[i] = [0, 255, random()][Int(random() % 3)] } }
        AlphaBlend.blend(foreground: fg, background: bg, mask: mask, into: out)
        var wrong = 0
        withExtendedLifetime((fg, bg, mask, out)) {
            for p in 0..<3 {
                let step = p == 0 ? 1 : 2, w = p == 0 ? width : (width + 1) / 2, h = p == 0 ? height : (height + 1) / 2
                for y in 0..<h {
                    for x in 0..<w {
                        let a = Int(mask.row(min(y * step, height - 1))[min(x * step, width - 1)])
                        let f = Int(fg.row(y, plane: p)[x]), b = Int(bg.row(y, plane: p)[x])
                        let expected = Int((Double(f * a + b * (255 - a)) / 255).rounded())
                        if Int(out.row(y, plane: p)[x]) != expected { wrong += 1 }
                    }
                }
            }
        }
        #expect(wrong == 0, "\(width)×\(height): \(wrong) samples differ from the exact mix")
    }

    @Test func blendRejectsAMaskOfAnotherSize() {
        let blend = AlphaBlend(name: "mix")
        let rgb = FrameDescription(format: .rgb24, width: 64, height: 64)
        #expect(throws: GraphError.mismatch(node: "mix", port: "mask", field: "size", expected: "64x64", got: "32x32")) {
            _ = try blend.negotiate(inputs: [rgb, rgb, FrameDescription(format: .gray8, width: 32, height: 32)])
        }
    }

    @Test func steadyStateAllocatesNoFrameMemory() throws {
        let pool = BufferPool()
        var recent: [Frame] = []
        for _ in 0..<200 {
            recent.append(Frame.make(.yuv420p, width: 640, height: 480, pool: pool))
            if recent.count > 3 { recent.removeFirst() }  // a pipeline holds a few frames at a time
        }
        #expect(pool.allocations <= 4)
        #expect(pool.reuses >= 196)
    }
}
