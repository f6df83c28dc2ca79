import Foundation
import FrameGraph
import FrameGraphDraw
import Testing
import TestSupport

/// The annotate node draws known results on a known frame: pixels are checked where the box edges,
/// points, lines and text must be, and where they must not.
@Suite struct AnnotateTests {
    static let grey: UInt8 = 100

    func greyFrame(_ format: PixelFormat, width: Int = 320, height: Int = 240) -> Frame {
        let frame = Frame.make(format, width: width, height: height)
        for p in 0..<format.planeCount {
            let rows = format.planeGeometry(p, width: width, height: height).rows
            for y in 0..<rows {
                let row = frame.row(y, plane: p)
                for x in row.indices { row[x] = p == 0 ? Self.grey : 128 }
            }
        }
        return frame
    }

    /// Draws `results` on `frame` through the node as the runner would (negotiate, then combine).
    func annotate(_ frame: Frame, _ results: Results, style: Annotate.Style) throws -> Frame {
        let node = Annotate(name: "marks", style: style, resultPorts: 1)
        _ = try node.negotiate(inputs: [frame.description, frame.description])
        var carrier = frame
        carrier.results = results
        return try #require(try node.combine([frame, carrier], context: RunContext(options: RunOptions())))
    }

    func rgb(_ f: Frame, _ x: Int, _ y: Int) -> [UInt8] { f.packedPixel(x: x, y: y) }

    @Test func boxEdgesPointsAndLabelTextLandWhereTheResultsSay() throws {
        let frame = greyFrame(.rgb24)
        let results = Results(producer: "net", detections: [
            Detection(box: ResultBox(x: 0.25, y: 0.5, width: 0.5, height: 0.25), score: 0.9, label: "cat", index: 1,
                      keypoints: [ResultPoint(x: 0.5, y: 0.625)]),
        ])
        let out = try annotate(frame, results, style: .init(thickness: 3, textSize: 14, pointRadius: 4))
        let c = Paint(rgb: Paint.palette[1])
        let colour = [c.r, c.g, c.b], grey = [Self.grey, Self.grey, Self.grey]
        // Box: x 80..<240, y 120..<180, outline 3 px inside it.
        for y in [125, 150, 170] {
            #expect(rgb(out, 79, y) == grey)
            #expect(rgb(out, 80, y) == colour && rgb(out, 82, y) == colour)
            #expect(rgb(out, 83, y) == grey)
            #expect(rgb(out, 239, y) == colour && rgb(out, 237, y) == colour && rgb(out, 236, y) == grey && rgb(out, 240, y) == grey)
        }
        for x in [100, 200] {
            #expect(rgb(out, x, 179) == colour && rgb(out, x, 177) == colour && rgb(out, x, 176) == grey && rgb(out, x, 180) == grey)
            #expect(rgb(out, x, 122) == colour)
        }
        // Keypoint at (160, 150), radius 4: its centre in the box colour, 6 px away untouched.
        #expect(rgb(out, 160, 150) == colour)
        #expect(rgb(out, 166, 150) == grey)
        // Label "cat 90%" on a box-coloured tag just above the box: dark text pixels inside the tag,
        // nothing drawn right of it or above it.
        let font = try FontFace(path: try #require(FontFace.defaultFontPath), pixelSize: 14)
        let pad = max(2, 14 / 6), tagHeight = font.lineHeight + pad
        let tagRight = 80 + font.width(of: "cat 90%") + 2 * pad
        var dark = 0
        for y in (120 - tagHeight)..<120 {
            for x in 80..<tagRight where rgb(out, x, y)[0] < 60 { dark += 1 }
            for x in tagRight..<(tagRight + 20) { #expect(rgb(out, x, y) == grey) }
        }
        #expect(dark > 20, "text pixels in the tag: \(dark)")
        for x in 80..<tagRight { #expect(rgb(out, x, 120 - tagHeight - 1) == grey) }
        // The input frame itself is untouched (drawing happens on a copy).
        #expect(rgb(frame, 80, 150) == grey)
    }

    @Test func landmarkLinesAndClassificationTextAreDrawn() throws {
        let frame = greyFrame(.rgb24)
        let line = LandmarkTopology(name: "test-line", connections: [.init(0, 1)])
        let results = Results(producer: "net",
                              landmarks: [LandmarkSet(label: "hand", points: [Landmark(x: 0.1, y: 0.9), Landmark(x: 0.9, y: 0.9)], topology: line)],
                              classifications: [Classification(label: "kitchen", confidence: 0.75, index: 3)])
        let out = try annotate(frame, results, style: .init(thickness: 4, textSize: 16, pointRadius: 3))
        let c = Paint(rgb: Paint.forClass(index: nil, label: "hand"))
        // The line from (32, 216) to (288, 216), 2 px wide (half the box thickness), points at both ends.
        for x in stride(from: 40, to: 280, by: 20) {
            #expect(rgb(out, x, 216) == [c.r, c.g, c.b])
            #expect(rgb(out, x, 212) == [Self.grey, Self.grey, Self.grey])
        }
        // "kitchen 75%" in white on a shaded strip at the top left.
        var white = 0
        for y in 0..<30 { for x in 0..<120 where rgb(out, x, y).allSatisfy({ $0 > 220 }) { white += 1 } }
        #expect(white > 30, "white text pixels: \(white)")
        for y in 0..<30 { #expect(rgb(out, 200, y) == [Self.grey, Self.grey, Self.grey]) }
    }

    @Test func yuvFramesGetTheSameColourInLumaAndChroma() throws {
        let frame = greyFrame(.yuv420p)
        let results = Results(producer: "net", detections: [Detection(box: ResultBox(x: 0.25, y: 0.25, width: 0.5, height: 0.5), score: 1, index: 2)])
        let out = try annotate(frame, results, style: .init(thickness: 4, labels: false))
        let c = Paint(rgb: Paint.palette[2], for: frame.color, height: 240)
        #expect(out.row(120, plane: 0)[80] == c.y && out.row(120, plane: 0)[83] == c.y)
        #expect(out.row(120, plane: 0)[84] == Self.grey && out.row(120, plane: 0)[79] == Self.grey)
        #expect(out.row(60, plane: 1)[40] == c.cb && out.row(60, plane: 2)[40] == c.cr)
        #expect(out.row(60, plane: 1)[60] == 128)  // inside the box: chroma untouched
    }

    @Test func resultsOutsideTheFrameOrAbsurdAreClippedNotFatal() throws {
        let frame = greyFrame(.nv12, width: 64, height: 48)
        let results = Results(producer: "net",
                              detections: [Detection(box: ResultBox(x: -1e30, y: 3e38, width: 1e38, height: -5), score: .nan, label: "x"),
                                           Detection(box: ResultBox(x: 0.9, y: 0.9, width: 2, height: 2), score: 1, label: String(repeating: "w", count: 500))],
                              landmarks: [LandmarkSet(points: [Landmark(x: .infinity, y: 0.5), Landmark(x: -4e9, y: 9e9)],
                                                      topology: LandmarkTopology(name: "bad", connections: [.init(0, 1), .init(5, -2)]))])
        _ = try annotate(frame, results, style: .init())
    }

    @Test func aMissingFontIsRefusedBeforeTheRunNamingTheFile() throws {
        let node = Annotate(name: "marks", style: .init(font: "no/such/font.ttf"), resultPorts: 0)
        #expect(throws: GraphError.self) { _ = try node.negotiate(inputs: [FrameDescription(format: .rgb24, width: 64, height: 48)]) }
        do {
            _ = try node.negotiate(inputs: [FrameDescription(format: .rgb24, width: 64, height: 48)])
        } catch {
            #expect("\(error)".contains("node 'marks': option 'font': font no/such/font.ttf:"), "\(error)")
        }
        let notAFont = TestEnvironment.scratch("annotate-font").appendingPathComponent("fake.ttf")
        try Data("not a font".utf8).write(to: notAFont)
        let fake = Annotate(name: "marks", style: .init(font: notAFont.path), resultPorts: 0)
        do {
            _ = try fake.negotiate(inputs: [FrameDescription(format: .rgb24, width: 64, height: 48)])
            Issue.record("a text file was accepted as a font")
        } catch {
            #expect("\(error)".contains("not a font FreeType can read"), "\(error)")
        }
    }

    @Test func aHudLineShowsTheRunsCounters() throws {
        let s = PatternSource(width: 320, height: 240, format: .rgb24, frameCount: 3)
        let marks = Annotate(name: "marks", style: .init(textSize: 16, hud: true), resultPorts: 0)
        let sink = FrameCollector(name: "out")
        s --> marks --> sink
        let report = try GraphRunner(sources: [s], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil)
        let last = try #require(sink.last)
        var white = 0
        for y in 16..<40 { for x in 0..<300 where last.packedPixel(x: x, y: y).allSatisfy({ $0 > 220 }) { white += 1 } }
        #expect(white > 40, "HUD text pixels: \(white)")  // the line's numbers vary with timing; ~45 characters at 16 px
    }
}
