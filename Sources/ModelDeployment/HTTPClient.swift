import CModelDeployment
import Foundation

/// HTTP(S) GETs through libcurl: TLS always verified (against the system's CAs or a given PEM
/// file), downloads written to a file with resumption (`Range`) after a cut, retries with backoff
/// (each starting clean), a size cap, and progress — and every wait bounded: a connection timeout,
/// a minimum rate (a server that trickles bytes is cut off), a deadline per request and an overall
/// one (a pull, a pipeline's first use), and a cancellation check (Ctrl-C) at least once a second.
public struct HTTPClient: Sendable {
    public var caFile: String?
    /// Connection timeout, and the window over which the minimum rate is measured, seconds.
    public var timeout: Double
    /// Attempts per request.
    public var attempts: Int
    /// Backoff before the second attempt, doubling after.
    public var backoff: Double
    /// Slower than this many bytes a second over `timeout` seconds ends the attempt.
    public var minimumBytesPerSecond: Int
    /// Most seconds one request (one attempt) may take, from connecting to its last byte.
    public var requestDeadline: Double
    /// When every request of this client must be over (a pull's or a first use's deadline); nil: none.
    public var deadline: Date?
    /// Asked at least once a second during a transfer and between attempts: true ends it (Ctrl-C).
    public var isCancelled: @Sendable () -> Bool

    public init(caFile: String? = nil, timeout: Double = 20, attempts: Int = 3, backoff: Double = 0.5, minimumBytesPerSecond: Int = 1024,
                requestDeadline: Double = 300, deadline: Date? = nil, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.caFile = caFile
        self.timeout = timeout
        self.attempts = attempts
        self.backoff = backoff
        self.minimumBytesPerSecond = minimumBytesPerSecond
        self.requestDeadline = requestDeadline
        self.deadline = deadline
        self.isCancelled = isCancelled
    }

    /// Milliseconds the next attempt may take (the request deadline, within the overall one); throws
    /// when the overall deadline has passed or the client was cancelled.
    private func attemptBudget(_ url: String) throws -> Int {
        if isCancelled() { throw DeploymentError.download(url: url, reason: "stopped (interrupted)") }
        // libcurl reads the CA file itself: a FIFO or a folder there would block it or fail vaguely.
        if let caFile, JSONFile.size(of: caFile) == nil {
            throw DeploymentError.invalidFile(path: caFile, reason: "caFile is not a regular file")
        }
        var seconds = requestDeadline
        if let deadline {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw DeploymentError.download(url: url, reason: "the deadline for downloads passed") }
            seconds = min(seconds, left)
        }
        return max(1, Int(seconds * 1000))
    }

    /// Sleeps before a retry, in short steps so that a cancellation or the deadline ends it.
    private func pause(_ seconds: Double, url: String) throws {
        let until = Date().addingTimeInterval(seconds)
        while Date() < until {
            _ = try attemptBudget(url)
            Thread.sleep(forTimeInterval: min(0.1, max(0, until.timeIntervalSinceNow)))
        }
    }

    /// Progress of one download: bytes so far (resumed bytes included), the total when known, rate
    /// and time left.
    public struct Progress: Sendable, Equatable {
        public var bytes: Int64
        public var total: Int64?
        public var bytesPerSecond: Double
        public var secondsLeft: Double?
    }

    /// A small document (a manifest, a signature, a key) into memory, at most `maxBytes`.
    /// Each attempt starts clean: bytes of a cut attempt are never glued to the next one's.
    public func fetch(_ url: String, maxBytes: Int, bearer: String? = nil) throws -> Data {
        var collected = Data()
        try perform(url: url, bearer: bearer, resumeFrom: 0, maxBytes: Int64(maxBytes), retry: true, restart: { collected.removeAll() }) { chunk in
            collected.append(chunk)
            return true
        } progress: { _, _ in }
        return collected
    }

    /// Downloads `url` into `partialPath` (appending to what an earlier cut attempt left there, with
    /// a Range request) until it holds `expectedSize` bytes. Never more than `expectedSize`. Returns
    /// the SHA-256 of the file, hashed as the bytes arrive (bytes resumed from are read back once).
    @discardableResult
    public func download(_ url: String, to partialPath: String, expectedSize: Int64, progress: @escaping (Progress) -> Void) throws -> String {
        var lastFailure: DeploymentError?
        for attempt in 0..<max(1, attempts) {
            if attempt > 0 { try pause(backoff * pow(2, Double(attempt - 1)), url: url) }
            var have = Int64(JSONFile.size(of: partialPath) ?? 0)
            if have > expectedSize { unlink(partialPath); have = 0 }
            let hasher = SHA256Stream()
            if have > 0 {
                guard hasher.update(fileAt: partialPath) == have else {
                    unlink(partialPath)
                    continue
                }
            }
            if have == expectedSize { return hasher.finish() ?? "" }
            let fd = open(partialPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw DeploymentError.download(url: url, reason: "cannot write \(partialPath): \(String(cString: strerror(errno)))") }
            let resumedFrom = have, attemptStart = Date()
            do {
                // The bytes go to the file and the hash in C (no copy per chunk on the way).
                try perform(url: url, bearer: nil, resumeFrom: have, maxBytes: expectedSize - have, retry: false, file: (fd, hasher)) { _ in
                    false
                } progress: { received, _ in
                    // The rate of this attempt's own bytes (resumed bytes came earlier).
                    let seconds = max(1e-3, Date().timeIntervalSince(attemptStart))
                    let rate = Double(received) / seconds
                    let bytes = resumedFrom + received
                    progress(Progress(bytes: bytes, total: expectedSize, bytesPerSecond: rate,
                                      secondsLeft: rate > 0 ? Double(expectedSize - bytes) / rate : nil))
                }
                close(fd)
                let written = Int64(JSONFile.size(of: partialPath) ?? 0)
                if written == expectedSize { return hasher.finish() ?? "" }
                lastFailure = .download(url: url, reason: "the server sent \(written) of \(expectedSize) bytes")
            } catch let error as DeploymentError {
                close(fd)
                if case .download(_, let reason) = error, reason.hasPrefix("cannot write") {
                    throw DeploymentError.download(url: url, reason: "\(reason): \(partialPath) (disk full?)")
                }
                lastFailure = error
                if case .download(_, let reason) = error, reason.hasPrefix("HTTP 4") || Self.isPermanent(reason) || Self.isFinal(reason) { throw error }  // retrying will not help
                if case .download(_, let reason) = error, reason.contains("byte ranges") || reason.contains("range") {
                    unlink(partialPath)  // the server does not resume: start again from the first byte
                }
            }
        }
        throw lastFailure ?? .download(url: url, reason: "failed")
    }

    /// libcurl results no retry changes: the certificate not trusted (60), the peer's certificate or
    /// TLS handshake refused (51, 35), more bytes than expected (23, from the size cap).
    static let permanentCodes: Set<Int32> = [60, 51, 35, 23]

    static func isPermanent(_ reason: String) -> Bool {
        reason.contains("SSL certificate problem") || reason.contains("more than the") || reason.contains("SSL: no alternative certificate subject name")
    }

    /// A stop or a passed deadline: no attempt after it.
    static func isFinal(_ reason: String) -> Bool {
        reason.hasPrefix("stopped") || reason.hasPrefix("the deadline")
    }

    /// One request with retries (or one attempt); `body` gets each chunk (false aborts).
    private func perform(url: String, bearer: String?, resumeFrom: Int64, maxBytes: Int64, retry: Bool, file: (fd: Int32, hasher: SHA256Stream)? = nil,
                         restart: () -> Void = {}, body: @escaping (Data) -> Bool, progress: @escaping (Int64, Int64) -> Void) throws {
        var lastError = DeploymentError.download(url: url, reason: "failed")
        for attempt in 0..<(retry ? max(1, attempts) : 1) {
            if attempt > 0 { try pause(backoff * pow(2, Double(attempt - 1)), url: url) }
            restart()
            let budget = try attemptBudget(url)
            let cancelled = isCancelled
            var delivered = false
            let sink = TransferSink(body: { chunk in delivered = true; return body(chunk) }, progress: progress, cancelled: cancelled)
            let box = Unmanaged.passRetained(sink)
            defer { box.release() }
            var result = fg_http_result()
            let rc: Int32 = url.withCString { u in
                withOptionalCString(caFile) { ca in
                    withOptionalCString(bearer) { token in
                        var request = fg_http_request(url: u, ca_file: ca, bearer_token: token, resume_from: resumeFrom,
                                                      connect_timeout_ms: min(Int(timeout * 1000), budget), low_speed_bytes: max(1, minimumBytesPerSecond),
                                                      low_speed_seconds: Int(timeout.rounded(.up)), total_timeout_ms: budget, max_bytes: maxBytes,
                                                      write_fd: file?.fd ?? -1, hash: file?.hasher.state)
                        return fg_http_get(&request, { user, data, count in
                            guard let user, let data else { return 0 }
                            let sink = Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue()
                            return sink.body(Data(bytes: data, count: count)) ? count : 0
                        }, { user, received, total in
                            guard let user else { return 0 }
                            let sink = Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue()
                            sink.progress(received, total)
                            return sink.cancelled() ? 1 : 0  // libcurl calls this at least once a second
                        }, box.toOpaque(), &result)
                    }
                }
            }
            if file != nil && result.received > 0 { delivered = true }
            let message = withUnsafeBytes(of: &result.message) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if rc == 0 {
                if result.status == 200 || (result.status == 206 && resumeFrom > 0) { return }
                lastError = .download(url: url, reason: "HTTP \(result.status)" + (result.status == 401 || result.status == 403 ? " (not authorised)" : ""))
                if (400..<500).contains(result.status) { throw lastError }
            } else if result.curl_code == 42 && cancelled() {  // aborted by the progress callback
                throw DeploymentError.download(url: url, reason: "stopped (interrupted)")
            } else if result.curl_code == 28 {
                lastError = .download(url: url, reason: "timed out (the request took longer than its deadline, or the server sent less than "
                                      + "\(minimumBytesPerSecond) bytes a second for \(Int(timeout.rounded(.up))) s)")
                if let deadline, deadline.timeIntervalSinceNow <= 0 { throw DeploymentError.download(url: url, reason: "the deadline for downloads passed (\(lastError))") }
            } else {
                lastError = .download(url: url, reason: message.isEmpty ? "libcurl error \(result.curl_code)" : message)
                if Self.permanentCodes.contains(result.curl_code) { throw lastError }  // TLS trust, size cap: retrying will not help
                if delivered && !retry { throw lastError }
            }
        }
        throw lastError
    }
}

private final class TransferSink {
    let body: (Data) -> Bool
    let progress: (Int64, Int64) -> Void
    let cancelled: () -> Bool
    init(body: @escaping (Data) -> Bool, progress: @escaping (Int64, Int64) -> Void, cancelled: @escaping () -> Bool) {
        self.body = body
        self.progress = progress
        self.cancelled = cancelled
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}
