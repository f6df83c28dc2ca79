import FrameGraphServe
import Testing

/// The request-head parser: what it reads, what it waits for, and the bounds it keeps.
@Suite struct HTTPRequestParserTests {
    let parser = HTTPRequestParser()

    func parse(_ text: String) throws(HTTPRequestError) -> HTTPRequest? { try parser.parse(Array(text.utf8)) }

    @Test func readsMethodPathQueryAndHeaders() throws {
        let r = try #require(try parse("GET /picture.jpg?token=a%2Bb+c&x HTTP/1.1\r\nHost: h\r\nAuthorization:  Bearer t \r\nHOST: second\r\n\r\n"))
        #expect(r.method == "GET")
        #expect(r.path == "/picture.jpg")
        #expect(r.query == ["token": "a+b c", "x": ""])
        #expect(r.headers["host"] == "h")  // the first of a repeated field
        #expect(r.headers["authorization"] == "Bearer t")
    }

    @Test func waitsForTheEndOfTheHead() throws {
        #expect(try parse("GET /metrics HTTP/1.1\r\nHost: h\r\n") == nil)
        #expect(try parse("") == nil)
        #expect(try parse("GET /metrics HTTP/1.0\n\n")?.path == "/metrics")  // bare LF accepted
    }

    @Test func refusesWhatIsNotHTTP() {
        #expect(throws: HTTPRequestError.self) { try parse("GET metrics HTTP/1.1\r\n\r\n") }
        #expect(throws: HTTPRequestError.self) { try parse("GET /a b HTTP/1.1\r\n\r\n") }
        #expect(throws: HTTPRequestError.unsupportedVersion("HTTP/2.0")) { try parse("GET / HTTP/2.0\r\n\r\n") }
        #expect(throws: HTTPRequestError.self) { try parse("GET / HTTP/1.1\r\nno colon\r\n\r\n") }
        #expect(throws: HTTPRequestError.self) { try parse("G(T / HTTP/1.1\r\n\r\n") }
        #expect(throws: HTTPRequestError.bodyNotAccepted) { try parse("POST /stop HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello") }
        #expect(throws: HTTPRequestError.bodyNotAccepted) { try parse("POST /stop HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") }
    }

    @Test func boundsTheHeadAndTheFields() {
        // A head that never ends is refused once it passes the limit, not buffered.
        let endless = "GET / HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 2000)
        #expect(throws: HTTPRequestError.headTooLarge(limit: 8192)) { try parse(endless) }
        let many = "GET / HTTP/1.1\r\n" + (0..<65).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        #expect(throws: HTTPRequestError.tooManyHeaders(limit: 64)) { try parse(many) }
        #expect(HTTPRequestError.headTooLarge(limit: 8192).status == 431)
    }
}
