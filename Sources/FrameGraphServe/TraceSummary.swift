import Foundation
import FrameGraph

/// What a run's trace file (`--trace`, Chrome trace events) tells beyond the statistics: per second,
/// the output's frames, repeats and the busy drops; per frame, its time through the graph and in
/// each node. Read from the file as the runner writes it (spans `ph:"X"` with `args.frame`, instants
/// `dropped-busy`).
public struct TraceSummary: Sendable, Equatable {
    /// One second of the run.
    public struct Second: Sendable, Equatable {
        /// Frames the output sink wrote in that second (repeats included).
        public var out = 0
        /// Of those, repeats of the frame before.
        public var repeated = 0
        /// Frames refused by busy nodes.
        public var droppedBusy = 0
    }

    /// One frame's way through the graph.
    public struct FrameTime: Sendable, Equatable {
        public var frame: Int
        /// From the start of its first span to the end of its last, in seconds.
        public var seconds: Double
        /// Seconds in each node, in the order they ran.
        public var nodes: [(name: String, seconds: Double)]
        public static func == (a: FrameTime, b: FrameTime) -> Bool {
            a.frame == b.frame && a.seconds == b.seconds && a.nodes.map(\.name) == b.nodes.map(\.name) && a.nodes.map(\.seconds) == b.nodes.map(\.seconds)
        }
    }

    /// The run second by second.
    public var seconds: [Second]
    /// Every traced frame's time through the graph, in frame order: those that reached the output
    /// node (all of them when none did, or no output was named).
    public var frames: [FrameTime]
    /// Instants other than busy drops (presentation delay raised, model swapped), with their time in seconds.
    public var notes: [(seconds: Double, text: String)]

    public static func == (a: TraceSummary, b: TraceSummary) -> Bool {
        a.seconds == b.seconds && a.frames == b.frames && a.notes.map(\.text) == b.notes.map(\.text)
    }

    /// Why a trace could not be read.
    public struct ReadError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads `data` (a trace file's bytes); `outputNode` is the sink whose spans are the output frames.
    public init(data: Data, outputNode: String?) throws {
        guard let events = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw ReadError(description: "not a trace-event file (a JSON array of events, as --trace writes)")
        }
        var secondsByIndex: [Int: Second] = [:]
        var spansByFrame: [Int: [(name: String, start: Double, end: Double)]] = [:]
        var lastOutFrame: Int?
        var notes: [(Double, String)] = []
        for e in events {
            guard let phase = e["ph"] as? String, let name = e["name"] as? String, let ts = (e["ts"] as? NSNumber)?.doubleValue,
                  ts.isFinite, ts >= 0, ts < 1e13 else { continue }
            let frame = ((e["args"] as? [String: Any])?["frame"] as? NSNumber)?.intValue
            let second = Int(ts / 1e6)
            switch phase {
            case "X":
                let dur = max(0, (e["dur"] as? NSNumber)?.doubleValue ?? 0)
                guard dur.isFinite, dur < 1e13, let frame else { continue }
                spansByFrame[frame, default: []].append((name, ts / 1e6, (ts + dur) / 1e6))
                if name == outputNode {
                    secondsByIndex[second, default: Second()].out += 1
                    if frame == lastOutFrame { secondsByIndex[second, default: Second()].repeated += 1 }
                    lastOutFrame = frame
                }
            case "i":
                if name == "dropped-busy" { secondsByIndex[second, default: Second()].droppedBusy += 1 } else { notes.append((ts / 1e6, name)) }
            default: continue
            }
        }
        let last = min(secondsByIndex.keys.max() ?? -1, 1_000_000)
        seconds = last < 0 ? [] : (0...last).map { secondsByIndex[$0] ?? Second() }
        frames = spansByFrame.keys.sorted().map { frame in
            let spans = (spansByFrame[frame] ?? []).sorted { $0.start < $1.start }
            // A repeated output tick is the same frame again: its time through the graph ends at its first output.
            var seen = Set<String>()
            let once = spans.filter { seen.insert($0.name).inserted }
            let start = once.map(\.start).min() ?? 0, end = once.map(\.end).max() ?? 0
            return FrameTime(frame: frame, seconds: end - start, nodes: once.map { ($0.name, $0.end - $0.start) })
        }
        // Frames that reached the output (not those dropped on the way), when the output is known.
        if let outputNode {
            let reached = frames.filter { $0.nodes.contains { $0.name == outputNode } }
            if !reached.isEmpty { frames = reached }
        }
        self.notes = notes.map { (seconds: $0.0, text: $0.1) }
    }
}
