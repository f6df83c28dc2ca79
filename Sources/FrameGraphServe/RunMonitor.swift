import FFmpegSupport
import Foundation
import FrameGraph
import Synchronization

/// What `framegraph run … --serve` serves about a run: the Prometheus metrics, the live statistics,
/// the output picture (still JPEG and MJPEG), the run's events, and the dashboard page. It reads
/// the same report the statistics file is written from, while the run goes and (frozen) after it.
///
/// ```swift
/// let monitor = try RunMonitor(runner: runner, options: .init(address: ServeAddress(port: 8080)), title: "face-detect")
/// monitor.watchPicture(of: annotate)
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
    private let reconnects: @Sendable () -> [(stream: String, count: Int)]
    private var tap: PictureTap?
    private let pictureSignal = NSCondition()
    private var pictureThread: Thread?
    private let pictureExited = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// Most pictures per second the picture streams get (the JPEG is made at most this often).
    public let pictureRate: Double
    /// Called by a token-holder's `POST /stop`.
    private let onStop: @Sendable () -> Void

    /// Opens the server's socket (not yet serving). `reconnects` gives each stream's reconnect count
    /// (cameras); `onStop` is what an authorized `POST /stop` does (stop the run).
    public init(runner: GraphRunner, options: HTTPServer.Options, title: String, pictureRate: Double = 15,
                reconnects: @escaping @Sendable () -> [(stream: String, count: Int)] = { [] },
                onStop: @escaping @Sendable () -> Void) throws(ServeError) {
        self.runner = runner
        self.title = title
        self.reconnects = reconnects
        self.pictureRate = max(0.5, pictureRate)
        self.onStop = onStop
        let routes = Routes()
        server = try HTTPServer(options: options) { request in routes.answer(request) }
        routes.monitor = self
    }

    /// Serves the picture of what `node` emits (frames): adds a ``PictureTap`` as its target. Call
    /// before the run is validated.
    public func watchPicture(of node: Node) {
        let tap = PictureTap(name: "\(node.name).serve") { [weak self] in
            guard let self else { return }
            if self.server.wantsPictures {
                self.pictureSignal.lock()
                self.pictureSignal.signal()
                self.pictureSignal.unlock()
            }
        }
        node.addTarget(tap)
        self.tap = tap
    }

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
        guard tap != nil else { return }
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
                                  extras: .init(reconnects: reconnects(), server: server.statistics))
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

    /// The encoder's loop: while someone watches, the newest frame as JPEG, at most `pictureRate`
    /// times a second, and once more for a frame that has not been sent yet (the last of a run).
    private func encodePictures() {
        guard let tap else { return }
        let encoder = JPEGStreamEncoder(quality: 5)
        var encoded = 0
        var last = Date.distantPast
        while !stopping.load(ordering: .relaxed) {
            pictureSignal.lock()
            _ = pictureSignal.wait(until: Date().addingTimeInterval(0.1))
            pictureSignal.unlock()
            guard server.wantsPictures else { continue }
            let (frame, generation) = tap.newest
            guard let frame, generation != encoded else { continue }
            let wait = 1 / pictureRate - Date().timeIntervalSince(last)
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            let (newer, newerGeneration) = tap.newest
            last = Date()
            encoded = newerGeneration
            if let bytes = try? encoder.encode(newer ?? frame) { server.publish(picture: bytes) }
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
        case "/picture.jpg":
            return tap == nil ? .complete(.text(404, "this run writes no pictures")) : .nextPicture
        case "/video.mjpg":
            return tap == nil ? .complete(.text(404, "this run writes no pictures")) : .pictureStream
        case "/events":
            let (report, finished) = currentReport()
            return .eventStream(first: [Self.eventJSON(["event": finished ? "finished" : "running", "mode": report.mode, "framesOut": report.framesOut])])
        case "/", "/index.html":
            return .complete(HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(Dashboard.page(monitor: self).utf8)))
        case "/dashboard.js":
            return .complete(HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8", body: Array(Dashboard.script.utf8)))
        default:
            return .complete(.text(404, "no such page: try /, /metrics, /stats.json, /picture.jpg, /video.mjpg or /events"))
        }
    }

    /// The run's title (the pipeline's name).
    public var runTitle: String { title }
    /// Whether the run has a picture to show.
    public var hasPicture: Bool { tap != nil }
}

/// Holds the monitor weakly for the server's routing closure (set once, before serving starts).
private final class Routes: @unchecked Sendable {
    weak var monitor: RunMonitor?
    func answer(_ request: HTTPRequest) -> HTTPReply {
        monitor?.route(request) ?? .complete(.text(503, "the run is over"))
    }
}
