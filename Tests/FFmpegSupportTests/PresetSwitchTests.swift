@testable import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// A live x264 encoder changing its preset mid-stream (`preset=auto`): same stream headers, every
/// frame decodes back in order, and no frame is held inside the encoder.
@Suite struct PresetSwitchTests {
    func patternFrames(_ count: Int) throws -> [Frame] {
        let source = PatternSource(width: 320, height: 240, frameCount: count)
        let context = RunContext(options: RunOptions())
        try source.start(context: context)
        var frames: [Frame] = []
        while let f = try source.nextFrame(context: context) { frames.append(f) }
        return frames
    }

    func liveSettings() -> MediaWriter.Settings {
        var settings = MediaWriter.Settings(crf: 10, preset: MediaWriter.Settings.autoPreset, threads: 2)
        settings.lowLatency = true
        settings.switchablePreset = true
        return settings
    }

    @Test(arguments: ["mp4", "mkv"])
    func everyPresetOfTheLadderSharesTheHeadersAndDecodesBack(ext: String) throws {
        let path = TestEnvironment.scratch("preset-switch-\(ext)").appendingPathComponent("switch.\(ext)").path
        let frames = try patternFrames(120)
        let writer = try MediaWriter(path: path, width: 320, height: 240, fps: 30, settings: liveSettings())
        #expect(writer.preset == "veryfast")
        // 30 frames at each preset: veryfast, superfast, ultrafast, veryfast again.
        let plan = [(30, "superfast"), (60, "ultrafast"), (90, "veryfast")]
        for (i, f) in frames.enumerated() {
            if let next = plan.first(where: { $0.0 == i })?.1 {
                #expect(try writer.switchPreset(next), "switch to \(next) at frame \(i)")
                #expect(writer.preset == next)
            }
            try writer.write(f, index: i)
            // Low latency: each frame's packet is out of the encoder when write returns.
            #expect(writer.packetsWritten == i + 1)
        }
        try writer.finish()
        let (_, decoded) = try TestEnvironment.decodeAll(path)
        #expect(decoded.map { PatternSource.readStamp(from: $0) } == (0..<120).map { Optional($0) })
    }

    @Test func aWriterNotMadeSwitchableKeepsItsPreset() throws {
        let path = TestEnvironment.scratch("preset-fixed").appendingPathComponent("fixed.mp4").path
        let writer = try MediaWriter(path: path, width: 320, height: 240, fps: 30, settings: .init(preset: "veryfast"))
        #expect(try writer.switchPreset("ultrafast") == false)
        #expect(writer.preset == "veryfast")
        for (i, f) in try patternFrames(5).enumerated() { try writer.write(f, index: i) }
        try writer.finish()
    }
}
