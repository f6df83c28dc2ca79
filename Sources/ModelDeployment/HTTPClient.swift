import CModelDeployment
import Foundation

/// HTTP(S) GETs through libcurl: TLS always verified (against the system's CAs or a given PEM
/// file), downloads written to a file with resumption (`Range`) after a cut, retries with backoff,
/// a stall timeout, a size cap, and progress.
public struct HTTPClient: Sendable {
    public var caFile: String?
    /// Connection timeout and stall timeout (no byte for this long ends the attempt), seconds.
    public var timeout: Double
    /// Attempts per request.
    public var attempts: Int
    /// Backoff before the second attempt, doubling after.
    public var backoff: Double

    public init(caFile: String? = nil, timeout: Double = 20, attempts: Int = 3, backoff: Double = 0.5) {
        self.caFile = caFile
        self.timeout = timeout
        self.attempts = attempts
        self.backoff = backoff
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
    public func fetch(_ url: String, maxBytes: Int, bearer: String? = nil) throws -> Data {
        var collected = Data()
        try perform(url: url, bearer: bearer, resumeFrom: 0, maxBytes: Int64(maxBytes), retry: true) { chunk in
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
            if attempt > 0 { Thread.sleep(forTimeInterval: backoff * pow(2, Double(attempt - 1))) }
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
                if case .download(_, let reason) = error, reason.hasPrefix("HTTP 4") || Self.isPermanent(reason) { throw error }  // retrying will not help
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

    /// One request with retries (or one attempt); `body` gets each chunk (false aborts).
    private func perform(url: String, bearer: String?, resumeFrom: Int64, maxBytes: Int64, retry: Bool, file: (fd: Int32, hasher: SHA256Stream)? = nil,
                         body: @escaping (Data) -> Bool, progress: @escaping (Int64, Int64) -> Void) throws {
        var lastError = DeploymentError.download(url: url, reason: "failed")
        for attempt in 0..<(retry ? max(1, attempts) : 1) {
            if attempt > 0 { Thread.sleep(forTimeInterval: backoff * pow(2, Double(attempt - 1))) }
            var delivered = false
            let sink = TransferSink(body: { chunk in delivered = true; return body(chunk) }, progress: progress)
            let box = Unmanaged.passRetained(sink)
            defer { box.release() }
            var result = fg_http_result()
            let rc: Int32 = url.withCString { u in
                withOptionalCString(caFile) { ca in
                    withOptionalCString(bearer) { token in
                        var request = fg_http_request(url: u, ca_file: ca, bearer_token: token, resume_from: resumeFrom,
                                                      connect_timeout_ms: Int(timeout * 1000), low_speed_bytes: 1,
                                                      low_speed_seconds: Int(timeout.rounded(.up)), max_bytes: maxBytes,
                                                      write_fd: file?.fd ?? -1, hash: file?.hasher.state)
                        return fg_http_get(&request, { user, data, count in
                            guard let user, let data else { return 0 }
                            let sink = Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue()
                            return sink.body(Data(bytes: data, count: count)) ? count : 0
                        }, { user, received, total in
                            guard let user else { return 0 }
                            Unmanaged<TransferSink>.fromOpaque(user).takeUnretainedValue().progress(received, total)
                            return 0
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
    init(body: @escaping (Data) -> Bool, progress: @escaping (Int64, Int64) -> Void) {
        self.body = body
        self.progress = progress
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}
