import FrameGraph
import FrameGraphMedia
import Foundation
import Testing
import TestSupport

/// Retention of continuous recording (``SegmentPlan``), on the plan's own clock: every "now" is
/// given, so a day of segments is tested without waiting for it. Files are real (in a scratch
/// folder); the index is read back as a player would.
struct SegmentRetentionTests {
    let day = 86_400.0
    /// 2026-12-03T00:00:00Z.
    let midnight = Date(timeIntervalSince1970: 1_796_256_000)

    /// A plan over a fresh folder.
    func recorder(_ name: String, keep: SegmentPlan.Options) throws -> (folder: URL, plan: SegmentPlan) {
        let folder = TestEnvironment.scratch("retention-\(name)")
        return (folder, try SegmentPlan(path: folder.appendingPathComponent("rec.mp4").path, options: keep))
    }

    /// "Records" a segment of `bytes` bytes for the ten minutes from `start`, finished at `now`
    /// (default: its end); returns what retention deleted.
    func record(_ plan: inout SegmentPlan, start: Date, bytes: Int = 1000, now: Date? = nil) throws -> [String] {
        let path = plan.nextPath(startingAt: start)
        try Data(count: bytes).write(to: URL(fileURLWithPath: path))
        let end = start.addingTimeInterval(600)
        return try plan.finished(path: path, start: start, end: end, frames: 18_000, now: now ?? end)
    }

    func files(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "index.jsonl" }.sorted()
    }

    @Test func keepByAgeDeletesSegmentsThatEndedTooLongAgoOldestFirst() throws {
        var (folder, plan) = try recorder("age", keep: .init(seconds: 600, keepSeconds: day))
        // 30 hours of 10-minute segments (180), each finished as it ends. After the last one, at
        // 30:00, those that ended more than 24 h earlier are gone: segments 0…34 (ending 00:10 …
        // 05:50); segment 35 ends at 06:00, exactly 24 h old, not older, and stays: 145 kept.
        var deleted: [String] = []
        for i in 0..<180 {
            deleted += try record(&plan, start: midnight.addingTimeInterval(Double(i) * 600))
        }
        #expect(deleted.count == 35, "\(deleted.count)")
        #expect(deleted.first == "2026-12-03T00-00-00.mp4" && deleted.last == "2026-12-03T05-40-00.mp4", "\(deleted.first ?? "-") … \(deleted.last ?? "-")")
        #expect(plan.entries.count == 145 && plan.entries.first?.file == "2026-12-03T05-50-00.mp4", "\(plan.entries.first?.file ?? "-")")
        #expect(plan.deleted == 35)
        // What the folder and the index hold agree.
        #expect(try files(folder) == plan.entries.map(\.file).sorted())
        let index = try String(contentsOf: folder.appendingPathComponent("index.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(index.count == 145 && index.first?.contains("\"file\":\"2026-12-03T05-50-00.mp4\"") == true)
    }

    @Test func aLaterRunDeletesWhatAPreviousRunLeftPastTheAge() throws {
        var (folder, plan) = try recorder("restart", keep: .init(seconds: 600, keepSeconds: day))
        for i in 0..<3 { _ = try record(&plan, start: midnight.addingTimeInterval(Double(i) * 600)) }
        // Two days later, a new run on the same folder: its first finished segment deletes the three
        // old ones (read back from the index), never itself.
        var later = try SegmentPlan(path: folder.appendingPathComponent("rec.mp4").path, options: plan.options)
        #expect(later.entries.count == 3)
        let deleted = try record(&later, start: midnight.addingTimeInterval(2 * day))
        #expect(deleted == ["2026-12-03T00-00-00.mp4", "2026-12-03T00-10-00.mp4", "2026-12-03T00-20-00.mp4"])
        #expect(try files(folder) == ["2026-12-05T00-00-00.mp4"])
        // The newest is never deleted, however old it is by the time it is finished.
        let stale = try record(&later, start: midnight.addingTimeInterval(2 * day + 600), now: midnight.addingTimeInterval(10 * day))
        #expect(stale == ["2026-12-05T00-00-00.mp4"] && later.entries.map(\.file) == ["2026-12-05T00-10-00.mp4"])
    }

    @Test func theByteBudgetDeletesTheOldestUntilTheRestFits() throws {
        var (folder, plan) = try recorder("bytes", keep: .init(seconds: 600, keepBytes: 2500))
        // 1000-byte segments under a 2500-byte budget: two fit; the third finished makes 3000 and
        // deletes the oldest, and so on. Sizes are the files' own (read from disk when finished).
        var deleted: [[String]] = []
        for i in 0..<5 { deleted.append(try record(&plan, start: midnight.addingTimeInterval(Double(i) * 600))) }
        #expect(deleted.map(\.count) == [0, 0, 1, 1, 1])
        #expect(try files(folder) == ["2026-12-03T00-30-00.mp4", "2026-12-03T00-40-00.mp4"])
        #expect(plan.entries.reduce(0) { $0 + $1.bytes } == 2000)
        // One segment larger than the whole budget: everything older goes, it stays.
        let big = try record(&plan, start: midnight.addingTimeInterval(3000), bytes: 4000)
        #expect(big == ["2026-12-03T00-30-00.mp4", "2026-12-03T00-40-00.mp4"] && plan.entries.count == 1)
    }
}
