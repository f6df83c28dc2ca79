/// Where the server listens: an IPv4 or IPv6 address and a port (0: any free port).
public struct ServeAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String = "127.0.0.1", port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `PORT` (on 127.0.0.1), `IPV4:PORT` or `[IPV6]:PORT` (`[::1]:8080`).
    public init(parsing text: String) throws(ServeError) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .badAddress(text) }
            let hostText = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let port = UInt16(rest.dropFirst()), Socket.isIPv6(hostText) else { throw .badAddress(text) }
            host = hostText
            self.port = port
            return
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let hostText = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard parts.count <= 2, let portText = parts.last, let port = UInt16(portText), Socket.isIPv4(hostText) else {
            throw .badAddress(text)
        }
        host = hostText
        self.port = port
    }

    /// Whether only this machine can connect (127.0.0.0/8, ::1).
    public var isLoopback: Bool { Socket.isLoopback(host) }

    /// Whether the host is an IPv6 address.
    public var isIPv6: Bool { Socket.isIPv6(host) }

    /// The host as a URL writes it (`[::1]` for IPv6).
    public var urlHost: String { isIPv6 ? "[\(host)]" : host }

    public var description: String { "\(urlHost):\(port)" }
}
