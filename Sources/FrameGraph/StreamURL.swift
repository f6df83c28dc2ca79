/// A network stream's address (`rtsp://cam1.local/stream`), checked and with its credentials kept
/// apart so that nothing prints them.
///
/// ```swift
/// let url = try StreamURL("rtsp://admin:secret@10.0.0.5:554/live")
/// url.redacted          // "rtsp://***@10.0.0.5:554/live"
/// url.scheme            // .rtsp
/// StreamURL.redact("open rtsp://admin:secret@cam/x failed")   // "open rtsp://***@cam/x failed"
/// ```
/// Only the schemes of ``Scheme`` are accepted; every other `scheme://` (and FFmpeg's `tcp:`,
/// `concat:` … prefixes) is refused. Redaction hides the user-info part of every URL in a text and the
/// values of query parameters that carry secrets (`passphrase`, `password`, `token`, …).
public struct StreamURL: Sendable, Equatable, CustomStringConvertible {
    /// The protocols a network source reads.
    public enum Scheme: String, Sendable, CaseIterable {
        case rtsp, rtsps, http, https, srt, udp, rtp, rtmp, rtmps
        /// FFmpeg protocols the URL may use underneath (its `protocol_whitelist`).
        public var protocols: String {
            switch self {
            case .rtsp: return "rtsp,rtp,srtp,udp,tcp"
            case .rtsps: return "rtsps,rtsp,rtp,srtp,udp,tcp,tls"
            case .http: return "http,tcp"  // HLS playlists: their segments over http too
            case .https: return "https,http,tcp,tls"
            case .srt: return "srt"
            case .udp: return "udp"
            case .rtp: return "rtp,udp"
            case .rtmp: return "rtmp,tcp"
            case .rtmps: return "rtmps,rtmp,tcp,tls"
            }
        }
    }

    /// A URL that is not a stream FrameGraph reads.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        /// The address, redacted.
        public let url: String
        public let reason: String
        public var description: String { "\(url): \(reason)" }
    }

    /// Query parameters whose values are secrets (SRT's passphrase, tokens in signed URLs).
    public static let secretParameters: Set<String> = ["passphrase", "password", "pass", "pwd", "token", "key", "secret",
                                                        "auth", "signature", "sig", "access_token", "streamid"]
    /// Longest address accepted.
    public static let maxLength = 4096

    public let scheme: Scheme
    /// The address with credentials (as FFmpeg needs it); never print it, print ``redacted``.
    public let full: String
    /// The address with the user-info part and secret query values replaced by `***`.
    public let redacted: String
    /// Whether the address carries credentials (user-info or a secret parameter).
    public let hasCredentials: Bool

    /// Reads `text` as a stream address; `credentials` (`user:password`, from a file) is put into
    /// it when it has none of its own.
    public init(_ text: String, credentials: String? = nil) throws {
        let trimmed = text.trimmingWhitespace
        let shown = Self.redact(String(trimmed.prefix(200)))
        guard trimmed.utf8.count <= Self.maxLength else { throw Invalid(url: shown, reason: "longer than \(Self.maxLength) bytes") }
        guard !trimmed.utf8.contains(where: { $0 < 0x21 || $0 == 0x7f }) else {
            throw Invalid(url: shown, reason: "contains spaces or control characters")
        }
        guard let (name, rest) = Self.split(trimmed), let scheme = Scheme(rawValue: name.lowercased()) else {
            let choices = Scheme.allCases.map { $0.rawValue + "://" }.joined(separator: ", ")
            throw Invalid(url: shown, reason: "not a stream address FrameGraph reads (one of \(choices))")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var host = Substring(authority)
        var userInfo: Substring?
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            host = authority[authority.index(after: at)...]
        }
        guard !host.isEmpty || scheme == .udp || scheme == .rtp || scheme == .srt else { throw Invalid(url: shown, reason: "names no host") }
        var full = trimmed
        if userInfo == nil, let credentials = credentials?.trimmingWhitespace, !credentials.isEmpty {
            guard credentials.contains(":") else { throw Invalid(url: shown, reason: "the credentials file must hold one line user:password") }
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let user = Self.percentEncoded(String(parts[0])), password = Self.percentEncoded(parts.count > 1 ? String(parts[1]) : "")
            full = "\(name)://\(user):\(password)@\(rest)"
            userInfo = Substring(user)
        }
        self.scheme = scheme
        self.full = full
        self.redacted = Self.redact(full)
        self.hasCredentials = userInfo != nil || self.redacted != full
    }

    public var description: String { redacted }

    /// Whether `text` looks like an address with a scheme (`x://`), network or not.
    public static func looksLikeURL(_ text: String) -> Bool {
        guard let (name, _) = split(text) else { return false }
        return !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// `text` with every URL's user-info (`user:pass@`) and every secret query value replaced by `***`.
    /// Safe on any text (log lines, error messages); linear in its length.
    public static func redact(_ text: String) -> String {
        guard text.contains("://") || text.contains("=") else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var rest = Substring(text)
        while let range = rest.range(of: "://") {
            out += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" || $0 == " " || $0 == "\"" || $0 == "'" || $0 == "\n" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                out += "***@"
                rest = rest[rest.index(after: at)...]
            }
        }
        out += rest
        return redactParameters(out)
    }

    /// Replaces the values of ``secretParameters`` (`?passphrase=x&…`, `;passphrase=x`) by `***`.
    private static func redactParameters(_ text: String) -> String {
        guard text.contains("=") else { return text }
        var out = ""
        var word = ""
        var hiding = false
        for c in text {
            if hiding {
                if c == "&" || c == ";" || c == " " || c == "\"" || c == "'" || c == "\n" || c == "#" {
                    hiding = false
                    out.append(c)
                }
                continue
            }
            if c == "=" {
                out.append(c)
                if secretParameters.contains(word.lowercased()) {
                    out += "***"
                    hiding = true
                }
                word = ""
                continue
            }
            out.append(c)
            if c.isLetter || c.isNumber || c == "_" { word.append(c) } else { word = "" }
        }
        return out
    }

    /// `scheme` and what follows `://`, or nil when `text` has no `://`.
    private static func split(_ text: String) -> (String, Substring)? {
        guard let range = text.range(of: "://") else { return nil }
        return (String(text[..<range.lowerBound]), text[range.upperBound...])
    }

    private static func percentEncoded(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "-._~".contains(c) {
                out.append(c)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }

    fileprivate func leftPadded(to n: Int) -> String {
        count >= n ? self : String(repeating: "0", count: n - count) + self
    }
}
