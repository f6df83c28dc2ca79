#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a socket call failed: the call and the system's reason, in one line.
public struct SocketError: Error, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
    init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }
}

/// The thin wrapper over POSIX sockets the server uses: every C pointer of the socket API stays in
/// this file. Descriptors are non-blocking and close-on-exec; writes never raise SIGPIPE.
enum Socket {
    /// What a non-blocking read or write did.
    enum Transfer: Equatable {
        /// Moved this many bytes (more than 0).
        case bytes(Int)
        /// Nothing to move now (EAGAIN).
        case wouldBlock
        /// The peer closed, or the connection failed.
        case closed
    }

    /// A listening TCP socket on `address`:`port`, IPv4 or IPv6 (port 0: one the system picks; an
    /// IPv6 socket takes IPv6 only). Returns the descriptor and the port it is bound to.
    static func listen(address: String, port: UInt16, backlog: Int32 = 64) throws(SocketError) -> (fd: Int32, port: UInt16) {
        let six = isIPv6(address)
        let shown = six ? "[\(address)]" : address
        var storage = sockaddr_storage()
        let length = socklen_t(six ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let parsed = withUnsafeMutablePointer(to: &storage) { p -> Int32 in
            if six {
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    a.pointee.sin6_family = sa_family_t(AF_INET6)
                    a.pointee.sin6_port = port.bigEndian
                    return inet_pton(AF_INET6, address, &a.pointee.sin6_addr)
                }
            }
            return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                a.pointee.sin_family = sa_family_t(AF_INET)
                a.pointee.sin_port = port.bigEndian
                return inet_pton(AF_INET, address, &a.pointee.sin_addr)
            }
        }
        guard parsed == 1 else { throw SocketError("read address \(address.prefix(64))", code: EINVAL) }
        let fd = socket(six ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("open a socket") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if six { _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else {
            let e = errno
            close(fd)
            throw SocketError("bind \(shown):\(port)", code: e)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let e = errno
            close(fd)
            throw SocketError("listen on \(shown):\(port)", code: e)
        }
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) } }
        // The port sits at the same place in both address forms.
        let boundPort = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port } }
        return (fd, UInt16(bigEndian: boundPort))
    }

    /// A pending connection (non-blocking, close-on-exec), or nil when none waits.
    static func accept(_ listener: Int32) -> Int32? {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        configure(fd)
        return fd
    }

    /// Non-blocking and close-on-exec.
    private static func configure(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    /// Caps the kernel's send buffer of `fd` (Linux doubles the value for its bookkeeping): what a
    /// client that stops reading can hold besides the server's own buffer.
    static func limitSendBuffer(_ fd: Int32, bytes: Int32) {
        var value = bytes
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Reads up to `limit` bytes onto the end of `buffer`.
    static func read(_ fd: Int32, into buffer: inout [UInt8], limit: Int) -> Transfer {
        guard limit > 0 else { return .wouldBlock }
        var chunk = [UInt8](repeating: 0, count: limit)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return .bytes(n)
        }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .wouldBlock }
        return .closed
    }

    /// Writes what it can of `bytes[from...]`.
    static func write(_ fd: Int32, _ bytes: [UInt8], from: Int) -> Transfer {
        guard from < bytes.count else { return .wouldBlock }
        let n = bytes.withUnsafeBytes { raw in
            send(fd, raw.baseAddress.map { $0 + from }, bytes.count - from, Int32(MSG_NOSIGNAL))
        }
        if n > 0 { return .bytes(n) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .wouldBlock }
        return .closed
    }

    /// Waits up to `timeoutMs` for the descriptors' events; returns each one's returned events.
    static func poll(_ entries: [(fd: Int32, events: Int16)], timeoutMs: Int32) -> [Int16] {
        var fds = entries.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
        let n = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMs) }
        guard n > 0 else { return [Int16](repeating: 0, count: entries.count) }
        return fds.map(\.revents)
    }

    static let readable = Int16(POLLIN)
    static let writable = Int16(POLLOUT)
    static let failed = Int16(POLLERR | POLLHUP | POLLNVAL)

    /// A pipe whose read end wakes `poll` (both ends non-blocking).
    static func wakePipe() throws(SocketError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SocketError("open a pipe") }
        configure(ends[0])
        configure(ends[1])
        return (ends[0], ends[1])
    }

    /// Writes one byte to a wake pipe (a full pipe already wakes the reader).
    static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = Glibc.write(fd, &byte, 1)
    }

    /// Empties a wake pipe.
    static func drain(_ fd: Int32) {
        var sink = [UInt8](repeating: 0, count: 256)
        while sink.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, 256) }) > 0 {}
    }

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Whether `address` is an IPv4 address in 127.0.0.0/8 or IPv6's ::1.
    static func isLoopback(_ address: String) -> Bool {
        var addr = in_addr()
        if inet_pton(AF_INET, address, &addr) == 1 { return UInt32(bigEndian: addr.s_addr) >> 24 == 127 }
        var six = in6_addr()
        guard inet_pton(AF_INET6, address, &six) == 1 else { return false }
        let bytes = withUnsafeBytes(of: six) { Array($0) }
        return bytes.count == 16 && bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
    }

    /// Whether `address` is an IPv6 address (`::1`, `::`, `fe80::…`; no zone, no brackets).
    static func isIPv6(_ address: String) -> Bool {
        var addr = in6_addr()
        return inet_pton(AF_INET6, address, &addr) == 1
    }

    /// Whether `address` is an IPv4 address in dotted form.
    static func isIPv4(_ address: String) -> Bool {
        var addr = in_addr()
        return inet_pton(AF_INET, address, &addr) == 1
    }
}
