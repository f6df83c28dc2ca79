import Foundation

/// Results files: JSON Lines, one ``TimedResults`` object per line (schema in docs/RESULTS.md).
/// `ResultsLines.read(path:)` (in FrameGraph) reads a whole file through the core's file checks.
/// Writing never fails on what a model produced (non-finite numbers are written as 0); reading
/// treats the file as hostile: bounded sizes, and every error names the file, the line and what
/// was wrong.
public enum ResultsLines {
    /// Longest line read (a frame with thousands of landmarks is far below it).
    public static let maxLineBytes = 8 << 20
    /// Largest results file read whole by ``read(path:)``.
    public static let maxFileBytes: Int64 = 2 << 30
    /// Most detections, landmark sets, classifications, or points in one set, accepted on reading.
    public static let maxItems = 100_000

    /// One line (no newline at the end) for `record`.
    public static func encode(_ record: TimedResults) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(record.finite())
    }

    /// Parses one line. `file` and `line` name it in errors.
    public static func decode(_ line: Data, file: String = "results", line number: Int = 1,
                              topologies: TopologyCatalog = TopologyCatalog()) throws -> TimedResults {
        guard line.count <= maxLineBytes else {
            throw ResultsFileError(file: file, line: number, message: "the line is \(line.count) bytes long, more than the limit of \(maxLineBytes)")
        }
        let record: TimedResults
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[TopologyCatalog.userInfoKey] = topologies
            record = try decoder.decode(TimedResults.self, from: line)
        } catch let error as DecodingError {
            throw ResultsFileError(file: file, line: number, message: explain(error))
        } catch {
            throw ResultsFileError(file: file, line: number, message: "\(error)")
        }
        if let problem = record.problem() { throw ResultsFileError(file: file, line: number, message: problem) }
        return record
    }

    /// Every record of a results file's bytes, in order (blank lines are skipped). `file` names it in
    /// errors; `topologies` gives the lines of the landmark layouts it names.
    public static func parse(_ data: Data, file: String, topologies: TopologyCatalog = TopologyCatalog()) throws -> [TimedResults] {
        var records: [TimedResults] = []
        var number = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            records.append(try decode(Data(line), file: file, line: number, topologies: topologies))
        }
        return records
    }

    private static func explain(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            let p = codingPathText(path)
            return p.isEmpty ? "" : " at \(p)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field '\(key.stringValue)'\(at(context.codingPath))"
        case .typeMismatch(let type, let context): return "expected \(type)\(at(context.codingPath)): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            let found = context.debugDescription.lowercased().contains("at end") ? "the list ends early" : "found null"
            return "expected \(type)\(at(context.codingPath)): \(found)"
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError as? ResultsDecodingError { return underlying.description }
            return "not valid JSON, or a number out of range\(at(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// A results file could not be read: where, and why.
public struct ResultsFileError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let message: String
    public var description: String { "\(file):\(line): \(message)" }
}

extension TimedResults {
    /// What is out of bounds in a record read from a file, if anything.
    func problem() -> String? {
        guard index >= 0 else { return "index \(index) is negative" }
        guard time.isFinite else { return "time is not a finite number" }
        guard (0...1 << 20).contains(width), (0...1 << 20).contains(height) else { return "frame size \(width)x\(height) is out of range" }
        let r = results
        let m = ResultsLines.maxItems
        guard r.detections.count <= m, r.landmarks.count <= m, r.classifications.count <= m else { return "more than \(m) items in one list" }
        for set in r.landmarks where set.points.count > m { return "a landmark set has \(set.points.count) points, more than \(m)" }
        for d in r.detections where d.keypoints.count > m { return "a detection has \(d.keypoints.count) keypoints, more than \(m)" }
        return nil
    }

    /// A copy whose non-finite numbers are 0 (JSON has no NaN or infinity).
    func finite() -> TimedResults {
        func f(_ v: Float) -> Float { v.isFinite ? v : 0 }
        var copy = self
        if !copy.time.isFinite { copy.time = 0 }
        copy.results.detections = results.detections.map { d in
            var d = d
            d.box = ResultBox(x: f(d.box.x), y: f(d.box.y), width: f(d.box.width), height: f(d.box.height))
            d.score = f(d.score)
            d.keypoints = d.keypoints.map { ResultPoint(x: f($0.x), y: f($0.y)) }
            return d
        }
        copy.results.landmarks = results.landmarks.map { s in
            var s = s
            s.points = s.points.map { Landmark(x: f($0.x), y: f($0.y), z: $0.z.map(f), visibility: $0.visibility.map(f)) }
            if let confidence = s.classification?.confidence { s.classification?.confidence = f(confidence) }
            return s
        }
        copy.results.classifications = results.classifications.map { c in
            var c = c
            c.confidence = f(c.confidence)
            return c
        }
        return copy
    }
}
