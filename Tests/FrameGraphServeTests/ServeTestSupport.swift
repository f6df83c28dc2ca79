import Foundation
import TestSupport

/// curl against the test server (Debian's curl, installed by the set-up): status, headers, body.
struct Fetched {
    var status: Int
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum Curl {
    static let path = ["/usr/bin/curl", "/usr/local/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// One request; `extra` are curl options (-H …, -X POST).
    static func fetch(_ url: String, _ extra: [String] = [], maxTime: Double = 10) throws -> Fetched {
        guard let path else { throw TestSkip("curl is not installed (scripts/install-deps.sh installs it)") }
        let marker = "\n--status:"
        let r = try runCommand(path, ["-s", "--max-time", String(maxTime), "-w", "\(marker)%{http_code}"] + extra + [url], timeout: maxTime + 5)
        let out = Data(r.stdout.utf8)
        guard let range = r.stdout.range(of: marker, options: .backwards), let status = Int(r.stdout[range.upperBound...]) else {
            return Fetched(status: 0, body: out)
        }
        return Fetched(status: status, body: Data(r.stdout[..<range.lowerBound].utf8))
    }

    /// The body as raw bytes (pictures): written to a file by curl.
    static func download(_ url: String, to file: URL, _ extra: [String] = [], maxTime: Double = 10) throws -> (status: Int, bytes: Data) {
        guard let path else { throw TestSkip("curl is not installed") }
        let r = try runCommand(path, ["-s", "--max-time", String(maxTime), "-o", file.path, "-w", "%{http_code}"] + extra + [url], timeout: maxTime + 5)
        return (Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, (try? Data(contentsOf: file)) ?? Data())
    }
}

/// A test that cannot run here, with the reason.
struct TestSkip: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prometheus text: the value of the sample `name{labels}` (labels as written, e.g. `node="a"`).
func sampleValue(_ text: String, _ name: String, labels: [String] = []) -> Double? {
    for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
        let rest = line.dropFirst(name.count)
        guard rest.first == " " || rest.first == "{" else { continue }
        if !labels.allSatisfy({ rest.contains($0) }) { continue }
        if labels.isEmpty && rest.first == "{" { continue }
        guard let value = rest.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
        return value
    }
    return nil
}
