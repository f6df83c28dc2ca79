import Foundation
import FrameGraphMedia
import Testing
import TestSupport

/// Which x264 presets a live encoder with `preset=auto` uses: `veryfast` first, stepping to
/// `superfast` or `ultrafast` when encoding nears half the tick; with more streams than cores (each
/// encoder then has less than a core's share) `superfast` first, never `veryfast`.
struct LiveEncoderPresetTests {
    @Test func moreStreamsThanCoresStartAtSuperfast() {
        #expect(FileSink.autoLadder(streams: 1, cores: 2) == ["ultrafast", "superfast", "veryfast"])
        #expect(FileSink.autoLadder(streams: 2, cores: 2) == ["ultrafast", "superfast", "veryfast"])
        #expect(FileSink.autoLadder(streams: 3, cores: 2) == ["ultrafast", "superfast"])
        #expect(FileSink.autoLadder(streams: 8, cores: 2) == ["ultrafast", "superfast"])
        #expect(FileSink.autoLadder(streams: 8, cores: 16) == ["ultrafast", "superfast", "veryfast"])
        #expect(FileSink.autoLadder(streams: 2, cores: 0) == ["ultrafast", "superfast"])
    }

    static let clip = TestEnvironment.root.appendingPathComponent("samples/media/portrait.mp4").path

    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount <= 7, "a run of cores + 1 streams is too large a test on this many cores"),
          .enabled(if: FileManager.default.fileExists(atPath: clip), "needs samples/media/portrait.mp4 (tools/make-samples.sh)"))
    func aLiveRunWithMoreStreamsThanCoresEncodesAtSuperfast() throws {
        let streams = ProcessInfo.processInfo.activeProcessorCount + 1
        let clip = Self.clip
        let dir = TestEnvironment.scratch("live-encoder-preset")
        let pipeline = TestEnvironment.root.appendingPathComponent("pipelines/transcode.fg").path
        let inputs = (0..<streams).flatMap { _ in ["-i", clip] }
        let r = try runCommand(TestEnvironment.cli, ["run", pipeline] + inputs + ["--mode", "live", "--duration", "1", "--set", "output.preset=auto",
                                                     "--output", "out/{stream}.mp4", "--stats", "stats.json", "--quiet"], timeout: 60, in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("stats.json"))) as? [String: Any])
        let encoder = stats["encoder"] as? [String: Any] ?? [:]
        #expect(encoder["startPreset"] as? String == "superfast", "\(encoder)")
    }
}
