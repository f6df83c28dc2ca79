import Foundation
import FrameGraph
import FrameGraphServe
import Testing
import TestSupport

/// The server on 127.0.0.1 with curl as the client: the token, the client limit, picture streams to
/// many clients, and a client that never reads.
@Suite(.serialized, .enabled(if: Curl.path != nil, "needs curl (scripts/install-deps.sh installs it)"))
struct HTTPServerTests {
    static let token = "test-token-0123456789abcdef"

    /// A server whose `/video.mjpg` streams what `publish` hands it and whose other paths answer "ok".
    static func server(token: String? = nil, maxClients: Int = 32) throws -> HTTPServer {
        var options = HTTPServer.Options(address: ServeAddress(port: 0), token: try token.map { try AccessToken($0) }, maxClients: maxClients)
        options.requestTimeout = 5
        let server = try HTTPServer(options: options) { request in
            switch request.path {
            case "/video.mjpg": return .pictureStream(channel: "")
            case "/picture.jpg": return .nextPicture(channel: "")
            case "/events": return .eventStream(first: ["hello"])
            default: return .complete(.text(200, "ok"))
            }
        }
        server.start()
        return server
    }

    @Test func aTokenIsRequiredBeyondLoopback() throws {
        #expect(throws: ServeError.tokenRequired(address: "0.0.0.0:0")) {
            _ = try HTTPServer(options: .init(address: ServeAddress(host: "0.0.0.0", port: 0))) { _ in .complete(.text(200, "")) }
        }
        #expect(throws: ServeError.tokenTooShort) { _ = try AccessToken("short") }
        let port = try ServeAddress(parsing: "8080")
        #expect(port == ServeAddress(host: "127.0.0.1", port: 8080))
        #expect(throws: ServeError.self) { _ = try ServeAddress(parsing: "localhost:8080") }
        let any = try ServeAddress(parsing: "0.0.0.0:1")
        #expect(!any.isLoopback)
    }

    @Test func ipv6InBracketsLoopbackWithoutATokenOthersWithOne() throws {
        let six = try ServeAddress(parsing: "[::1]:0")
        #expect(six.host == "::1" && six.isIPv6 && six.isLoopback && six.description == "[::1]:0")
        #expect(!(try ServeAddress(parsing: "[::]:8080")).isLoopback)
        for bad in ["[::1]", "[::1]8080", "::1:8080", "[127.0.0.1]:80", "[fe80::1%eth0]:80", "[::1]:99999"] {
            #expect(throws: ServeError.self, "\(bad)") { _ = try ServeAddress(parsing: bad) }
        }
        #expect(throws: ServeError.tokenRequired(address: "[::]:0")) {
            _ = try HTTPServer(options: .init(address: ServeAddress(host: "::", port: 0))) { _ in .complete(.text(200, "")) }
        }
        let server = try HTTPServer(options: .init(address: six)) { _ in .complete(.text(200, "ok over IPv6")) }
        server.start()
        defer { server.stop() }
        let answer = try Curl.fetch("http://[::1]:\(server.port)/metrics", ["-g"])
        #expect(answer.status == 200 && answer.text.contains("ok over IPv6"), "\(answer.text)")
    }

    @Test func withoutTheToken401WithIt200() throws {
        let server = try Self.server(token: Self.token)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        #expect(try Curl.fetch("\(base)/metrics").status == 401)
        #expect(try Curl.fetch("\(base)/metrics", ["-H", "Authorization: Bearer wrong-token-0123456789abc"]).status == 401)
        #expect(try Curl.fetch("\(base)/metrics?token=\(Self.token)x").status == 401)
        #expect(try Curl.fetch("\(base)/metrics", ["-H", "Authorization: Bearer \(Self.token)"]).status == 200)
        let query = try Curl.fetch("\(base)/metrics?token=\(Self.token)", ["-i"])
        #expect(query.status == 200)
        #expect(query.text.contains("Set-Cookie: framegraph_token="), "a ?token= request sets the cookie for the page's own requests")
        #expect(try Curl.fetch("\(base)/metrics", ["-H", "Cookie: framegraph_token=\(Self.token)"]).status == 200)
        #expect(server.statistics.unauthorized == 3)
    }

    @Test func beyondMaxClients503() throws {
        let server = try Self.server(maxClients: 2)
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/video.mjpg"
        let holders = try (0..<2).map { _ in try Self.background(["-s", "-o", "/dev/null", "--max-time", "6", url]) }
        defer { holders.forEach { $0.terminate() } }
        try Self.waitFor { server.statistics.pictureClients == 2 }
        #expect(try Curl.fetch("http://127.0.0.1:\(server.port)/other").status == 503)
        #expect(server.statistics.refused == 1)
    }

    @Test func twentyClientsEachGetPictures() throws {
        let server = try Self.server()
        defer { server.stop() }
        let folder = TestEnvironment.scratch("serve-twenty")
        let url = "http://127.0.0.1:\(server.port)/video.mjpg"
        let clients = try (0..<20).map { i in
            try Self.background(["-s", "-o", folder.appendingPathComponent("c\(i)").path, "--max-time", "3", url])
        }
        try Self.waitFor { server.statistics.pictureClients == 20 }
        // 30 pictures a second for 2 s, each distinct.
        for i in 0..<60 {
            server.publish(picture: Self.fakeJPEG(i, size: 20_000))
            usleep(33_000)
        }
        for c in clients { c.waitUntilExit() }
        for i in 0..<20 {
            let data = try Data(contentsOf: folder.appendingPathComponent("c\(i)"))
            let parts = String(decoding: data, as: UTF8.self).components(separatedBy: "--framegraphpicture").count - 1
            #expect(parts >= 30, "client \(i) got \(parts) pictures of 60")
        }
        #expect(server.statistics.picturesSent >= 20 * 30)
    }

    @Test func aClientThatNeverReadsDropsPicturesOnlyForItself() throws {
        let server = try Self.server()
        defer { server.stop() }
        // A client that sends its request and never reads a byte of the answer.
        let stalled = try Self.neverReading(port: server.port, path: "/video.mjpg", seconds: 8)
        defer { stalled.terminate() }
        try Self.waitFor { server.statistics.pictureClients == 1 }
        let folder = TestEnvironment.scratch("serve-stalled")
        let reader = try Self.background(["-s", "-o", folder.appendingPathComponent("reader").path, "--max-time", "4", "http://127.0.0.1:\(server.port)/video.mjpg"])
        try Self.waitFor { server.statistics.pictureClients == 2 }
        // 100 pictures of 256 KiB: far more than the socket buffers hold for the client that does not read.
        for i in 0..<100 {
            server.publish(picture: Self.fakeJPEG(i, size: 256 * 1024))
            usleep(20_000)
        }
        reader.waitUntilExit()
        let data = try Data(contentsOf: folder.appendingPathComponent("reader"))
        let parts = String(decoding: data, as: UTF8.self).components(separatedBy: "--framegraphpicture").count - 1
        #expect(parts >= 50, "the reading client got \(parts) of 100")
        #expect(server.statistics.picturesDropped > 0, "the stalled client had pictures dropped")
        #expect(server.statistics.clients >= 1, "the stalled client still holds its place, nothing more")
    }

    @Test func stillPictureAndEvents() throws {
        let server = try Self.server()
        defer { server.stop() }
        server.publish(picture: Self.fakeJPEG(7, size: 1000))
        let file = TestEnvironment.scratch("serve-still").appendingPathComponent("p.jpg")
        // The picture published before the request is not waited for again: the server keeps the last one.
        usleep(300_000)
        let (status, bytes) = try Curl.download("http://127.0.0.1:\(server.port)/picture.jpg", to: file)
        #expect(status == 200)
        #expect(bytes == Data(Self.fakeJPEG(7, size: 1000)))
        let events = try Self.background(["-s", "-N", "-o", file.deletingLastPathComponent().appendingPathComponent("events").path, "--max-time", "2",
                                          "http://127.0.0.1:\(server.port)/events"])
        try Self.waitFor { server.statistics.eventClients == 1 }
        server.publish(event: "{\"frame\":1}")
        server.publish(event: "two\nlines")
        events.waitUntilExit()
        let text = try String(contentsOf: file.deletingLastPathComponent().appendingPathComponent("events"), encoding: .utf8)
        #expect(text == "data: hello\n\ndata: {\"frame\":1}\n\ndata: two\ndata: lines\n\n")
    }

    // MARK: helpers

    /// Bytes that look like a JPEG (SOI … EOI), different for each `i`.
    static func fakeJPEG(_ i: Int, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: size)
        bytes[0] = 0xFF; bytes[1] = 0xD8; bytes[size - 2] = 0xFF; bytes[size - 1] = 0xD9
        return bytes
    }

    static func background(_ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Curl.path ?? "/usr/bin/curl")
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// A client (python3) that connects, sends `GET path`, and then sleeps without reading.
    static func neverReading(port: UInt16, path: String, seconds: Int, token: String? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let auth = token.map { "Authorization: Bearer \($0)\\r\\n" } ?? ""
        p.arguments = ["python3", "-c", """
            import socket, time
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", \(port)))
            s.sendall(b"GET \(path) HTTP/1.1\\r\\nHost: x\\r\\n\(auth)\\r\\n")
            time.sleep(\(seconds))
            """]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        return p
    }

    static func waitFor(_ condition: () -> Bool, seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw TestSkip("timed out waiting for the server's state") }
            usleep(20_000)
        }
    }
}
