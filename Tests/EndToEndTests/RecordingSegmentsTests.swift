import Foundation
import Testing
import TestSupport

/// Continuous recording: the encode sink cut into segments, each a complete file that plays, listed
/// in the folder's index, with retention keeping the newest.
@Suite(.serialized) struct RecordingSegmentsTests {
    struct Segment: Decodable {
        var file: String
        var start: String
        var end: String
        var frames: Int
        var bytes: Int64
    }

    func record(_ name: String, extra: String = "") throws -> (dir: URL, index: [Segment], status: Int32, stderr: String) {
        let dir = TestEnvironment.scratch("segments-\(name)")
        try? FileManager.default.removeItem(at: dir.appendingPathComponent("cam1"))
        let r = try runCommand(TestEnvironment.cli, ["run", "-e", "pattern width=320 height=240 frames=150 fps=30 -> encode path=cam1/rec.mp4 segment-frames=30 threads=1 \(extra)",
                                                     "--quiet"], timeout: 60, in: dir)
        let data = (try? Data(contentsOf: dir.appendingPathComponent("cam1/index.jsonl"))) ?? Data()
        let index = data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONDecoder().decode(Segment.self, from: Data($0)) }
        return (dir, index, r.status, r.stderr)
    }

    @Test(.enabled(if: ffprobePath != nil, "needs ffprobe (scripts/install-deps.sh)"))
    func everySegmentPlaysAndTheIndexListsThem() throws {
        let r = try record("all")
        #expect(r.status == 0, "\(r.stderr)")
        // 150 frames cut every 30: five segments of 30 frames, named by their start time.
        #expect(r.index.count == 5 && r.index.allSatisfy { $0.frames == 30 }, "\(r.index.map(\.frames))")
        for segment in r.index {
            #expect(segment.file.range(of: #"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(-\d+)?\.mp4$"#, options: .regularExpression) != nil, "\(segment.file)")
            let path = r.dir.appendingPathComponent("cam1").appendingPathComponent(segment.file).path
            let probe = try runCommand(try #require(ffprobePath), ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                                  "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path], timeout: 60)
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "30", "\(segment.file): \(probe.stdout) \(probe.stderr)")
        }
        // Nothing else in the folder: no temporary file left behind, no unlisted segment.
        let files = try FileManager.default.contentsOfDirectory(atPath: r.dir.appendingPathComponent("cam1").path).sorted()
        #expect(files == (r.index.map(\.file) + ["index.jsonl"]).sorted(), "\(files)")
    }

    @Test func retentionKeepsTheNewestWithinTheByteLimit() throws {
        let all = try record("sizes")
        try #require(all.index.count == 5)
        // The same recording with room for the last two segments and less than a third (segments
        // differ by a few hundred bytes from run to run): the three oldest are deleted as newer ones finish.
        let smallest = all.index.map(\.bytes).min() ?? 0
        let keep = all.index[3].bytes + all.index[4].bytes + smallest / 2
        let kept = try record("keep", extra: "keep-bytes=\(keep)")
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.index.count == 2 && kept.index.allSatisfy { $0.frames == 30 }, "\(kept.index.map(\.bytes)) of \(all.index.map(\.bytes)), keep \(keep)")
        let files = try FileManager.default.contentsOfDirectory(atPath: kept.dir.appendingPathComponent("cam1").path)
        #expect(files.count == 3, "\(files)")
    }
}
