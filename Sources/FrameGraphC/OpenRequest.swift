import Foundation
import FrameGraph
import FrameGraphMedia
import FrameGraphPipelines
import FrameGraphServe

/// What a program asks the C library to run, as a JSON object (`fg_open`'s argument): the pipeline
/// and the command line's options by the CLI's names with `_` for `-` (`serve_token_file` is
/// `--serve-token-file`), plus a few of the library's own (`frames`, `queue`, `rgb`). Only
/// `pipeline` is required.
///
/// ```json
/// {"pipeline": "face-detect", "input": "clip.mp4", "output": "out.mp4", "set": ["faces.min-score=0.6"],
///  "results": "faces.jsonl", "mode": "offline", "serve": "127.0.0.1:0", "frames": true, "rgb": "fast"}
/// ```
///
/// ``options`` is what a request may hold: the run options' one table (``RunOptionSpec/all`` in
/// FrameGraphPipelines, which `framegraph run` parses too: each option a program may give, by its
/// key) between `pipeline` and the library's own. Decoding checks each key and value against it,
/// and `fg_run_options` hands it to Python (whose `fg.run(**options)` passes the keywords through
/// and whose type stub is checked against it).
struct OpenRequest: Sendable {
    /// One option a request may hold.
    struct Option: Sendable {
        /// What its value is.
        enum Kind: Sendable {
            case text, flag, texts
            case number(ClosedRange<Double>)
            case integer(ClosedRange<Int>)
            case choice([String])
        }

        /// The key in the request (Python's keyword).
        let key: String
        let kind: Kind
        /// The `framegraph run` option it is (`--serve-token-file`), nil for the library's own.
        let flag: String?
        /// Its default as people read it, when it has one.
        let defaultText: String?
        let doc: String

        /// One of the library's own.
        init(key: String, kind: Kind, doc: String) {
            self.key = key
            self.kind = kind
            self.flag = nil
            self.defaultText = nil
            self.doc = doc
        }

        /// A run option of the shared table: a switch is true or false, a repeatable text a list
        /// (one string is taken as a list of one).
        init(_ spec: RunOptionSpec) {
            key = spec.key
            flag = "--" + spec.name
            defaultText = spec.defaultText
            doc = spec.help
            switch spec.value {
            case .none: kind = .flag
            case .text: kind = spec.repeatable ? .texts : .text
            case .number(let r): kind = .number(r)
            case .integer(let r): kind = .integer(r)
            case .choice(let c): kind = .choice(c)
            }
        }
    }

    /// Every option: the pipeline, the run options in the order `framegraph run --help` lists them,
    /// then the library's own.
    static let options: [Option] = [
        Option(key: "pipeline", kind: .text, doc: "a pipeline file, or a shipped pipeline's name (face-detect)"),
    ] + RunOptionSpec.all.filter(\.forPrograms).map(Option.init) + [
        Option(key: "frames", kind: .flag, doc: "whether items carry the output frame (default true; false: results only)"),
        Option(key: "rgb", kind: .choice(RGBConversion.allCases.map(\.rawValue)),
               doc: "fast (default: the pixels of ffmpeg -pix_fmt rgb24 and OpenCV) or exact (the png sink's)"),
        Option(key: "queue", kind: .integer(1...1024), doc: "items that may wait unread (default 4): offline the run waits beyond it, live the oldest is dropped"),
        Option(key: "source", kind: .choice(["program"]), doc: "program: the file source is replaced by frames pushed with fg_push"),
        Option(key: "width", kind: .integer(1...16384), doc: "the pushed frames' width"),
        Option(key: "height", kind: .integer(1...16384), doc: "the pushed frames' height"),
    ]

    /// A checked value.
    private enum Value: Sendable {
        case text(String), flag(Bool), texts([String]), number(Double), integer(Int)
    }

    private let values: [String: Value]

    /// The request in `json`, or a ``RequestError`` naming what is wrong (an unknown key with the
    /// nearest known one, a wrong type, a value out of range or not among the choices).
    static func decode(_ json: String) throws -> OpenRequest {
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8)) else {
            throw RequestError("the request is not a JSON object")
        }
        var values: [String: Value] = [:]
        for (key, raw) in fields {
            guard let option = options.first(where: { $0.key == key }) else {
                throw RequestError("unknown option '\(key.prefix(40))'\(didYouMean(key, options.map(\.key)))")
            }
            if case .null = raw { continue }
            values[key] = try check(raw, option)
        }
        guard case .text(_)? = values["pipeline"] else { throw RequestError("the request has no 'pipeline'") }
        return OpenRequest(values: values)
    }

    private static func check(_ raw: JSONValue, _ option: Option) throws -> Value {
        let wrong = RequestError("\(option.key) expects \(option.kind.expected), got \(raw.description.prefix(40))")
        switch (option.kind, raw) {
        case (.text, .string(let s)): return .text(s)
        case (.flag, .bool(let b)): return .flag(b)
        case (.texts, .string(let s)): return .texts([s])
        case (.texts, .list(let list)):
            let strings = list.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
            guard strings.count == list.count else { throw wrong }
            return .texts(strings)
        case (.number(let range), .number(let n)):
            guard range.contains(n) else { throw wrong }
            return .number(n)
        case (.integer(let range), .number(let n)):
            guard n.rounded() == n, n >= Double(range.lowerBound), n <= Double(range.upperBound) else { throw wrong }
            return .integer(Int(n))
        case (.choice(let choices), .string(let s)):
            guard choices.contains(s) else { throw wrong }
            return .text(s)
        default:
            throw wrong
        }
    }

    /// The table as JSON, for `fg_run_options`: `[{"key", "flag" (or null), "kind", "choices"?, "min"?, "max"?, "default"?, "doc"}]`.
    static func optionsJSON() -> String {
        let list: [[String: Any]] = options.map { o in
            var entry: [String: Any] = ["key": o.key, "flag": o.flag ?? NSNull(), "doc": o.doc]
            if let d = o.defaultText { entry["default"] = d }
            switch o.kind {
            case .text: entry["kind"] = "text"
            case .flag: entry["kind"] = "flag"
            case .texts: entry["kind"] = "texts"
            case .number(let r): entry["kind"] = "number"; entry["min"] = r.lowerBound; entry["max"] = r.upperBound
            case .integer(let r): entry["kind"] = "integer"; entry["min"] = r.lowerBound; entry["max"] = r.upperBound
            case .choice(let c): entry["kind"] = "choice"; entry["choices"] = c
            }
            return entry
        }
        let data = (try? JSONSerialization.data(withJSONObject: list, options: [.sortedKeys])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    // Typed reads; `key` must be in the table (a programmer's mistake otherwise).
    private func known(_ key: String) -> String {
        precondition(Self.options.contains { $0.key == key }, "no request option '\(key)'")
        return key
    }

    func text(_ key: String) -> String? {
        if case .text(let s)? = values[known(key)] { return s }
        return nil
    }

    func flag(_ key: String) -> Bool? {
        if case .flag(let b)? = values[known(key)] { return b }
        return nil
    }

    func number(_ key: String) -> Double? {
        if case .number(let n)? = values[known(key)] { return n }
        return nil
    }

    func integer(_ key: String) -> Int? {
        if case .integer(let n)? = values[known(key)] { return n }
        return nil
    }

    func texts(_ key: String) -> [String]? {
        if case .texts(let list)? = values[known(key)] { return list }
        return nil
    }

    /// Whether the request gives `key`.
    func has(_ key: String) -> Bool { values[known(key)] != nil }

    /// The pipeline asked for.
    var pipeline: String { text("pipeline") ?? "" }

    /// The pushed frames' size when the request asks for a program source, else nil; an error names
    /// what is missing.
    func programSize() throws -> (width: Int, height: Int)? {
        guard text("source") != nil else { return nil }
        guard !has("input"), !has("inputs"), !has("camera") else {
            throw RequestError("a program source replaces the input: give no input, inputs or camera with it")
        }
        guard let width = integer("width"), let height = integer("height") else {
            throw RequestError("a program source needs the frames' width and height (1 to 16384 each)")
        }
        return (width, height)
    }

    /// The command line's changes this request makes (``PipelineChanges``); `title` names a preview's
    /// window as the CLI names it. Throws for an unreadable streams list (`inputs`).
    func changes(title: String) throws -> PipelineChanges {
        var changes = PipelineChanges()
        changes.camera = CameraCommandLine(path: text("camera"), size: text("camera_size"), fps: number("camera_fps").map { "\($0)" },
                                           format: text("camera_format"), reconnect: flag("reconnect") ?? false)
        changes.inputs = (texts("input") ?? []) + (try text("inputs").map(StreamInput.readList) ?? [])
        changes.batch = integer("batch") ?? 1
        changes.network.allow = flag("allow_network") ?? false
        changes.network.reconnect = flag("reconnect")
        changes.network.transport = text("stream_transport")
        changes.network.onLoss = text("on_loss")
        changes.network.credentialsFile = text("credentials")
        changes.loop = flag("loop") ?? false
        changes.audio = text("audio")
        changes.output = text("output")
        changes.settings = texts("set") ?? []
        changes.results = text("results")
        if flag("preview") == true { changes.previewTitle = "FrameGraph: \(title)" }
        return changes
    }

    /// The run's options, made from the request's values as the CLI makes them from its words
    /// (``FrameGraphPipelines/RunOptionValues``). `hasLiveSource`: a camera or stream (the run is
    /// then live whatever the mode asked).
    func runOptions(pipelineFile: String, hasLiveSource: Bool) throws -> RunOptions {
        do {
            return try RunOptions(values: RequestValues(request: self), pipelineFile: pipelineFile, hasLiveSource: hasLiveSource)
        } catch let error as RunOptionValueError {
            throw RequestError(error.description)
        }
    }
}

/// A request's values of the run options, by the options' command-line names (`frame-budget` is
/// the request's `frame_budget`).
private struct RequestValues: RunOptionValues {
    let request: OpenRequest
    func text(_ name: String) -> String? { request.text(key(name)) }
    func number(_ name: String) -> Double? { request.number(key(name)) }
    func integer(_ name: String) -> Int? { request.integer(key(name)) }
    func spelling(_ name: String) -> String { key(name) }
    private func key(_ name: String) -> String { RunOptionSpec.key(forName: name) }
}

extension OpenRequest.Option.Kind {
    /// What a value of this kind is, for an error.
    var expected: String {
        switch self {
        case .text: return "a string"
        case .flag: return "true or false"
        case .texts: return "a string or a list of strings"
        case .number(let r): return "a number from \(JSONValue.number(r.lowerBound)) to \(JSONValue.number(r.upperBound))"
        case .integer(let r): return "an integer from \(r.lowerBound) to \(r.upperBound)"
        case .choice(let c): return "one of " + c.joined(separator: ", ")
        }
    }
}

/// A JSON value as the request holds it (booleans apart from numbers).
enum JSONValue: Decodable, Sendable, CustomStringConvertible {
    case null, bool(Bool), number(Double), string(String), list([JSONValue]), object

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let l = try? c.decode([JSONValue].self) { self = .list(l) }
        else { self = .object }
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .string(let s): return "'\(s)'"
        case .list: return "a list"
        case .object: return "an object"
        }
    }
}

/// A request the library cannot run as given (one line).
struct RequestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
