/// A complete HTTP response: status, content type, body, extra headers.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)]

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A plain-text response (a line ending in a newline).
    public static func text(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, body: Array((text.hasSuffix("\n") ? text : text + "\n").utf8), headers: headers)
    }

    /// The bytes on the wire: status line, headers (Content-Length, no caching, Connection: close), body.
    public func serialized() -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
        head += Self.commonHeaders
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// Headers every response carries: nothing cached, no sniffing, no framing by other sites.
    static let commonHeaders = "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nConnection: close\r\n"

    /// The reason phrase of a status code.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 431: return "Request Header Fields Too Large"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status"
        }
    }
}
