import FFmpegSupport
import Foundation
import FrameGraph
import Synchronization

/// What `framegraph run … --serve` serves about a run: the Prometheus metrics, the live statistics,
/// the output picture and any other node's (still JPEG and MJPEG), the run's events, and the
/// dashboard page. It reads the same report the statistics file is written from, while the run goes
/// and (frozen) after it.
///
/// ```swift
/// let monitor = try RunMonitor(runner: runner, options: .init(address: ServeAddress(port: 8080)), title: "face-detect")
/// monitor.watchPictures(of: [source, resize, annotate], output: annotate)
/// monitor.start()
/// let report = try runner.run()
/// monitor.finish(report)
/// ```
public final class RunMonitor: @unchecked Sendable {
    /// The server (its port, its counters).
    public let server: HTTPServer
    private let runner: GraphRunner
    private let title: String
    private let final = Protected<RunReport?>(nil)
    /// The picture taps by node name, in graph order, and the node whose picture is the default.
    private var taps: [(node: String, tap: PictureTap)] = []
    private var outputNode: String?
    private let pictureSignal = NSCondition()
    private var pictureThread: Thread?
    private let pictureExited = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// Most pictures per second each node's picture streams get (its JPEG is made at most this often).
    public let pictureRate: Double
    /// Quality of the served JPEG pictures (libjpeg's 1 … 100).
    public let pictureQuality: Int
    /// Called by a token-holder's `POST /stop`.
    private let onStop: @Sendable () -> Void

    /// Opens the server's socket (not yet serving). `onStop` is what an authorized `POST /stop` does
    /// (stop the run).
    public init(runner: GraphRunner, options: HTTPServer.Options, title: String, pictureRate: Double = RunMonitor.defaultPictureRate,
                pictureQuality: Int = JPEGStreamEncoder.liveQuality,
                onStop: @escaping @Sendable () -> Void) throws(ServeError) {
        self.runner = runner
        self.title = title
        self.pictureRate = max(0.5, pictureRate)
        self.pictureQuality = pictureQuality
        self.onStop = onStop
        let routes = Routes()
        server = try HTTPServer(options: options) { request in routes.answer(request) }
        routes.monitor = self
    }

    /// Pictures a second a viewer gets by default (`--serve-fps`): a third of a 30 fps camera's rate, as
    /// live views run below the camera (Frigate's MJPEG view: 3 by default); a JPEG is made at most
    /// this often per watched node, whatever the number of viewers.
    public static let defaultPictureRate = 10.0

    /// Serves the pictures of what each of `nodes` emits (frames) — `output`'s at `/picture.jpg` and
    /// `/video.mjpg`, any other's with `?node=NAME` — by adding a ``PictureTap`` as a target of each.
    /// A tap keeps a node's newest frame only while someone watches that node (the output's always).
    /// Call before the run is validated.
    public func watchPictures(of nodes: [Node], output: Node?) {
        for node in nodes where node.outputKind == .frames && !taps.contains(where: { $0.node == node.name }) {
            let name = node.name, isOutput = node === output
            let tap = PictureTap(name: "\(name).serve", keeps: { [weak self] in isOutput || self?.server.wantsPictures(of: name) == true }) { [weak self] in
                guard let self, self.server.wantsPictures(of: name) else { return }
                self.pictureSignal.lock()
                self.pictureSignal.signal()
                self.pictureSignal.unlock()
            }
            node.addTarget(tap)
            taps.append((name, tap))
        }
        outputNode = output?.name
    }

    /// Serves the MPEG-TS segments an encode sink writes to `folder` as a live HLS stream
    /// (`/hls/index.m3u8`, the segments beside it): `segments` lists the finished ones, oldest first
    /// (called on the server's thread). Call before ``start()``.
    public func watchSegments(folder: String, segments: @escaping @Sendable () -> [HLSPlaylist.Segment]) {
        hls = (folder, segments)
    }
    private var hls: (folder: String, segments: @Sendable () -> [HLSPlaylist.Segment])?

    /// Largest segment file served (bytes).
    static let largestSegment = 512 << 20

    /// `/hls/…`: the playlist, or a segment it lists.
    private func routeHLS(_ path: String) -> HTTPResponse {
        guard let hls else {
            return .text(404, "this run writes no HLS segments: give its encode node a .ts path and segment= (encode path=live/cam.ts segment=4s)")
        }
        let name = String(path.dropFirst("/hls/".count))
        let segments = hls.segments()
        if name == "index.m3u8" {
            return HTTPResponse(status: 200, contentType: HLSPlaylist.contentType,
                                body: Array(HLSPlaylist.render(segments, ended: final.withLock { $0 != nil }).utf8))
        }
        // Only a file the playlist names (no other path can be asked for).
        guard segments.contains(where: { $0.file == name }) else { return .text(404, "no segment '\(name)' (see /hls/index.m3u8)") }
        let file = (hls.folder as NSString).appendingPathComponent(name)
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue, size <= Self.largestSegment,
              let data = FileManager.default.contents(atPath: file) else {
            return .text(404, "segment '\(name)' is gone (deleted by retention?)")
        }
        return HTTPResponse(status: 200, contentType: "video/mp2t", body: [UInt8](data))
    }

    /// The nodes whose pictures are served, in graph order (those that emit 8-bit pictures, once
    /// the run is validated).
    public var pictureNodes: [String] {
        taps.filter { $0.tap.showsPictures }.map(\.node)
    }

    /// The node whose picture `/picture.jpg` shows without `?node=` (the output's).
    public var defaultPictureNode: String? { outputNode }

    /// Streams what `node` emits (a detector's or classifier's results) to `/events`, one line per
    /// frame in the results file's schema. Call before the run is validated.
    public func watchResults(of node: Node) {
        let server = self.server
        node.addTarget(ResultsEventTap(name: "\(node.name).events", producer: node.name,
                                       isWanted: { server.statistics.eventClients > 0 },
                                       publish: { server.publish(event: $0) }))
    }

    /// The node whose output is the run's picture: the one feeding its primary video sink (nil when
    /// the run writes no frames). `nodes` in graph order.
    public static func pictureNode(among nodes: [Node]) -> Node? {
        guard let sink = RunReport.primarySink(among: nodes), sink.inputKinds.first != .results else { return nil }
        return nodes.first { n in n.outputKind == .frames && n.targets.contains { $0.node === sink && $0.port == 0 } }
    }

    /// Starts serving (and the picture encoder).
    public func start() {
        server.start()
        guard !taps.isEmpty else { return }
        let thread = Thread { [self] in
            encodePictures()
            pictureExited.signal()
        }
        thread.name = "serve: pictures"
        pictureThread = thread
        thread.start()
    }

    /// The run has ended: from now on the figures served are `report`'s (the statistics file's).
    public func finish(_ report: RunReport) {
        final.withLock { $0 = report }
        server.publish(event: Self.eventJSON(["event": "stop", "framesOut": report.framesOut, "failed": report.failure != nil]))
    }

    /// Stops serving.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        if let pictureThread {
            pictureSignal.lock()
            pictureSignal.signal()
            pictureSignal.unlock()
            pictureExited.wait()
            self.pictureThread = nil
        }
        server.stop()
    }

    /// The report now: the final one after the run, else the runner's report so far.
    public func currentReport() -> (report: RunReport, finished: Bool) {
        if let report = final.withLock({ $0 }) { return (report, true) }
        return (runner.report(), false)
    }

    /// The metrics text now.
    public func metrics() -> String {
        let (report, finished) = currentReport()
        return MetricsText.render(report: report, nodes: runner.nodes, finished: finished,
                                  extras: .init(server: server.statistics))
    }

    /// Publishes a run event (start, swap, reconnect, stop) to the event streams.
    public func event(_ fields: [String: Any]) {
        server.publish(event: Self.eventJSON(fields))
    }

    /// Publishes one frame's results line (the JSON Lines schema) to the event streams.
    public func resultsLine(_ line: String) {
        server.publish(event: line)
    }

    static func eventJSON(_ fields: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The encoder's loop: for each node someone watches, its newest frame as JPEG, at most
    /// `pictureRate` times a second, and once more for a frame that has not been sent yet (the last
    /// of a run). One JPEG per picture, whatever the number of viewers.
    private func encodePictures() {
        var encoders: [String: JPEGStreamEncoder] = [:]
        var encoded: [String: Int] = [:]
        var last: [String: Date] = [:]
        let interval = 1 / pictureRate
        var nextDue: Date?
        while !stopping.load(ordering: .relaxed) {
            pictureSignal.lock()
            _ = pictureSignal.wait(until: nextDue ?? Date().addingTimeInterval(0.1))
            pictureSignal.unlock()
            nextDue = nil
            let wanted = server.wantedPictureChannels
            for (name, tap) in taps where wanted.contains(name) {
                let (frame, generation) = tap.newest
                guard let frame, generation != encoded[name] else { continue }
                let now = Date(), due = (last[name] ?? .distantPast).addingTimeInterval(interval)
                if due > now {
                    nextDue = min(nextDue ?? due, due)
                    continue
                }
                last[name] = now
                encoded[name] = generation
                let encoder = encoders[name] ?? JPEGStreamEncoder(quality: pictureQuality)
                encoders[name] = encoder
                if let bytes = try? encoder.encode(frame) { server.publish(picture: bytes, channel: name) }
            }
        }
    }

    /// The routes, on the server's thread.
    fileprivate func route(_ request: HTTPRequest) -> HTTPReply {
        let (path, method) = (request.path, request.method)
        if path == "/stop" {
            guard method == "POST" else { return .complete(.text(405, "POST /stop (with the token) stops the run", headers: [("Allow", "POST")])) }
            guard server.options.token != nil else {
                return .complete(.text(403, "stopping the run needs the server to have a token (--serve-token-file)"))
            }
            onStop()
            return .complete(.text(200, "stopping"))
        }
        guard method == "GET" else { return .complete(.text(405, "only GET is served", headers: [("Allow", "GET")])) }
        switch path {
        case "/metrics":
            return .complete(HTTPResponse(status: 200, contentType: MetricsText.contentType, body: Array(metrics().utf8)))
        case "/stats.json":
            let (report, finished) = currentReport()
            var body = (try? report.json()) ?? Data("{}".utf8)
            if !finished, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
                var o = object
                o["finished"] = false
                body = (try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])) ?? body
            }
            return .complete(HTTPResponse(status: 200, contentType: "application/json", body: [UInt8](body)))
        case "/picture.jpg", "/video.mjpg":
            switch pictureChannel(request.query["node"]) {
            case .failure(let refusal): return .complete(refusal.response)
            case .success(let channel): return path == "/picture.jpg" ? .nextPicture(channel: channel) : .pictureStream(channel: channel)
            }
        case _ where path.hasPrefix("/hls/"):
            return .complete(routeHLS(path))
        case "/events":
            let (report, finished) = currentReport()
            return .eventStream(first: [Self.eventJSON(["event": finished ? "finished" : "running", "mode": report.mode, "framesOut": report.framesOut])])
        case "/", "/index.html":
            if let node = request.query["node"], case .failure(let refusal) = pictureChannel(node) { return .complete(refusal.response) }
            let page = Dashboard.page(monitor: self, node: request.query["node"])
            return .complete(HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(page.utf8)))
        case "/dashboard.js":
            return .complete(HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8", body: Array(Dashboard.script.utf8)))
        default:
            return .complete(.text(404, "no such page: try /, /metrics, /stats.json, /picture.jpg, /video.mjpg, /hls/index.m3u8 or /events"))
        }
    }

    /// Why a picture cannot be served: the 404 answered.
    struct PictureRefusal: Error {
        let response: HTTPResponse
    }

    /// The picture channel for a request's `node` (nil: the output's), or the 404 that names the choices.
    func pictureChannel(_ node: String?) -> Result<String, PictureRefusal> {
        let choices = pictureNodes
        guard let name = node ?? outputNode else {
            let hint = choices.isEmpty ? "" : "; choose a node with ?node= (\(choices.joined(separator: ", ")))"
            return .failure(PictureRefusal(response: .text(404, "this run writes no pictures\(hint)")))
        }
        guard choices.contains(name) || (node == nil && taps.contains { $0.node == name }) else {
            let list = choices.isEmpty ? "none do" : "choose from: \(choices.joined(separator: ", "))"
            let what = taps.contains { $0.node == name } ? "node '\(name)' emits no 8-bit pictures" : "no node '\(name)' emits pictures"
            return .failure(PictureRefusal(response: .text(404, "\(what) (\(list))")))
        }
        return .success(name)
    }

    /// The run's title (the pipeline's name).
    public var runTitle: String { title }
    /// Whether the run has a picture to show.
    public var hasPicture: Bool { outputNode != nil }
}

/// Holds the monitor weakly for the server's routing closure (set once, before serving starts).
private final class Routes: @unchecked Sendable {
    weak var monitor: RunMonitor?
    func answer(_ request: HTTPRequest) -> HTTPReply {
        monitor?.route(request) ?? .complete(.text(503, "the run is over"))
    }
}
