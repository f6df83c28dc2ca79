import Foundation
import FrameGraph

/// A run's changes to a pipeline, as the command line gives them (`--camera …`, `--input`, `--loop`,
/// `--audio`, `--output`, `--set`, `--results`, `--preview`), applied in one fixed order by
/// ``apply(to:)``. The CLI fills it from its arguments; the C library (and through it Python) from
/// its open request: both build the same run from the same words.
///
/// ```swift
/// var changes = PipelineChanges()
/// changes.input = "clip.mp4"
/// changes.settings = ["matte.mode=blur"]
/// let applied = try changes.apply(to: &document)   // applied.hasCamera: false
/// ```
public struct PipelineChanges: Sendable {
    /// `--camera`, `--camera-size`, `--camera-fps`, `--camera-format`, `--reconnect`.
    public var camera = CameraCommandLine()
    /// `--input PATH`: every `file` source reads it (a URL: they become `stream` sources, with `network.allow`).
    public var input: String?
    /// More inputs (`--input` given again, `--inputs FILE`): with ``input``, two or more make a
    /// multi-stream run (``PipelineDocument/replicate(streams:batch:)``), replacing the pipeline's own
    /// `streams` list.
    public var inputs: [String] = []
    /// `--batch N`: most frames of different streams a shared network worker runs in one turn.
    public var batch = 1
    /// `--allow-network`, `--reconnect[=false]`, `--stream-transport`, `--on-loss`, `--credentials`.
    public var network = StreamCommandLine()
    /// `--loop`: file sources loop (ignored with a camera).
    public var loop = false
    /// `--audio copy|drop|aac`.
    public var audio: String?
    /// `--output PATH`: the first `encode` or `png` sink writes it.
    public var output: String?
    /// `--set NODE.KEY=VALUE`, each, in order.
    public var settings: [String] = []
    /// `--results FILE`.
    public var results: String?
    /// `--preview`: the window's title (nil: no preview).
    public var previewTitle: String?

    public init() {}

    /// What ``apply(to:)`` did.
    public struct Applied: Sendable, Equatable {
        /// Whether the pipeline reads a camera (the run is then live).
        public var hasCamera: Bool
        /// Whether the pipeline reads a network stream (the run is then live too).
        public var hasStream = false
        /// The preview's outcome, when one was asked for.
        public var preview: PipelineDocument.PreviewOutcome?
    }

    /// Applies the changes in order: the camera (it turns the file source into a camera, and `--set`
    /// then applies to that), input, loop, audio, output, `--set`, results, preview. Each is a
    /// ``PipelineError`` (or a camera error) with one line when it has nothing to apply to.
    public func apply(to document: inout PipelineDocument) throws -> Applied {
        let allInputs = (input.map { [$0] } ?? []) + inputs
        if camera.path != nil && !allInputs.isEmpty {
            throw PipelineError(origin: "", message: "--input and --camera both name the source; give one of them")
        }
        // Streams: the command line's inputs (two or more) replace the pipeline's own list.
        var streams = try document.takeStreams()
        if !allInputs.isEmpty { streams = allInputs.count > 1 ? StreamInput.named(allInputs) : nil }
        if let streams, camera.path != nil {
            throw PipelineError(origin: "--camera", message: "the pipeline lists \(streams.count) streams; --camera reads one camera (give the streams with --input, or leave --camera out)")
        }
        if let streams, previewTitle != nil {
            throw PipelineError(origin: "--preview", message: "a window shows one stream; this run has \(streams.count) (write them with --output out/{stream}.mp4)")
        }
        let hasCamera = try camera.apply(to: &document)
        if let streams, !network.allow, let url = streams.first(where: { StreamCommandLine.isURL($0.path) }) {
            throw PipelineError(origin: "--input", message: "\(StreamURL.redact(url.path)) is a network stream; FrameGraph reads local files only unless allowed: add --allow-network")
        }
        let url = streams == nil ? allInputs.first.flatMap { StreamCommandLine.isURL($0) ? $0 : nil } : nil
        if streams == nil, let input = allInputs.first, url == nil { try document.applyInput(input) }
        var hasStream = try network.apply(to: &document, input: url)
        if loop && !hasCamera { try document.applyLoop() }
        if let audio { try document.applyAudio(audio) }
        if let output {
            let path = try streams.map { try document.streamOutputPattern(output, streams: $0.count) } ?? output
            try document.applyOutput(path)
        }
        try document.applySettings(settings)
        if let results { try document.applyResults(results) }
        if let streams {
            try document.replicate(streams: streams, batch: batch)
            // Network addresses among the streams became `stream` sources: the network options too.
            if streams.contains(where: { StreamCommandLine.isURL($0.path) }) { hasStream = try network.apply(to: &document, input: nil) || hasStream }
        }
        var preview: PipelineDocument.PreviewOutcome?
        if let previewTitle {
            // Preview only writes what the command line names (--output, --results, --set NODE.path=…).
            preview = try document.applyPreview(title: previewTitle, writeFiles: false)
        }
        return Applied(hasCamera: hasCamera, hasStream: hasStream, preview: preview)
    }

    /// The run mode for a pipeline that does (or does not) read a camera, given the mode asked for
    /// (nil: not asked). A camera is always live: asking for offline is an error.
    public static func mode(requested: RunMode?, hasCamera: Bool) throws -> RunMode {
        guard hasCamera else { return requested ?? .offline }
        if requested == .offline {
            throw PipelineError(origin: "", message: "--mode offline cannot read a camera: a camera is always live (leave --mode out); to process every frame, record to a file first and run that offline")
        }
        return .live
    }
}
