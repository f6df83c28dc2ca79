/// One HTTP/1.1 request as the server reads it: the method, the path and query of its target, and
/// its headers (names lower-cased). A body is never read: every endpoint is a GET, or a POST without one.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The target's path, percent-decoding left to the router (`/metrics`).
    public var path: String
    /// The target's query parameters, percent-decoded (`token=…`); a name without `=` maps to "".
    public var query: [String: String]
    /// Header fields, names lower-cased; a repeated field keeps its first value.
    public var headers: [String: String]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }
}

/// Why a request could not be read, with the status the server answers it with.
public enum HTTPRequestError: Error, Equatable, CustomStringConvertible {
    /// The request line or a header is not HTTP/1.x syntax.
    case malformed(String)
    /// The head (request line and headers) is longer than the parser's limit.
    case headTooLarge(limit: Int)
    /// More header fields than the parser's limit.
    case tooManyHeaders(limit: Int)
    /// A request with a body (Content-Length above 0 or chunked): no endpoint takes one.
    case bodyNotAccepted
    /// An HTTP version other than 1.0 or 1.1.
    case unsupportedVersion(String)

    /// The status code the server answers with.
    public var status: Int {
        switch self {
        case .malformed: return 400
        case .headTooLarge, .tooManyHeaders: return 431
        case .bodyNotAccepted: return 413
        case .unsupportedVersion: return 505
        }
    }

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed request: \(why)"
        case .headTooLarge(let limit): return "request head longer than \(limit) bytes"
        case .tooManyHeaders(let limit): return "more than \(limit) header fields"
        case .bodyNotAccepted: return "a request body is not accepted"
        case .unsupportedVersion(let v): return "HTTP version \(v.prefix(16)) is not supported (1.0 and 1.1 are)"
        }
    }
}

/// Reads request heads from bytes as they arrive, within fixed bounds: the head at most
/// ``maxHeadBytes`` (8 KiB by default), at most ``maxHeaders`` fields. It never holds more than the
/// head limit, so a client that sends without end is cut off with 431, not buffered.
///
/// ```swift
/// var parser = HTTPRequestParser()
/// if let request = try parser.parse(bytes) { … }   // nil: the head is not complete yet
/// ```
public struct HTTPRequestParser: Sendable {
    /// Most bytes of a request head (request line, headers, the blank line).
    public let maxHeadBytes: Int
    /// Most header fields.
    public let maxHeaders: Int

    public init(maxHeadBytes: Int = 8192, maxHeaders: Int = 64) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaders = maxHeaders
    }

    /// The request whose head `bytes` holds in full; nil while the blank line that ends the head has
    /// not arrived (and `bytes` is still within the limit). Throws when the head is invalid or too large.
    public func parse(_ bytes: [UInt8]) throws(HTTPRequestError) -> HTTPRequest? {
        guard let end = Self.headEnd(bytes, limit: maxHeadBytes) else {
            if bytes.count > maxHeadBytes { throw .headTooLarge(limit: maxHeadBytes) }
            return nil
        }
        guard end <= maxHeadBytes else { throw .headTooLarge(limit: maxHeadBytes) }
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var i = 0
        while i < end {
            if bytes[i] == 0x0A {
                var line = bytes[start..<i]
                if line.last == 0x0D { line = line.dropLast() }
                lines.append(line)
                start = i + 1
            }
            i += 1
        }
        // Blank lines before the request line are ignored (RFC 9112 §2.2).
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first else { throw .malformed("no request line") }
        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw .malformed("the request line is not METHOD TARGET VERSION") }
        guard parts[0].allSatisfy(Self.isTokenByte) else { throw .malformed("the method is not a token") }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            if version.hasPrefix("HTTP/") { throw .unsupportedVersion(version) }
            throw .malformed("no HTTP version")
        }
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .malformed("the target holds spaces or control bytes") }
        let target = String(decoding: parts[1], as: UTF8.self)
        guard target.hasPrefix("/") else { throw .malformed("the target is not a path") }
        var headers: [String: String] = [:]
        var count = 0
        for line in lines.dropFirst() where !line.isEmpty {
            count += 1
            guard count <= maxHeaders else { throw .tooManyHeaders(limit: maxHeaders) }
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex else { throw .malformed("a header line without a name") }
            let name = line[line.startIndex..<colon]
            guard name.allSatisfy(Self.isTokenByte) else { throw .malformed("a header name is not a token") }
            let value = line[line.index(after: colon)...]
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .malformed("a header value holds control bytes") }
            let key = String(decoding: name, as: UTF8.self).lowercased()
            if headers[key] == nil {
                headers[key] = String(decoding: value, as: UTF8.self).trimmingSpaces()
            }
        }
        if let length = headers["content-length"], length != "0" { throw .bodyNotAccepted }
        if headers["transfer-encoding"] != nil { throw .bodyNotAccepted }
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        let path = String(target[..<pathEnd])
        var query: [String: String] = [:]
        if pathEnd < target.endIndex {
            for pair in target[target.index(after: pathEnd)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = Self.percentDecoded(kv[0])
                if query[key] == nil { query[key] = kv.count > 1 ? Self.percentDecoded(kv[1]) : "" }
            }
        }
        return HTTPRequest(method: String(decoding: parts[0], as: UTF8.self), path: path, query: query, headers: headers)
    }

    /// The number of bytes of the head (through the blank line), when `bytes` holds all of it
    /// within `limit` (+ its terminator).
    static func headEnd(_ bytes: [UInt8], limit: Int) -> Int? {
        let n = min(bytes.count, limit + 4)
        var i = 0
        while i < n {
            if bytes[i] == 0x0A {
                // "\n\n" or "\n\r\n" ends the head.
                if i + 1 < n, bytes[i + 1] == 0x0A { return i + 2 }
                if i + 2 < n, bytes[i + 1] == 0x0D, bytes[i + 2] == 0x0A { return i + 3 }
            }
            i += 1
        }
        return nil
    }

    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }

    /// `%XX` and `+` decoded; an invalid escape is kept as it is; bytes that are not UTF-8 repaired.
    static func percentDecoded<S: StringProtocol>(_ text: S) -> String {
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        var i = 0
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: return b - 0x30
            case 0x41...0x46: return b - 0x41 + 10
            case 0x61...0x66: return b - 0x61 + 10
            default: return nil
            }
        }
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let h = hex(bytes[i + 1]), let l = hex(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i] == 0x2B ? 0x20 : bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
