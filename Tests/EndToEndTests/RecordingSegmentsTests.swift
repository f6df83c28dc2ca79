import Foundation
import Testing
import TestSupport

/// Continuous recording: the encode sink cut into segments, each a complete file that plays, listed
/// in the folder's index, with retention keeping the newest (by bytes, and by age in a live run).
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

    @Test(.enabled(if: ffprobePath != nil, "needs ffprobe (scripts/install-deps.sh)"))
    func ageRetentionDeletesTheOldestInARealRunNeverTheOneBeingWritten() throws {
        let dir = TestEnvironment.scratch("segments-age")
        try? FileManager.default.removeItem(at: dir.appendingPathComponent("cam1"))
        let trace = dir.appendingPathComponent("trace.json"), stats = dir.appendingPathComponent("stats.json")
        // Live for 6 s: a segment a second (30 ticks), kept while it ended at most 1.5 s before the
        // newest was finished.
        let r = try runCommand(TestEnvironment.cli, ["run", "-e", "pattern width=320 height=240 frames=100000 fps=30 -> encode path=cam1/rec.mp4 segment=1s keep=1.5s threads=1",
                                                     "--mode", "live", "--duration", "6", "--trace", trace.path, "--stats", stats.path, "--quiet"], timeout: 60, in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any])
        let framesOut = report["framesOut"] as? Int ?? 0
        let data = (try? Data(contentsOf: dir.appendingPathComponent("cam1/index.jsonl"))) ?? Data()
        let index = data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONDecoder().decode(Segment.self, from: Data($0)) }
        let text = try String(contentsOf: trace, encoding: .utf8)
        let deleted = text.matches(of: /retention deleted ([0-9T-]+\.mp4)/).map { String($0.output.1) }
        // Segments of 30 frames, the last one what was left (finished as the run ended): about
        // 6 s − D of ticks make six. Segment k ends about k + 1 s in; at each end those that ended 2 s
        // or more before go (1.5 s < 2 s), those that ended 1 s before stay: at the end the last two
        // are kept, the four before them deleted, oldest first.
        let total = (framesOut + 29) / 30
        #expect(total >= 5, "\(framesOut) frames out")
        #expect(index.count == 2 && deleted.count == total - 2, "kept \(index.map(\.file)), deleted \(deleted), \(framesOut) frames out")
        // Names sort by start time: the second, then the `-2`, `-3` of segments started within it.
        func order(_ file: String) -> (String, Int) {
            guard let m = file.firstMatch(of: /^(.*T\d\d-\d\d-\d\d)(?:-(\d+))?\.mp4$/) else { return (file, 0) }
            return (String(m.output.1), m.output.2.flatMap { Int($0) } ?? 1)
        }
        #expect(deleted.map(order).elementsEqual(deleted.map(order).sorted(by: <), by: ==)
                && deleted.allSatisfy { old in index.allSatisfy { order(old) < order($0.file) } }, "deleted \(deleted), kept \(index.map(\.file))")
        // Every frame is in a kept segment or a deleted full one; the newest (being written until the
        // end) is kept whole.
        #expect(index.reduce(0) { $0 + $1.frames } + 30 * deleted.count == framesOut, "\(index.map(\.frames)), \(framesOut)")
        #expect(index.first?.frames == 30 && (index.last?.frames ?? 0) == framesOut - 30 * (total - 1), "\(index.map(\.frames))")
        // The folder and the index agree, and what is kept plays.
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("cam1").path).sorted()
        #expect(files == (index.map(\.file) + ["index.jsonl"]).sorted(), "\(files)")
        for segment in index {
            let path = dir.appendingPathComponent("cam1").appendingPathComponent(segment.file).path
            let probe = try runCommand(try #require(ffprobePath), ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                                  "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path], timeout: 60)
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(segment.frames), "\(segment.file): \(probe.stdout) \(probe.stderr)")
        }
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
