import Foundation

/// Writes a Chrome trace-event file (open it in Perfetto or chrome://tracing): one span per node per
/// frame, on one track per thread, so overlapping or queued predictions are visible at a glance.
///
/// Events stream to disk through a small buffer; the file is a complete JSON array once ``close()``
/// has run (Perfetto also opens a file cut short).
public final class Tracer: Sendable {
    private struct State {
        var handle: FileHandle?
        var buffer = ""
        var first = true
        var namedLanes: Set<Int> = []
    }
    private let state: Protected<State>
    private let origin: Double
    /// Where the trace is written.
    public let url: URL

    /// Creates (or truncates) the trace file. `origin` is the clock time shown as 0.
    public init(url: URL, origin: Double) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw GraphError.io(path: url.path, reason: "cannot create trace file")
        }
        let handle = try FileHandle(forWritingTo: url)
        self.url = url
        self.origin = origin
        state = Protected(State(handle: handle, buffer: "[\n"))
    }

    /// One span: `name` ran on `lane` from `start` to `end` (clock seconds), for frame `sequence`.
    public func span(_ name: String, category: String, lane: Lane, start: Double, end: Double, sequence: Int) {
        let ts = (start - origin) * 1e6, dur = max(0, end - start) * 1e6
        append(lane: lane, String(format: #"{"name":"%@","cat":"%@","ph":"X","pid":1,"tid":%d,"ts":%.1f,"dur":%.1f,"args":{"frame":%d}}"#,
                                  escape(name), category, lane.id, ts, dur, sequence))
    }

    /// A point event, such as a frame dropped because a node was busy.
    public func instant(_ name: String, lane: Lane, at time: Double, sequence: Int) {
        let ts = (time - origin) * 1e6
        append(lane: lane, String(format: #"{"name":"%@","ph":"i","s":"t","pid":1,"tid":%d,"ts":%.1f,"args":{"frame":%d}}"#,
                                  escape(name), lane.id, ts, sequence))
    }

    private func append(lane: Lane, _ event: String) {
        state.withLock { s in
            if !s.namedLanes.contains(lane.id) {
                s.namedLanes.insert(lane.id)
                add(&s, #"{"name":"thread_name","ph":"M","pid":1,"tid":\#(lane.id),"args":{"name":"\#(escape(lane.name))"}}"#)
                add(&s, #"{"name":"thread_sort_index","ph":"M","pid":1,"tid":\#(lane.id),"args":{"sort_index":\#(lane.id)}}"#)
            }
            add(&s, event)
            if s.buffer.utf8.count > 64 * 1024 { flush(&s) }
        }
    }

    private func add(_ s: inout State, _ event: String) {
        if !s.first { s.buffer += ",\n" }
        s.first = false
        s.buffer += event
    }

    private func flush(_ s: inout State) {
        if let data = s.buffer.data(using: .utf8) { s.handle?.write(data) }
        s.buffer = ""
    }

    /// Ends the JSON array and closes the file.
    public func close() {
        state.withLock { s in
            s.buffer += "\n]\n"
            flush(&s)
            try? s.handle?.close()
            s.handle = nil
        }
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
