import Foundation
import FrameGraph
import Synchronization

/// A small HTTP/1.1 server on its own thread (one `poll` loop, non-blocking sockets), made for
/// watching a run: every request is answered by ``route`` on that thread; pictures and events are
/// handed to it by ``publish(picture:)`` and ``publish(event:)`` from any thread, and never wait.
///
/// Bounds, so a client can never hold the run back or grow memory: at most ``Options/maxClients``
/// connections (more are answered 503); a request head at most 8 KiB; a picture stream holds at
/// most one picture that its client has not taken yet beyond a kernel send buffer capped at
/// ``Options/streamSendBuffer`` (newer ones are dropped for it and counted);
/// an event stream at most ``Options/eventBufferBytes``; a connection that sends no complete
/// request within ``Options/requestTimeout`` is closed.
///
/// ```swift
/// let server = try HTTPServer(options: .init(address: ServeAddress(port: 8080))) { request in
///     .complete(.text(200, "hello"))
/// }
/// server.start()
/// ```
public final class HTTPServer: @unchecked Sendable {
    /// How the server listens and what it bounds.
    public struct Options: Sendable {
        /// Where it listens. Default: 127.0.0.1, a port the system picks.
        public var address = ServeAddress(port: 0)
        /// The secret every request must carry (nil: none, loopback only).
        public var token: AccessToken?
        /// Most connections at once; beyond, 503. Default 32.
        public var maxClients = 32
        /// Seconds a connection may take to send its request. Default 10.
        public var requestTimeout = 10.0
        /// Seconds a still-picture request waits for a picture. Default 3.
        public var pictureWait = 3.0
        /// The kernel send buffer of a picture stream's connection, in bytes (a few pictures on the
        /// way; beyond, pictures are dropped for that client). Default 256 KiB.
        public var streamSendBuffer = 256 * 1024
        /// Most bytes of events waiting for one event-stream client. Default 256 KiB.
        public var eventBufferBytes = 256 * 1024

        public init(address: ServeAddress = ServeAddress(port: 0), token: AccessToken? = nil, maxClients: Int = 32) {
            self.address = address
            self.token = token
            self.maxClients = maxClients
        }
    }

    /// What the server has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Connections open now.
        public var clients = 0
        /// Connections open now that stream pictures.
        public var pictureClients = 0
        /// Connections open now that stream events.
        public var eventClients = 0
        /// Requests answered (streams included).
        public var requests = 0
        /// Connections refused because ``Options/maxClients`` were open (503).
        public var refused = 0
        /// Requests refused for want of the token (401).
        public var unauthorized = 0
        /// Pictures sent to stream clients, all together.
        public var picturesSent = 0
        /// Pictures not sent to a stream client because it had not taken the previous one yet.
        public var picturesDropped = 0
        /// Events not sent to a client because its buffer was full.
        public var eventsDropped = 0

        public init() {}
    }

    public let options: Options
    /// The port it listens on (the one the system picked, for port 0).
    public let port: UInt16
    private let route: @Sendable (HTTPRequest) -> HTTPReply
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let stopping = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    private var thread: Thread?
    private let inbox = Protected(Inbox())
    private let stats = Protected(Statistics())
    private let parser = HTTPRequestParser()

    /// What other threads hand to the loop.
    private struct Inbox {
        /// The newest picture of each channel and how many were published to it.
        var pictures: [String: (bytes: [UInt8], generation: Int)] = [:]
        var events: [String] = []
    }

    /// Opens the listening socket (the port is known after this); ``start()`` begins serving.
    public init(options: Options, route: @escaping @Sendable (HTTPRequest) -> HTTPReply) throws(ServeError) {
        guard options.token != nil || options.address.isLoopback else { throw .tokenRequired(address: options.address.description) }
        self.options = options
        self.route = route
        do {
            let opened = try Socket.listen(address: options.address.host, port: options.address.port)
            listener = opened.fd
            port = opened.port
            wake = try Socket.wakePipe()
        } catch {
            throw .cannotListen(error.description)
        }
    }

    deinit {
        Socket.close(listener)
        Socket.close(wake.read)
        Socket.close(wake.write)
    }

    /// Starts the server's thread.
    public func start() {
        let thread = Thread { [self] in
            loop()
            exited.signal()
        }
        thread.name = "serve"
        self.thread = thread
        thread.start()
    }

    /// Stops serving: every connection is closed; returns when the thread has ended.
    public func stop() {
        guard thread != nil, !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Socket.wake(wake.write)
        exited.wait()
        thread = nil
    }

    /// The counters so far.
    public var statistics: Statistics { stats.withLock { $0 } }

    /// Hands the loop a new JPEG picture of `channel` (a node's name; "" for the default one) for its
    /// picture streams and still requests (only the newest waiting one is kept).
    public func publish(picture: [UInt8], channel: String = "") {
        inbox.withLock {
            let generation = ($0.pictures[channel]?.generation ?? 0) + 1
            $0.pictures[channel] = (picture, generation)
        }
        Socket.wake(wake.write)
    }

    /// Hands the loop one event (the `data:` text of a Server-Sent Event; newlines split it into
    /// several `data:` lines). At most 4096 events wait for the loop; beyond, the oldest are dropped.
    public func publish(event: String) {
        inbox.withLock {
            $0.events.append(event)
            if $0.events.count > 4096 { $0.events.removeFirst($0.events.count - 4096) }
        }
        Socket.wake(wake.write)
    }

    /// Whether a client waits for pictures now (a stream or a still request).
    public var wantsPictures: Bool { !wantedChannels.withLock { $0 }.isEmpty }
    /// The picture channels that a client waits for now (streams and still requests).
    public var wantedPictureChannels: Set<String> { wantedChannels.withLock { $0 } }
    /// Whether a client waits for pictures of `channel` now.
    public func wantsPictures(of channel: String) -> Bool { wantedChannels.withLock { $0.contains(channel) } }
    private let wantedChannels = Protected(Set<String>())

    // MARK: - The loop (its thread only)

    private enum Mode {
        case reading
        case closing
        case pictures(channel: String)
        case awaitingPicture(channel: String, since: Date)
        case events
    }

    private final class Client {
        let fd: Int32
        var mode = Mode.reading
        var input: [UInt8] = []
        var output: [UInt8] = []
        var sent = 0
        let opened = Date()
        init(fd: Int32) { self.fd = fd }
        var pending: Int { output.count - sent }
        func queue(_ bytes: [UInt8]) {
            if sent > 0 && sent == output.count {
                output.removeAll(keepingCapacity: true)
                sent = 0
            } else if sent > 65536 {
                output.removeFirst(sent)
                sent = 0
            }
            output += bytes
        }
    }

    private var clients: [Int32: Client] = [:]
    private var lastPictures: [String: [UInt8]] = [:]
    private var seenGenerations: [String: Int] = [:]

    private func loop() {
        while !stopping.load(ordering: .acquiring) {
            var entries: [(fd: Int32, events: Int16)] = [(listener, Socket.readable), (wake.read, Socket.readable)]
            let order = Array(clients.keys)
            for fd in order {
                guard let c = clients[fd] else { continue }
                var events: Int16 = 0
                if case .reading = c.mode { events |= Socket.readable }
                if c.pending > 0 { events |= Socket.writable }
                if case .pictures = c.mode { events |= Socket.readable }  // notices a close
                if case .events = c.mode { events |= Socket.readable }
                entries.append((fd, events))
            }
            let returned = Socket.poll(entries, timeoutMs: 200)
            if returned[1] != 0 { Socket.drain(wake.read) }
            takeInbox()
            for (i, fd) in order.enumerated() {
                guard let c = clients[fd] else { continue }
                let r = returned[i + 2]
                if r & Socket.readable != 0 { readFrom(c) }
                if clients[fd] != nil, r & (Socket.writable | Socket.failed) != 0 { writeTo(c) }
                if clients[fd] != nil, r & Socket.failed != 0, r & Socket.readable == 0 { drop(c) }
            }
            if returned[0] & Socket.readable != 0 { acceptAll() }
            expire()
            updateCounts()
        }
        for c in Array(clients.values) { drop(c) }
        updateCounts()
    }

    private func acceptAll() {
        while let fd = Socket.accept(listener) {
            if clients.count >= options.maxClients {
                // Best effort: the answer fits the socket's buffer; then the connection closes.
                _ = Socket.write(fd, HTTPResponse.text(503, "too many viewers (at most \(options.maxClients)); try again later",
                                                       headers: [("Retry-After", "5")]).serialized(), from: 0)
                Socket.close(fd)
                stats.withLock { $0.refused += 1 }
                continue
            }
            clients[fd] = Client(fd: fd)
        }
    }

    private func readFrom(_ c: Client) {
        switch c.mode {
        case .reading:
            let room = parser.maxHeadBytes + 5 - c.input.count
            switch Socket.read(c.fd, into: &c.input, limit: max(1, room)) {
            case .closed: return drop(c)
            case .wouldBlock: return
            case .bytes: break
            }
            do {
                guard let request = try parser.parse(c.input) else { return }
                answer(request, on: c)
            } catch {
                respond(c, .text(error.status, error.description))
            }
        default:
            // A streaming client sends nothing more; data or a close ends it.
            var scratch: [UInt8] = []
            if Socket.read(c.fd, into: &scratch, limit: 512) == .closed { drop(c) }
        }
    }

    private func answer(_ request: HTTPRequest, on c: Client) {
        stats.withLock { $0.requests += 1 }
        var extra: [(String, String)] = []
        if let token = options.token {
            guard token.admits(request) else {
                stats.withLock { $0.unauthorized += 1 }
                return respond(c, .text(401, "this server needs its token: an Authorization: Bearer header, or ?token= in the address",
                                        headers: [("WWW-Authenticate", "Bearer realm=\"framegraph\"")]))
            }
            if request.query["token"] != nil { extra.append(("Set-Cookie", token.cookieHeader)) }
        }
        switch route(request) {
        case .complete(var response):
            response.headers += extra
            respond(c, response)
        case .pictureStream(let channel):
            c.mode = .pictures(channel: channel)
            Socket.limitSendBuffer(c.fd, bytes: Int32(options.streamSendBuffer))
            var head = "HTTP/1.1 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=\(Self.boundary)\r\n" + HTTPResponse.commonHeaders
            for (n, v) in extra { head += "\(n): \(v)\r\n" }
            c.queue(Array((head + "\r\n").utf8))
            if let picture = lastPictures[channel] { sendPart(picture, to: c) }
        case .nextPicture(let channel):
            if let picture = lastPictures[channel] {
                var r = HTTPResponse(status: 200, contentType: "image/jpeg", body: picture)
                r.headers += extra
                respond(c, r)
            } else {
                c.mode = .awaitingPicture(channel: channel, since: Date())
            }
        case .eventStream(let first):
            c.mode = .events
            var head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n" + HTTPResponse.commonHeaders
            for (n, v) in extra { head += "\(n): \(v)\r\n" }
            c.queue(Array((head + "\r\n").utf8))
            for e in first { c.queue(Self.eventBytes(e)) }
        }
        if c.pending > 0 { writeTo(c) }
    }

    private func respond(_ c: Client, _ response: HTTPResponse) {
        c.mode = .closing
        c.input = []
        c.queue(response.serialized())
        writeTo(c)
    }

    private func writeTo(_ c: Client) {
        while c.pending > 0 {
            switch Socket.write(c.fd, c.output, from: c.sent) {
            case .bytes(let n): c.sent += n
            case .wouldBlock: return
            case .closed: return drop(c)
            }
        }
        if case .closing = c.mode { drop(c) }
    }

    private func drop(_ c: Client) {
        guard clients.removeValue(forKey: c.fd) != nil else { return }
        Socket.close(c.fd)
    }

    static let boundary = "framegraphpicture"

    private func sendPart(_ picture: [UInt8], to c: Client) {
        // One picture waiting at most: a client that has not taken the last one skips this one.
        guard c.pending == 0 || c.sent == 0 && c.output.count < 4096 else {
            stats.withLock { $0.picturesDropped += 1 }
            return
        }
        let head = "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(picture.count)\r\n\r\n"
        c.queue(Array(head.utf8) + picture + Array("\r\n".utf8))
        stats.withLock { $0.picturesSent += 1 }
        writeTo(c)
    }

    static func eventBytes(_ event: String) -> [UInt8] {
        var text = ""
        for line in event.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return Array((text + "\n").utf8)
    }

    private func takeInbox() {
        let (pictures, events) = inbox.withLock { box -> ([String: (bytes: [UInt8], generation: Int)], [String]) in
            let e = box.events
            box.events = []
            return (box.pictures, e)
        }
        for (channel, picture) in pictures where picture.generation != seenGenerations[channel] {
            seenGenerations[channel] = picture.generation
            lastPictures[channel] = picture.bytes
            for c in Array(clients.values) {
                switch c.mode {
                case .pictures(let wanted) where wanted == channel: sendPart(picture.bytes, to: c)
                case .awaitingPicture(let wanted, _) where wanted == channel:
                    respond(c, HTTPResponse(status: 200, contentType: "image/jpeg", body: picture.bytes))
                default: break
                }
            }
        }
        guard !events.isEmpty else { return }
        for c in Array(clients.values) {
            guard case .events = c.mode else { continue }
            var dropped = 0
            for e in events {
                let bytes = Self.eventBytes(e)
                if c.pending + bytes.count > options.eventBufferBytes { dropped += 1; continue }
                c.queue(bytes)
            }
            if dropped > 0 { stats.withLock { $0.eventsDropped += dropped } }
            if c.pending > 0 { writeTo(c) }
        }
    }

    private func expire() {
        let now = Date()
        for c in Array(clients.values) {
            switch c.mode {
            case .reading where now.timeIntervalSince(c.opened) > options.requestTimeout:
                respond(c, .text(408, "no complete request within \(Int(options.requestTimeout)) s"))
            case .awaitingPicture(_, let since) where now.timeIntervalSince(since) > options.pictureWait:
                respond(c, .text(503, "no picture yet"))
            default: break
            }
        }
    }

    private func updateCounts() {
        var pictures = 0, events = 0, wanted = Set<String>()
        for c in clients.values {
            switch c.mode {
            case .pictures(let channel): pictures += 1; wanted.insert(channel)
            case .awaitingPicture(let channel, _): wanted.insert(channel)
            case .events: events += 1
            default: break
            }
        }
        if wanted != wantedChannels.withLock({ $0 }) { wantedChannels.withLock { $0 = wanted } }
        let count = clients.count
        stats.withLock {
            $0.clients = count
            $0.pictureClients = pictures
            $0.eventClients = events
        }
    }
}
