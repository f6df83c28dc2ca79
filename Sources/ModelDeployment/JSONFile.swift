import Foundation
import NeuralGraph
import SafeFiles

/// Reading and writing the small JSON files of deployment (keys, manifests, machine configs, the
/// cache's state): bounded reads, decoding errors that name the field, and atomic writes.
enum JSONFile {
    /// Reads a regular file of at most `maxBytes` (through ``ModelFile/read(_:maxBytes:what:)``: checked
    /// before it is read, so a FIFO does not block and a huge file is not read).
    static func read(_ path: String, maxBytes: Int) throws -> Data {
        do {
            return try ModelFile.read(path, maxBytes: Int64(maxBytes), what: "regular file")
        } catch .malformed(_, let reason, _) {
            throw DeploymentError.invalidFile(path: path, reason: reason)
        } catch {
            throw DeploymentError.invalidFile(path: path, reason: "\(error)")
        }
    }

    /// Decodes `data` as `T`; a failure names the field (`deployments.spring.entries`) and what was wrong.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, name: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw DeploymentError.invalidFile(path: name, reason: describe(error))
        } catch {
            throw DeploymentError.invalidFile(path: name, reason: "not valid JSON")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "the top level" : "field '" + keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") + "'"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field '\(key.stringValue)' in \(path(context.codingPath))"
        case .typeMismatch(_, let context): return "\(path(context.codingPath)) has the wrong type (\(context.debugDescription))"
        case .valueNotFound(_, let context): return "\(path(context.codingPath)) is null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "not valid"
        }
    }

    /// Pretty, key-sorted JSON (stable bytes for signing and for diffs).
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Writes `data` to a temporary file beside `path` and renames it into place (readers see the
    /// old file or the new one, never half of one). `mode` 0o600 for secrets.
    /// Through ``SafeFiles/AtomicFile``: created exclusively, never through a symlink, 0600 from the
    /// first instant when `mode` says so.
    static func writeAtomically(_ data: Data, to path: String, mode: mode_t = 0o644, replacing: Bool = true) throws {
        do {
            try AtomicFile.write([UInt8](data), to: path, mode: mode, replacing: replacing)
        } catch let failure as AtomicFile.Failure {
            throw DeploymentError.invalidFile(path: path, reason: "cannot write it: \(failure.reason)")
        }
    }

    /// The size of a regular file, nil when there is none.
    static func size(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Refuses to replace an existing file (inputs are never overwritten).
    static func requireAbsent(_ path: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw DeploymentError.usage("\(path) exists; choose another name (FrameGraph never overwrites a file it did not make in this run)")
        }
    }
}
