import Foundation
import SafeFiles

/// An output file of a run, written safely through ``SafeFiles/AtomicFile``: the bytes go to a new
/// hidden temporary file in the destination's folder (created exclusively, never through a symlink,
/// under a short random name that keeps the extension, `out/.fg-k3J9x2Qa7LmP.json`), which
/// ``commit()`` renames onto the destination in one step. A crash, a kill or a concurrent writer
/// therefore never leaves a truncated or mixed file under the final name: readers see the old file
/// or the complete new one. Libraries that choose a format by extension (FFmpeg's muxers) write the
/// temporary path and choose the same one.
///
/// ```swift
/// let out = try OutputFile(destination: "out/stats.json")
/// try out.append(data)
/// try out.commit()
/// ```
public final class OutputFile: @unchecked Sendable {
    /// Where the file ends up.
    public let destination: String
    private let file: AtomicFile
    /// Where it is written until ``commit()``.
    public var temporaryPath: String { file.temporaryPath }

    /// Checks that `destination` is a local path, creates its folder, and creates the temporary file
    /// beside it (`mode` 0600 for secrets). Nothing is created at the destination itself.
    public init(destination: String, mode: mode_t = 0o644) throws {
        try OutputFile.checkLocal(destination)
        self.destination = destination
        let folder = URL(fileURLWithPath: destination).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw GraphError.io(path: destination, reason: "cannot create its folder \(folder.path)")
        }
        do {
            file = try AtomicFile(destination: destination, mode: mode)
        } catch let failure as AtomicFile.Failure {
            throw GraphError.io(path: destination, reason: failure.reason)
        }
    }

    /// A handle that writes the temporary file (closed by its owner before ``commit()``).
    public func handle() throws -> FileHandle {
        do {
            return FileHandle(fileDescriptor: try file.duplicateDescriptor(), closeOnDealloc: true)
        } catch let failure as AtomicFile.Failure {
            throw GraphError.io(path: destination, reason: failure.reason)
        }
    }

    /// Appends `data` to the temporary file.
    public func append(_ data: Data) throws {
        do {
            try data.withUnsafeBytes { try file.write($0) }
        } catch let failure as AtomicFile.Failure {
            throw GraphError.io(path: destination, reason: failure.reason)
        }
    }

    /// Flushes the temporary file and moves it onto the destination (atomically, replacing what was
    /// there); a full disk is an error here.
    public func commit() throws {
        do {
            try file.commit()
        } catch let failure as AtomicFile.Failure {
            throw GraphError.io(path: destination, reason: failure.reason)
        }
    }

    /// Removes the temporary file (the destination is left as it was).
    public func discard() {
        file.discard()
    }

    /// Writes `data` to `path` through a temporary file and a rename.
    public static func write(_ data: Data, to path: String, mode: mode_t = 0o644) throws {
        let out = try OutputFile(destination: path, mode: mode)
        do {
            try out.append(data)
        } catch {
            out.discard()
            throw error
        }
        try out.commit()
    }

    /// Refuses URLs and FFmpeg protocol names: outputs are local files only.
    public static func checkLocal(_ path: String) throws {
        guard !path.isEmpty else { throw GraphError.io(path: "\"\"", reason: "an empty output path") }
        if path.contains("://") || FileCheck.protocolPrefix(of: path) != nil
            || path.range(of: #"^[A-Za-z][A-Za-z0-9+.-]*:/"#, options: .regularExpression) != nil {
            throw GraphError.io(path: path, reason: "outputs are local files only (this looks like a URL or an FFmpeg protocol)")
        }
        if path.hasSuffix("/") || path == "." || path == ".." {
            throw GraphError.io(path: path, reason: "names a folder, not a file")
        }
        var info = stat()
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            throw GraphError.io(path: path, reason: "exists and is not a regular file (\(FileCheck.kindName(info.st_mode))): refusing to replace it")
        }
    }
}
