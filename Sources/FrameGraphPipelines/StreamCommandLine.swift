import FrameGraph
import FrameGraphMedia

/// The command line's network options, applied to a pipeline before it is built:
/// `--input URL` (with `--allow-network`) turns the pipeline's `file` sources into `stream` sources
/// reading URL; `--allow-network` allows every `stream` source (`network=allow`); `--reconnect=false`,
/// `--stream-transport`, `--on-loss` and `--credentials FILE` set the options of every stream source.
///
/// ```swift
/// var document = try Pipeline.parseFile(path: "pipelines/portrait-segment.fg")
/// var network = StreamCommandLine()
/// network.allow = true
/// let live = try network.apply(to: &document, input: "rtsp://127.0.0.1:8554/cam")   // true
/// ```
/// Without `--allow-network` a URL given to `--input` is refused with one line (the default reads
/// local files only).
public struct StreamCommandLine: Sendable, Equatable {
    /// `--allow-network`.
    public var allow = false
    /// `--reconnect` / `--reconnect=false` (nil: each stream's own setting, default true).
    public var reconnect: Bool?
    /// `--stream-transport tcp|udp`.
    public var transport: String?
    /// `--on-loss repeat|no-signal`.
    public var onLoss: String?
    /// `--credentials FILE`.
    public var credentialsFile: String?

    public init() {}

    /// Whether `input` names a network address (anything with `scheme://`).
    public static func isURL(_ input: String) -> Bool { StreamURL.looksLikeURL(input) }

    /// Applies the options; `input` is `--input` when it is a URL (nil otherwise). Returns whether the
    /// pipeline reads a network stream (the run is then live).
    public func apply(to document: inout PipelineDocument, input: String?) throws -> Bool {
        if let input {
            guard allow else {
                throw PipelineError(origin: "--input", message: "\(StreamURL.redact(input)) is a network stream; FrameGraph reads local files only unless allowed: add --allow-network")
            }
            let files = document.declarations.filter { $0.type == "file" }
            guard !files.isEmpty else { throw PipelineError(origin: "--input", message: "\(document.file) has no 'file' source to read the stream") }
            for f in files {
                _ = document.retype(node: f.name, to: "stream")
                _ = document.override(node: f.name, key: "url", value: input, origin: "--input")
            }
        }
        let streams = document.declarations.filter { $0.type == "stream" }.map(\.name)
        var values: [(String, String, String)] = []
        if allow { values.append(("network", "allow", "--allow-network")) }
        if let reconnect { values.append(("reconnect", String(reconnect), "--reconnect")) }
        if let transport { values.append(("transport", transport, "--stream-transport")) }
        if let onLoss { values.append(("on-loss", onLoss, "--on-loss")) }
        if let credentialsFile { values.append(("credentials", credentialsFile, "--credentials")) }
        for name in streams {
            for (key, value, origin) in values { _ = document.override(node: name, key: key, value: value, origin: origin) }
        }
        return !streams.isEmpty
    }
}

extension PipelineDocument {
    /// Whether the pipeline reads a network stream (then it can only run live).
    public var hasStreamSource: Bool { declarations.contains { $0.type == "stream" } }
}
