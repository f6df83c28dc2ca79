import FFmpegSupport
import Foundation
import FrameGraph
@testable import FrameGraphServe
import Testing
import TestSupport

/// The live view's JPEG encoder (libjpeg-turbo from the frame's planes): what FFmpeg decodes from its
/// pictures is the frame's picture in full range, for limited-range video (stretched by the table on
/// the way in), full-range frames (as they are), RGB (converted) and odd sizes.
struct JPEGStreamEncoderTests {
    /// A yuv420p frame whose luma is a horizontal ramp `lo…hi` and whose chroma is flat.
    static func ramp(width: Int, height: Int, lo: Int, hi: Int, cb: UInt8, cr: UInt8, color: ColorDescription) -> Frame {
        var frame = Frame.make(.yuv420p, width: width, height: height)
        frame.color = color
        for y in 0..<height {
            let row = frame.row(y, plane: 0)
            for x in 0..<width { row[x] = UInt8(lo + (hi - lo) * x / max(1, width - 1)) }
        }
        for y in 0..<(height + 1) / 2 {
            let u = frame.row(y, plane: 1), v = frame.row(y, plane: 2)
            for x in 0..<(width + 1) / 2 { u[x] = cb; v[x] = cr }
        }
        return frame
    }

    /// The JPEG decoded by FFmpeg (yuvj420p, handed out as yuv420p holding full-range values).
    static func decode(_ jpeg: [UInt8], name: String) throws -> Frame {
        let file = TestEnvironment.scratch("jpeg-stream-encoder").appendingPathComponent(name)
        try Data(jpeg).write(to: file)
        let reader = try MediaReader(path: file.path)
        return try #require(try reader.nextFrame())
    }

    @Test func limitedRangeVideoComesOutStretchedToFullRange() throws {
        // Luma 16…235 (video black to white) across 256 columns; chroma 128 (grey).
        let frame = Self.ramp(width: 256, height: 64, lo: 16, hi: 235, cb: 128, cr: 128, color: .bt601)
        let jpeg = try JPEGStreamEncoder().encode(frame)
        #expect(jpeg.prefix(2) == [0xFF, 0xD8] && jpeg.suffix(2) == [0xFF, 0xD9])
        let decoded = try Self.decode(jpeg, name: "limited.jpg")
        #expect(decoded.width == 256 && decoded.height == 64)
        // Each column's luma is the table's full-range value of the source's (JPEG at quality 75 on a
        // smooth ramp: within 3 levels); the ends are 0 and 255, not 16 and 235.
        var worst = 0
        for y in [8, 31, 56] {
            let src = frame.row(y, plane: 0), out = decoded.row(y, plane: 0)
            for x in 0..<256 { worst = max(worst, abs(Int(out[x]) - Int(JPEGStreamEncoder.lumaTable[Int(src[x])]))) }
        }
        #expect(worst <= 3, "largest luma difference \(worst)")
        #expect(decoded.row(32, plane: 0)[0] <= 3 && decoded.row(32, plane: 0)[255] >= 252)
        #expect(abs(Int(decoded.row(10, plane: 1)[40]) - 128) <= 2 && abs(Int(decoded.row(10, plane: 2)[40]) - 128) <= 2)
    }

    @Test func fullRangeFramesGoInAsTheyAre() throws {
        let full = ColorDescription(range: .full, matrix: ColorDescription.bt601Code, primaries: 6, transfer: 6)
        let frame = Self.ramp(width: 256, height: 48, lo: 0, hi: 255, cb: 90, cr: 200, color: full)
        let decoded = try Self.decode(try JPEGStreamEncoder().encode(frame), name: "full.jpg")
        var worst = 0
        let src = frame.row(20, plane: 0), out = decoded.row(20, plane: 0)
        for x in 0..<256 { worst = max(worst, abs(Int(out[x]) - Int(src[x]))) }
        #expect(worst <= 3, "largest luma difference \(worst)")
        #expect(abs(Int(decoded.row(5, plane: 1)[10]) - 90) <= 2 && abs(Int(decoded.row(5, plane: 2)[10]) - 200) <= 2)
    }

    @Test func rgbIsConvertedAndOddSizesKeepTheirSize() throws {
        // Pure red, 37x21 (odd: the last block column and row are padded inside the encoder).
        var frame = Frame.make(.rgb24, width: 37, height: 21)
        for y in 0..<21 {
            let row = frame.row(y)
            for x in 0..<37 { row[3 * x] = 255; row[3 * x + 1] = 0; row[3 * x + 2] = 0 }
        }
        frame.color = .unspecified
        let encoder = JPEGStreamEncoder()
        let decoded = try Self.decode(try encoder.encode(frame), name: "red.jpg")
        #expect(decoded.width == 37 && decoded.height == 21)
        // Full-range BT.601 red: Y' = 0.299 × 255 = 76, Cb = 128 − 0.1687 × 255 = 85, Cr = 255.
        #expect(abs(Int(decoded.row(10, plane: 0)[18]) - 76) <= 3)
        #expect(abs(Int(decoded.row(5, plane: 1)[9]) - 85) <= 3 && Int(decoded.row(5, plane: 2)[9]) >= 250)
        // The same encoder then takes another size.
        let small = Self.ramp(width: 16, height: 16, lo: 16, hi: 235, cb: 128, cr: 128, color: .bt601)
        #expect(try Self.decode(try encoder.encode(small), name: "small.jpg").width == 16)
    }

    @Test func floatFramesAreRefusedInOneLine() {
        let frame = Frame.make(.planarFloat32(channels: 1), width: 8, height: 8)
        #expect(throws: JPEGStreamEncoder.Failure.self) { try JPEGStreamEncoder().encode(frame) }
    }
}
