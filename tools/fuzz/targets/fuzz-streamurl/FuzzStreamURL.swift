import FrameGraph
import FuzzSupport

/// Fuzz target: a stream address (and a credentials line) read by ``StreamURL``, and redaction of
/// any text. Checks, beyond not crashing: a password given in the address or the credentials line
/// never survives redaction.
func fuzzOne(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let address = String(parts[0])
    let credentials = parts.count > 1 ? String(parts[1]) : nil
    _ = StreamURL.redact(text)
    guard let url = try? StreamURL(address, credentials: credentials) else { return }
    let secret = "fuzz-secret-0123"
    if url.full.contains(":\(secret)@"), url.redacted.contains(secret) { fatalError("a password survived redaction: \(url.redacted)") }
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
