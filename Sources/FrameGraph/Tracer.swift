import Foundation

/// Writes a Chrome trace-event file (open it in Perfetto or chrome://tracing): one span per node per
/// frame, on one track per thread, so overlapping or queued predictions are visible at a glance.
///
/// Nothing touches the disk until ``begin()`` (the runner calls it once validation has passed);
/// events then stream to a temporary file beside the destination through a small buffer, and
/// ``close()`` completes the JSON array and renames the file into place.
public final class Tracer: Sendable {
    private struct State {
        var output: OutputFile?
        var handle: FileHandle?
        var buffer = ""
        var first = true
        var namedLanes: Set<Int> = []
    }
    private let state: Protected<State>
    private let origin: Double
    /// Where the trace is written.
    public let url: URL

    /// A trace to be written to `url` (checked to be a local path; nothing is created yet). `origin` is
    /// the clock time shown as 0.
    public init(url: URL, origin: Double) throws {
        try OutputFile.checkLocal(url.path)
        self.url = url
        self.origin = origin
        state = Protected(State(buffer: "[\n"))
    }

    /// Creates the temporary trace file; events recorded before are kept in the buffer.
    public func begin() throws {
        try state.withLock { s in
            guard s.output == nil else { return }
            let output = try OutputFile(destination: url.path)
            let handle: FileHandle
            do { handle = try output.handle() } catch {
                output.discard()
                throw error
            }
            s.output = output
            s.handle = handle
        }
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
        guard let handle = s.handle else { return }  // not begun: keep the events until then
        try? handle.write(contentsOf: Data(s.buffer.utf8))
        s.buffer = ""
    }

    /// Ends the JSON array, closes the file and moves it into place. Does nothing before ``begin()``.
    public func close() {
        state.withLock { s in
            guard let output = s.output, s.handle != nil else { return }
            s.buffer += "\n]\n"
            flush(&s)
            try? s.handle?.close()
            s.handle = nil
            try? output.commit()
        }
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
