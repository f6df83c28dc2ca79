import Foundation
import FrameGraph
import FrameGraphPipelines

/// What a program asks the C library to run, as JSON (`fg_open`'s argument): the pipeline and the
/// command line's changes to it, by the CLI's names. Only `pipeline` is required.
///
/// ```json
/// {"pipeline": "face-detect", "input": "clip.mp4", "output": "out.mp4", "set": ["faces.min-score=0.6"],
///  "results": "faces.jsonl", "mode": "offline", "frames": true, "queue": 4}
/// ```
struct OpenRequest: Decodable, Sendable {
    /// A pipeline file, or a shipped pipeline's name (`face-detect`).
    var pipeline: String
    var input: String?
    var output: String?
    var results: String?
    /// `NODE.KEY=VALUE` each, as `--set`.
    var set: [String]?
    var loop: Bool?
    var audio: String?
    var camera: String?
    /// `live` or `offline` (default offline; a camera is always live).
    var mode: String?
    /// Seconds of input to run (`--duration`).
    var duration: Double?
    /// Whether items carry the frame's pixels (default true; false: results only, no conversion).
    var frames: Bool?
    /// Items that may wait unread (default 4): offline the run waits beyond it, live the oldest is dropped.
    var queue: Int?
    /// `program`: the pipeline's file source is replaced by frames the program pushes (fg_push),
    /// packed RGB of `width` × `height`.
    var source: String?
    var width: Int?
    var height: Int?

    /// The pushed frames' size when the request asks for a program source, else nil; an error names
    /// what is missing or out of range.
    func programSize() throws -> (width: Int, height: Int)? {
        guard let source else { return nil }
        guard source == "program" else { throw RequestError("source must be program (frames pushed by the program), got '\(source.prefix(40))'") }
        guard input == nil, camera == nil else { throw RequestError("a program source replaces the input: give no input or camera with it") }
        guard let width, let height, (1...16384).contains(width), (1...16384).contains(height) else {
            throw RequestError("a program source needs the frames' width and height (1 to 16384 each)")
        }
        return (width, height)
    }

    /// The request in `json`, or a ``RequestError`` naming what is wrong.
    static func decode(_ json: String) throws -> OpenRequest {
        do {
            return try JSONDecoder().decode(OpenRequest.self, from: Data(json.utf8))
        } catch let error as DecodingError {
            switch error {
            case .keyNotFound(let key, _): throw RequestError("the request has no '\(key.stringValue)'")
            case .typeMismatch(_, let c), .valueNotFound(_, let c):
                throw RequestError("the request's '\(c.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type")
            default: throw RequestError("the request is not valid JSON")
            }
        }
    }

    /// The command line's changes this request makes (``PipelineChanges``).
    var changes: PipelineChanges {
        var changes = PipelineChanges()
        changes.camera = CameraCommandLine(path: camera)
        changes.input = input
        changes.loop = loop ?? false
        changes.audio = audio
        changes.output = output
        changes.settings = set ?? []
        changes.results = results
        return changes
    }

    /// The mode asked for (nil: not asked), or an error naming the choices.
    func requestedMode() throws -> RunMode? {
        guard let mode else { return nil }
        guard let m = RunMode(rawValue: mode) else { throw RequestError("mode must be live or offline, got '\(mode.prefix(40))'") }
        return m
    }
}

/// A request the library cannot run as given (one line).
struct RequestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
