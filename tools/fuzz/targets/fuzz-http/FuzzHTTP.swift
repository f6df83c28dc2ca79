import Foundation
import FrameGraphServe
import FuzzSupport

/// Fuzz target: bytes a client sends → the server's request-head parser (bounded: 8 KiB, 64 fields),
/// fed whole and as it would arrive in two reads (the first byte picks the split), then the access-token
/// check on what it parsed. Invariants: the two feedings agree; nothing beyond the head limit is kept.
let parser = HTTPRequestParser()
let token = try! AccessToken("fuzz-token-0123456789")

func fuzzOne(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let input = Array(bytes.dropFirst())
    let whole = Result { () throws(HTTPRequestError) -> HTTPRequest? in try parser.parse(input) }
    // As two reads: the prefix first (nil or an error is fine), then everything.
    let split = min(input.count, Int(first) * max(1, input.count / 255))
    _ = try? parser.parse(Array(input[0..<split]))
    let again = Result { () throws(HTTPRequestError) -> HTTPRequest? in try parser.parse(input) }
    switch (whole, again) {
    case (.success(let a), .success(let b)): precondition(a == b, "the parser is not deterministic")
    case (.failure(let a), .failure(let b)): precondition(a == b, "the parser is not deterministic")
    default: preconditionFailure("the parser is not deterministic")
    }
    if case .success(let request?) = whole {
        precondition(request.path.hasPrefix("/"), "a target that is not a path was accepted")
        precondition(request.headers.count <= parser.maxHeaders, "more headers than the limit")
        _ = token.admits(request)
    }
    if input.count > parser.maxHeadBytes + 4, case .success(nil) = whole {
        preconditionFailure("a head over the limit is still waited for")
    }
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
