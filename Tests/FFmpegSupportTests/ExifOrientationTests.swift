import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// Photos are turned upright by their EXIF orientation (FFmpeg 5 does not do it): JPEGs written by
/// Pillow with each orientation 1…8 of one picture (four coloured quadrants) all read back upright.
@Suite struct ExifOrientationTests {
    static let python = TestEnvironment.root.appendingPathComponent(".venv-tools/bin/python").path

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: python), "needs the tools venv (.venv-tools with Pillow)"))
    func everyOrientationReadsUpright() throws {
        let dir = TestEnvironment.scratch("exif-orientation")
        let script = """
        import sys
        from PIL import Image
        up = Image.new("RGB", (64, 48))
        for (x, y, c) in [(0, 0, (230, 20, 20)), (32, 0, (20, 230, 20)), (0, 24, (20, 20, 230)), (32, 24, (240, 240, 240))]:
            up.paste(c, (x, y, x + 32, y + 24))
        inverse = {2: Image.FLIP_LEFT_RIGHT, 3: Image.ROTATE_180, 4: Image.FLIP_TOP_BOTTOM, 5: Image.TRANSPOSE,
                   6: Image.ROTATE_90, 7: Image.TRANSVERSE, 8: Image.ROTATE_270}
        for o in range(1, 9):
            stored = up.transpose(inverse[o]) if o in inverse else up
            exif = Image.Exif(); exif[0x0112] = o
            stored.save(f"{sys.argv[1]}/o{o}.jpg", quality=95, exif=exif.tobytes())
        """
        let r = try runCommand(Self.python, ["-c", script, dir.path])
        try #require(r.status == 0, "\(r.stderr)")
        for o in 1...8 {
            let path = dir.appendingPathComponent("o\(o).jpg").path
            #expect(ExifOrientation.read(path: path) == o)
            let reader = try MediaReader(path: path, options: .init())
            let frame = try #require(try reader.nextFrame())
            #expect(frame.width == 64 && frame.height == 48, "orientation \(o): \(frame.width)×\(frame.height)")
            let rgb = Frame.make(.rgb24, width: frame.width, height: frame.height)
            try Scaler(method: .bilinear).scale(frame, into: rgb)
            for (x, y, colour) in [(16, 12, [230, 20, 20]), (48, 12, [20, 230, 20]), (16, 36, [20, 20, 230]), (48, 36, [240, 240, 240])] {
                let row = rgb.row(y)
                let pixel = (0..<3).map { Int(row[x * 3 + $0]) }
                #expect(zip(pixel, colour).allSatisfy { abs($0 - $1) < 40 }, "orientation \(o): (\(x), \(y)) is \(pixel), expected \(colour)")
            }
            // Kept as stored when asked (the output then carries nothing: a photo has no display matrix).
            let carried = try #require(try MediaReader(path: path, options: .init(orientation: .carry)).nextFrame())
            #expect((5...8).contains(o) ? carried.width == 48 : carried.width == 64)
        }
    }

    @Test func damagedOrForeignBytesHaveNoOrientation() {
        #expect(ExifOrientation.read([]) == nil)
        #expect(ExifOrientation.read([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x40] + Array("Exif\0\0".utf8) + [0x49, 0x49]) == nil)  // length past the end
        // A minimal EXIF segment: TIFF little-endian, IFD0 with one entry 0x0112 = 6.
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        let segment = Array("Exif\0\0".utf8) + tiff
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8((segment.count + 2) >> 8), UInt8((segment.count + 2) & 0xFF)] + segment + [0xFF, 0xDA]
        #expect(ExifOrientation.read(jpeg) == 6)
        var wrongType = jpeg
        wrongType[6 + 6 + 12] = 4  // LONG instead of SHORT
        #expect(ExifOrientation.read(wrongType) == nil)
        var outOfRange = jpeg
        outOfRange[6 + 6 + 18] = 9
        #expect(ExifOrientation.read(outOfRange) == nil)
        #expect(ExifOrientation.read(Array("not a jpeg at all".utf8)) == nil)
    }
}
