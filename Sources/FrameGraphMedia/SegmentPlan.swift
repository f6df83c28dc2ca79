import Foundation
import FrameGraph


/// Continuous recording's bookkeeping for the encode sink: when a segment ends, what the next one is
/// called, the segment index (JSON Lines) and retention.
///
/// ```swift
/// var plan = try SegmentPlan(path: "cam1/rec.mp4", options: .init(seconds: 600, keepSeconds: 86_400))
/// plan.nextPath(startingAt: Date())   // "cam1/2026-12-03T10-00-00.mp4"
/// ```
/// - Names: the start time in UTC, `YYYY-MM-DDTHH-MM-SS` with the extension of `path`, in `path`'s
///   folder (`-2`, `-3` … when two start within a second).
/// - Each segment is a complete file written under a temporary name and renamed when it ends (the
///   writer does it), so a crash loses at most the segment being written.
/// - The index, `index.jsonl` in the folder, gets one line per finished segment:
///   `{"file":"2026-12-03T10-00-00.mp4","start":"2026-12-03T10:00:00.000Z","end":"…","frames":18000,"bytes":…}`;
///   it is rewritten beside itself and renamed, so it is never half-written either.
/// - Retention deletes the oldest finished segments named in the index (never other files, never
///   the segment being written) while they are older than ``Options/keepSeconds`` or together larger
///   than ``Options/keepBytes``.
public struct SegmentPlan: Sendable {
    /// How to cut and how much to keep.
    public struct Options: Sendable, Equatable {
        /// Segment length in seconds (of the output clock live, of media offline).
        public var seconds: Double?
        /// Segment length in frames (wins over `seconds`).
        public var frames: Int?
        /// Delete finished segments older than this many seconds.
        public var keepSeconds: Double?
        /// Delete the oldest finished segments while all of them together are larger than this.
        public var keepBytes: Int64?
        public init(seconds: Double? = nil, frames: Int? = nil, keepSeconds: Double? = nil, keepBytes: Int64? = nil) {
            self.seconds = seconds
            self.frames = frames
            self.keepSeconds = keepSeconds
            self.keepBytes = keepBytes
        }
        /// Whether the output is cut into segments at all.
        public var isSegmented: Bool { seconds != nil || frames != nil }
    }

    /// One line of the index.
    public struct Entry: Codable, Sendable, Equatable {
        public var file: String
        public var start: String
        public var end: String
        public var frames: Int
        public var bytes: Int64
    }

    public let folder: String
    public let fileExtension: String
    public let options: Options
    /// The segments finished so far (and those a previous run left in the index), oldest first.
    public private(set) var entries: [Entry] = []
    /// Segments deleted by retention during this run.
    public private(set) var deleted = 0

    public var indexPath: String { (folder as NSString).appendingPathComponent("index.jsonl") }

    /// Plans segments for an output named `path` (its folder and extension); reads an existing index.
    public init(path: String, options: Options) throws {
        let folder = (path as NSString).deletingLastPathComponent
        self.folder = folder.isEmpty ? "." : folder
        let ext = (path as NSString).pathExtension
        fileExtension = ext.isEmpty ? "mp4" : ext
        self.options = options
        try FileManager.default.createDirectory(atPath: self.folder, withIntermediateDirectories: true)
        if let data = FileManager.default.contents(atPath: indexPath), data.count < 64 << 20 {
            let decoder = JSONDecoder()
            for line in data.split(separator: UInt8(ascii: "\n")) {
                if let entry = try? decoder.decode(Entry.self, from: Data(line)) { entries.append(entry) }
            }
        }
    }

    /// Frames in a segment at `fps` (live), or nil when cut by media time.
    public func framesPerSegment(fps: Double) -> Int? {
        if let frames = options.frames { return frames }
        return options.seconds.map { max(1, Int(($0 * fps).rounded())) }
    }

    /// Whether a segment holding `frames` frames and `seconds` of media is complete.
    public func isComplete(frames: Int, seconds: Double, fps: Double?) -> Bool {
        if let perSegment = fps.flatMap(framesPerSegment(fps:)) { return frames >= perSegment }
        if let limit = options.frames { return frames >= limit }
        if let limit = options.seconds { return seconds >= limit - 1e-9 }
        return false
    }

    /// The path of a segment that starts at `date` (a free name).
    public func nextPath(startingAt date: Date) -> String {
        let stem = Self.stamp(date)
        var candidate = (folder as NSString).appendingPathComponent("\(stem).\(fileExtension)")
        var n = 2
        while FileManager.default.fileExists(atPath: candidate) || entries.contains(where: { $0.file == (candidate as NSString).lastPathComponent }) {
            candidate = (folder as NSString).appendingPathComponent("\(stem)-\(n).\(fileExtension)")
            n += 1
        }
        return candidate
    }

    /// Notes a finished segment (renamed into place), rewrites the index, then applies retention.
    /// Returns the segments deleted.
    @discardableResult
    public mutating func finished(path: String, start: Date, end: Date, frames: Int, now: Date = Date()) throws -> [String] {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.int64Value ?? 0
        entries.append(Entry(file: (path as NSString).lastPathComponent, start: Self.iso(start), end: Self.iso(end), frames: frames, bytes: size))
        let removed = retain(now: now)
        try writeIndex()
        return removed
    }

    /// Deletes the oldest segments past the limits (never the newest: it was just finished and is
    /// what a viewer most likely opens). Returns their names.
    private mutating func retain(now: Date) -> [String] {
        var removed: [String] = []
        func dropOldest() {
            let entry = entries.removeFirst()
            try? FileManager.default.removeItem(atPath: (folder as NSString).appendingPathComponent(entry.file))
            removed.append(entry.file)
        }
        if let keep = options.keepSeconds {
            while entries.count > 1, let end = Self.date(entries[0].end), now.timeIntervalSince(end) > keep { dropOldest() }
        }
        if let keep = options.keepBytes {
            while entries.count > 1, entries.reduce(Int64(0), { $0 + $1.bytes }) > keep { dropOldest() }
        }
        deleted += removed.count
        return removed
    }

    private func writeIndex() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for entry in entries {
            data.append(try encoder.encode(entry))
            data.append(UInt8(ascii: "\n"))
        }
        try OutputFile.write(data, to: indexPath)
    }

    /// `2026-12-03T10-00-00` (UTC; a file name without colons).
    static func stamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH-mm-ss"
        return f.string(from: date)
    }

    static func iso(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    static func date(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: text)
    }

    /// Reads a duration: `90` or `90s`, `10m`, `24h`, `7d`; nil when it is not one.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] { number = text.dropLast(); scale = unit }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        return value * scale
    }

    /// Reads a size: `500000`, `500k`, `200M`, `10G` (powers of 1024); nil when it is not one.
    public static func bytes(_ text: String) -> Int64? {
        let units: [Character: Double] = ["k": 1024, "K": 1024, "m": 1_048_576, "M": 1_048_576, "g": 1_073_741_824, "G": 1_073_741_824, "t": 1_099_511_627_776, "T": 1_099_511_627_776]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] { number = text.dropLast(); scale = unit }
        guard let value = Double(number), value.isFinite, value > 0, value * scale < 9e18 else { return nil }
        return Int64(value * scale)
    }
}
