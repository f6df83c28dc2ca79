/// Where the server listens: an IPv4 address and a port (0: any free port).
public struct ServeAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String = "127.0.0.1", port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `PORT` (on 127.0.0.1) or `ADDRESS:PORT`.
    public init(parsing text: String) throws(ServeError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let hostText = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard parts.count <= 2, let portText = parts.last, let port = UInt16(portText), Socket.isIPv4(hostText) else {
            throw .badAddress(text)
        }
        host = hostText
        self.port = port
    }

    /// Whether only this machine can connect (127.0.0.0/8).
    public var isLoopback: Bool { Socket.isLoopback(host) }

    public var description: String { "\(host):\(port)" }
}
