@testable import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// Decoding, encoding and scaling through the FFmpeg wrappers, checked on real files and pixels.
@Suite struct MediaIOTests {
    /// Frames of the stamped test pattern, made without running a graph.
    func patternFrames(_ count: Int, width: Int = 320, height: Int = 240, format: PixelFormat = .yuv420p) throws -> [Frame] {
        let source = PatternSource(width: width, height: height, format: format, frameCount: count)
        let context = RunContext(options: RunOptions())
        try source.start(context: context)
        var frames: [Frame] = []
        while let f = try source.nextFrame(context: context) { frames.append(f) }
        return frames
    }

    /// A clip stored as the webcam's are (H.264, full range, Matroska's millisecond times): the
    /// sample's first 77 frames (TestClips.person).
    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func decodesEveryFrameOfARealClip() throws {
        let (reader, frames) = try TestEnvironment.decodeAll(try TestClips.person())
        #expect(frames.count == 77)
        #expect(reader.width == 640 && reader.height == 480)
        #expect(abs(reader.frameRate - 30) < 0.01)
        for (i, f) in frames.enumerated() {
            #expect(abs(f.mediaTime - Double(i) / 30) < 0.002, "frame \(i) at \(f.mediaTime)")
        }
        // Real pictures, not blank: luma varies across the frame.
        // `row` points into the frame's buffer: keep the frames alive while it is read.
        let luma = withExtendedLifetime(frames) { frames[10].row(240).map(Int.init) }
        #expect((luma.max() ?? 0) - (luma.min() ?? 0) > 50)
    }

    @Test(arguments: ["mp4", "mkv"])
    func encodedFramesDecodeBackInOrderAtTheClockRate(ext: String) throws {
        let dir = TestEnvironment.scratch("encode-\(ext)")
        let path = dir.appendingPathComponent("pattern.\(ext)").path
        let frames = try patternFrames(45)
        let writer = try MediaWriter(path: path, width: 320, height: 240, fps: 30, settings: .init(crf: 10))
        for (i, f) in frames.enumerated() { try writer.write(f, index: i) }
        try writer.finish()
        let (reader, decoded) = try TestEnvironment.decodeAll(path)
        #expect(decoded.count == 45)
        #expect(reader.width == 320 && reader.height == 240)
        #expect(decoded.map { PatternSource.readStamp(from: $0) } == (0..<45).map { Optional($0) })
        for (i, f) in decoded.enumerated() { #expect(abs(f.mediaTime - Double(i) / 30) < 1e-3) }
    }

    /// Frames the encoder takes as they are go in without a copy, referenced by FFmpeg until it is
    /// done: lossless H.264 (crf 0) gives back every byte, and every buffer returns to its pool once
    /// the writer has finished. A cropped view (planes not 64-byte aligned) is copied as before.
    @Test func framesGoToTheEncoderWithoutACopyAndComeBack() throws {
        let dir = TestEnvironment.scratch("zero-copy")
        let path = dir.appendingPathComponent("lossless.mkv").path
        let pool = BufferPool(maxFreePerSize: 64)
        var frames: [Frame] = (0..<12).map { i in
            let f = Frame.make(.yuv420p, width: 192, height: 96, pool: pool)
            for p in 0..<3 {
                for y in 0..<(p == 0 ? 96 : 48) {
                    let row = f.row(y, plane: p)
                    for x in 0..<row.count { row[x] = UInt8(truncatingIfNeeded: (x * 3 + y * 5 + i * 11 + p * 40) & 0xFF) }
                }
            }
            return f
        }
        // The 13th: a view at an odd offset of a larger frame (its planes are not aligned).
        let big = Frame.make(.yuv420p, width: 256, height: 128, pool: pool)
        for p in 0..<3 { for y in 0..<(p == 0 ? 128 : 64) { big.row(y, plane: p).update(repeating: UInt8(60 + 30 * p)) } }
        let view = big.cropped(x: 2, y: 2, width: 192, height: 96)
        #expect(frames[0].planesAligned64 && !view.planesAligned64)
        frames.append(view)
        do {
            let writer = try MediaWriter(path: path, width: 192, height: 96, fps: 30, settings: .init(crf: 0))
            for (i, f) in frames.enumerated() { try writer.write(f, index: i) }
            try writer.finish()
        }
        let (_, decoded) = try TestEnvironment.decodeAll(path)
        #expect(decoded.count == 13)
        withExtendedLifetime((frames, decoded)) {
            for (i, f) in decoded.enumerated() where i < frames.count {
                for p in 0..<3 {
                    for y in stride(from: 0, to: p == 0 ? 96 : 48, by: 7) {
                        #expect(Array(f.row(y, plane: p)) == Array(frames[i].row(y, plane: p)), "frame \(i) plane \(p) row \(y)")
                    }
                }
            }
        }
        let made = pool.allocations
        frames.removeAll()
        _ = view
        // Every block is idle again: as many new frames as were made come from the pool, none allocated.
        let again = (0..<12).map { _ in Frame.make(.yuv420p, width: 192, height: 96, pool: pool) }
        #expect(pool.allocations == made, "\(pool.allocations - made) buffers still held after the writer finished")
        _ = again
    }

    /// An H.264 decoder writes each picture straight into pooled memory: the frames are those
    /// pictures (lossless H.264 gives back every byte), and once the reader and its frames are gone
    /// every block is back in the pool, so a second reading allocates nothing new.
    @Test func picturesAreDecodedIntoPooledFramesAndComeBack() throws {
        let dir = TestEnvironment.scratch("decode-in-place")
        let path = dir.appendingPathComponent("lossless.mp4").path
        let originals = try patternFrames(20, width: 320, height: 240)
        do {
            let writer = try MediaWriter(path: path, width: 320, height: 240, fps: 30, settings: .init(crf: 0))
            for (i, f) in originals.enumerated() { try writer.write(f, index: i) }
            try writer.finish()
        }
        let pool = BufferPool(maxFreePerSize: 64)
        func readAll() throws -> (served: Int, frames: [Frame]) {
            let reader = try MediaReader(path: path, pool: pool)
            var frames: [Frame] = []
            while let f = try reader.nextFrame() { frames.append(f) }
            return (reader.decoderBuffers.served, frames)
        }
        var (served, frames) = try readAll()
        #expect(frames.count == 20)
        #expect(served >= 20, "pictures decoded into pooled memory: \(served)")
        withExtendedLifetime((frames, originals)) {
            for (i, f) in frames.enumerated() {
                #expect(f.buffer.capacity > 0 && f.format == .yuv420p)
                for p in 0..<3 {
                    for y in stride(from: 0, to: p == 0 ? 240 : 120, by: 11) {
                        #expect(Array(f.row(y, plane: p)) == Array(originals[i].row(y, plane: p)), "frame \(i) plane \(p) row \(y)")
                    }
                }
            }
        }
        frames.removeAll()
        let made = pool.allocations
        (served, frames) = try readAll()
        #expect(frames.count == 20 && pool.allocations == made, "\(pool.allocations - made) blocks allocated again: some never came back")
    }

    @Test func pngRoundTripKeepsEveryPixel() throws {
        let dir = TestEnvironment.scratch("png")
        let path = dir.appendingPathComponent("frame.png").path
        // An odd width exercises padded rows (stride 1024 bytes for 321 RGB pixels = 963 bytes).
        let frame = Frame.make(.rgb24, width: 321, height: 17)
        for y in 0..<17 {
            let row = frame.row(y)
            for x in 0..<row.count { row[x] = UInt8(truncatingIfNeeded: x * 7 + y * 13) }
        }
        try ImageWriter().writePNG(frame, to: path)
        let (_, decoded) = try TestEnvironment.decodeAll(path)
        let back = try #require(decoded.first)
        #expect(back.format == .rgb24 && back.width == 321 && back.height == 17)
        #expect(back.packedBytes() == frame.packedBytes())
    }

    @Test func scalerConvertsOddSizedYUVToRGB() throws {
        let frame = Frame.make(.yuv420p, width: 33, height: 21)
        frame.fillBlack()
        // Mid-grey luma and neutral chroma everywhere.
        for y in 0..<21 { frame.row(y, plane: 0).update(repeating: 126) }
        let rgb = Frame.make(.rgb24, width: 33, height: 21)
        try Scaler().scale(frame, into: rgb)
        withExtendedLifetime(rgb) {  // rows point into the frame
            for y in [0, 10, 20] {
                for v in rgb.row(y) { #expect(abs(Int(v) - 128) <= 2) }  // (126 − 16) × 255/219 ≈ 128
            }
        }
    }

    @Test func missingFileIsNamed() {
        #expect {
            _ = try MediaReader(path: "/nonexistent/clip.mp4")
        } throws: { error in
            "\(error)".contains("/nonexistent/clip.mp4") && "\(error)".contains("no such file")
        }
    }

    @Test func textFileNamedMP4IsRejectedClearly() throws {
        let dir = TestEnvironment.scratch("text-mp4")
        let path = dir.appendingPathComponent("notes.mp4").path
        try "just some text, not a video\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try MediaReader(path: path)
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("Invalid data")
        }
    }

    @Test func cutFileYieldsTheFramesBeforeTheDamageThenAnError() throws {
        let dir = TestEnvironment.scratch("cut")
        let path = dir.appendingPathComponent("whole.mp4").path
        let writer = try MediaWriter(path: path, width: 320, height: 240, fps: 30, settings: .init(crf: 10))
        for (i, f) in try patternFrames(90).enumerated() { try writer.write(f, index: i) }
        try writer.finish()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = dir.appendingPathComponent("cut.mp4").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let reader = try MediaReader(path: cut)
        var stamps: [Int?] = []
        var damage: MediaReader.Damage?
        do {
            while let f = try reader.nextFrame() { stamps.append(PatternSource.readStamp(from: f)) }
        } catch let d as MediaReader.Damage {
            damage = d
        }
        let d = try #require(damage, "a cut file must be reported, not read as a short one")
        #expect(stamps.count > 30 && stamps.count < 90)
        // Everything before the damage, in order; near the cut a damaged frame may be skipped.
        #expect(Array(stamps.prefix(30)) == (0..<30).map { Optional($0) })
        let numbers = stamps.compactMap { $0 }
        #expect(numbers.count == stamps.count && zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 })
        #expect(d.description.contains(cut))
        #expect(d.framesDecoded == stamps.count)
    }
}
