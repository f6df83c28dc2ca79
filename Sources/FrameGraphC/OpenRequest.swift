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
/// ``options`` is the one table of what a request may hold: decoding checks each key and value
/// against it, `fg_run_options` hands it to Python (whose `fg.run(**options)` passes the keywords
/// through and whose type stub is checked against it), and a test checks that each CLI name is an
/// option of `framegraph run`.
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
        /// Whether it is the CLI's `--key` (with `-` for `_`); false: the library's own.
        let cli: Bool
        let doc: String

        /// The CLI option it stands for, or nil.
        var flag: String? { cli ? "--" + key.replacingOccurrences(of: "_", with: "-") : nil }
    }

    /// Every option, in the order `framegraph run --help` lists them where they are the CLI's.
    static let options: [Option] = [
        Option(key: "pipeline", kind: .text, cli: false, doc: "a pipeline file, or a shipped pipeline's name (face-detect)"),
        Option(key: "input", kind: .text, cli: true, doc: "replace the path of the pipeline's file source (a video, photo, image sequence; a URL with allow_network)"),
        Option(key: "output", kind: .text, cli: true, doc: "replace the path of the pipeline's first encode/png sink"),
        Option(key: "mode", kind: .choice(["live", "offline"]), cli: true, doc: "live: paced in real time, drop-while-busy; offline: every frame (default; a camera is always live)"),
        Option(key: "fps", kind: .number(0.1...1000), cli: true, doc: "live: the output clock's rate (default 30); offline: convert the output to N frames per second"),
        Option(key: "policy", kind: .choice(["reuse", "skip"]), cli: true, doc: "live, a tick with no new frame: repeat the last one, or skip it"),
        Option(key: "duration", kind: .number(0.001...31_536_000), cli: true, doc: "how much to run, in seconds: offline of media time, live of clock time"),
        Option(key: "stats", kind: .text, cli: true, doc: "also write the run's statistics as JSON to this file at the end"),
        Option(key: "trace", kind: .text, cli: true, doc: "write a Chrome trace-event file"),
        Option(key: "results", kind: .text, cli: true, doc: "write what the detectors and classifiers find as JSON Lines"),
        Option(key: "set", kind: .texts, cli: true, doc: "NODE.KEY=VALUE each: set options of nodes (a dict in Python)"),
        Option(key: "loop", kind: .flag, cli: true, doc: "loop file sources (stop with stop(), close() or duration)"),
        Option(key: "audio", kind: .choice(["copy", "drop", "aac"]), cli: true, doc: "the input's audio in the output: copied, dropped, or re-encoded to AAC"),
        Option(key: "latency", kind: .text, cli: true, doc: "live: auto, or milliseconds from 0 to 5000 after capture at which a frame is shown"),
        Option(key: "max_latency", kind: .number(0...5000), cli: true, doc: "the most auto latency may grow to, in ms (default 250)"),
        Option(key: "stop_grace", kind: .number(0...3600), cli: true, doc: "after a stop, seconds to wait for work in flight before finalizing the outputs (default 5)"),
        Option(key: "model_budget", kind: .integer(1...1_048_576), cli: true, doc: "memory the models' tensors may take, in MiB (default 2048)"),
        Option(key: "machine_config", kind: .text, cli: true, doc: "this machine's deployment config for hosted models (collection:NAME/ENTRY)"),
        Option(key: "camera", kind: .text, cli: true, doc: "read a V4L2 camera (/dev/video0) instead of the file source; the run is live"),
        Option(key: "camera_size", kind: .text, cli: true, doc: "the camera's requested size, WxH (default 640x480)"),
        Option(key: "camera_fps", kind: .number(0.1...1000), cli: true, doc: "the camera's requested frame rate (default 30)"),
        Option(key: "camera_format", kind: .choice(["auto", "yuyv", "mjpeg"]), cli: true, doc: "the camera's own format"),
        Option(key: "reconnect", kind: .flag, cli: true, doc: "cameras: wait for an unplugged camera; streams: false ends the run on a loss"),
        Option(key: "allow_network", kind: .flag, cli: true, doc: "read network streams (input=\"rtsp://…\")"),
        Option(key: "stream_transport", kind: .choice(["tcp", "udp"]), cli: true, doc: "RTSP media over TCP or UDP"),
        Option(key: "on_loss", kind: .choice(["repeat", "no-signal"]), cli: true, doc: "while a stream is lost: repeat the last frame, or a no-signal frame"),
        Option(key: "credentials", kind: .text, cli: true, doc: "a file whose first line is user:password for the stream"),
        Option(key: "serve", kind: .text, cli: true, doc: "serve the run over HTTP at [ADDRESS:]PORT (dashboard, /metrics, /stats.json …; docs/MONITORING.md)"),
        Option(key: "serve_token_file", kind: .text, cli: true, doc: "the token every request to serve must carry, from a file; required beyond 127.0.0.1"),
        Option(key: "serve_token", kind: .text, cli: true, doc: "the token given inline"),
        Option(key: "serve_clients", kind: .integer(1...1000), cli: true, doc: "most connections serve takes at once (default 32)"),
        Option(key: "serve_fps", kind: .number(0.5...120), cli: true, doc: "most pictures per second each watched node's /video.mjpg sends (default \(String(format: "%g", RunMonitor.defaultPictureRate)))"),
        Option(key: "frames", kind: .flag, cli: false, doc: "whether items carry the output frame (default true; false: results only)"),
        Option(key: "rgb", kind: .choice(RGBConversion.allCases.map(\.rawValue)), cli: false,
               doc: "fast (default: the pixels of ffmpeg -pix_fmt rgb24 and OpenCV) or exact (the png sink's)"),
        Option(key: "queue", kind: .integer(1...1024), cli: false, doc: "items that may wait unread (default 4): offline the run waits beyond it, live the oldest is dropped"),
        Option(key: "source", kind: .choice(["program"]), cli: false, doc: "program: the file source is replaced by frames pushed with fg_push"),
        Option(key: "width", kind: .integer(1...16384), cli: false, doc: "the pushed frames' width"),
        Option(key: "height", kind: .integer(1...16384), cli: false, doc: "the pushed frames' height"),
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

    /// The table as JSON, for `fg_run_options`: `[{"key", "flag" (or null), "kind", "choices"?, "min"?, "max"?, "doc"}]`.
    static func optionsJSON() -> String {
        let list: [[String: Any]] = options.map { o in
            var entry: [String: Any] = ["key": o.key, "flag": o.flag ?? NSNull(), "doc": o.doc]
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
        guard !has("input"), !has("camera") else { throw RequestError("a program source replaces the input: give no input or camera with it") }
        guard let width = integer("width"), let height = integer("height") else {
            throw RequestError("a program source needs the frames' width and height (1 to 16384 each)")
        }
        return (width, height)
    }

    /// The command line's changes this request makes (``PipelineChanges``).
    var changes: PipelineChanges {
        var changes = PipelineChanges()
        changes.camera = CameraCommandLine(path: text("camera"), size: text("camera_size"), fps: number("camera_fps").map { "\($0)" },
                                           format: text("camera_format"), reconnect: flag("reconnect") ?? false)
        changes.input = text("input")
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
        return changes
    }

    /// The mode asked for (nil: not asked).
    var requestedMode: RunMode? { text("mode").flatMap(RunMode.init(rawValue:)) }

    /// The run's options as the CLI makes them from the same words (`framegraph run`'s runOptions):
    /// mode, clock rate, policy, duration, trace, stats, latency, stop grace. `hasLiveSource`: a
    /// camera or stream (the run is then live whatever the mode asked).
    func runOptions(pipelineFile: String, hasLiveSource: Bool) throws -> RunOptions {
        var options = RunOptions()
        options.mode = try PipelineChanges.mode(requested: requestedMode, hasCamera: hasLiveSource)
        if let policy = text("policy").flatMap(TickPolicy.init(rawValue:)) { options.tickPolicy = policy }
        options.fps = number("fps") ?? 30
        // Offline, fps converts the output to that rate; without it the source's timing is kept.
        if options.mode == .offline, let fps = number("fps") { options.outputRate = fps }
        if let trace = text("trace") { options.traceURL = URL(fileURLWithPath: trace) }
        if let stats = text("stats") { options.otherOutputs[stats] = "stats" }
        options.otherInputs[pipelineFile] = "the run (the pipeline file)"
        options.duration = number("duration")
        if let grace = number("stop_grace") { options.stopGrace = grace }
        guard let latency = PresentationDelay.parse(text("latency"), maximumMilliseconds: number("max_latency")) else {
            throw RequestError("latency expects auto or milliseconds from 0 to 5000, got '\((text("latency") ?? "").prefix(40))'")
        }
        options.latency = latency
        options.tickPhaseFollowsDelay = true
        return options
    }
}

extension OpenRequest.Option.Kind {
    /// What a value of this kind is, for an error.
    var expected: String {
        switch self {
        case .text: return "a string"
        case .flag: return "true or false"
        case .texts: return "a list of strings"
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
