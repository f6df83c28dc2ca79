/// The secret every request must carry when the server listens beyond loopback: in an
/// `Authorization: Bearer TOKEN` header, a `?token=TOKEN` query (which also sets a cookie, so a
/// browser's page keeps access), or that cookie. Compared in constant time; never printed.
public struct AccessToken: Sendable, CustomStringConvertible {
    private let bytes: [UInt8]
    /// The cookie a `?token=` request sets.
    static let cookieName = "framegraph_token"

    /// A token of at least 16 characters, printable ASCII without spaces (so it fits a header, a
    /// query and a cookie unchanged).
    public init(_ text: String) throws(ServeError) {
        let trimmed = text.trimmingSpaces().filter { $0 != "\n" && $0 != "\r" }
        guard trimmed.utf8.count >= 16 else { throw .tokenTooShort }
        guard trimmed.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3B && $0 != 0x2C && $0 != 0x22 && $0 != 0x5C }) else {
            throw .tokenCharacters
        }
        bytes = Array(trimmed.utf8)
    }

    /// Never the token itself.
    public var description: String { "<token>" }

    /// Whether `request` carries the token (header, query or cookie).
    public func admits(_ request: HTTPRequest) -> Bool {
        if let auth = request.headers["authorization"] {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer", matches(parts[1].trimmingSpaces()) { return true }
        }
        if let query = request.query["token"], matches(query) { return true }
        if let cookies = request.headers["cookie"] {
            for cookie in cookies.split(separator: ";") {
                let kv = cookie.split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0].trimmingSpaces() == Self.cookieName, matches(String(kv[1]).trimmingSpaces()) { return true }
            }
        }
        return false
    }

    /// The Set-Cookie header value that lets a browser's later requests through.
    var cookieHeader: String {
        "\(Self.cookieName)=\(String(decoding: bytes, as: UTF8.self)); Path=/; HttpOnly; SameSite=Strict"
    }

    /// Constant-time comparison (the time does not tell how much of a guess was right).
    func matches<S: StringProtocol>(_ candidate: S) -> Bool {
        let other = Array(candidate.utf8)
        var difference = UInt8(truncatingIfNeeded: other.count ^ bytes.count)
        for i in 0..<bytes.count { difference |= bytes[i] ^ (i < other.count ? other[i] : 0) }
        return difference == 0
    }
}
