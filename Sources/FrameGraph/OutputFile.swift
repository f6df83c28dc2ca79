import Foundation

/// A file being written safely: the bytes go to a hidden temporary file in the destination's folder,
/// which ``commit()`` renames onto the destination in one step. A crash, a kill or a concurrent writer
/// therefore never leaves a truncated or mixed file under the final name: readers see the old file or
/// the complete new one.
///
/// ```swift
/// let out = try OutputFile(destination: "out/stats.json")
/// try data.write(to: URL(fileURLWithPath: out.temporaryPath))
/// try out.commit()
/// ```
/// The temporary name keeps the destination's extension (`out/.stats.json.partial-1234-5678.json`), so
/// libraries that choose a format by extension (FFmpeg's muxers) choose the same one.
public final class OutputFile: @unchecked Sendable {
    /// Where the file ends up.
    public let destination: String
    /// Where it is written until ``commit()``.
    public let temporaryPath: String
    private var done = false

    /// Checks that `destination` is a local path, creates its folder, and picks a temporary name
    /// beside it. Nothing is created at the destination itself.
    public init(destination: String) throws {
        try OutputFile.checkLocal(destination)
        self.destination = destination
        let url = URL(fileURLWithPath: destination)
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw GraphError.io(path: destination, reason: "cannot create its folder \(folder.path)")
        }
        let name = url.lastPathComponent
        let ext = url.pathExtension
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        temporaryPath = folder.appendingPathComponent(".\(name).partial-\(unique)" + (ext.isEmpty ? "" : ".\(ext)")).path
    }

    deinit {
        if !done { discard() }
    }

    /// Moves the finished temporary file onto the destination (atomically, replacing what was there).
    public func commit() throws {
        guard !done else { return }
        done = true
        guard rename(temporaryPath, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw GraphError.io(path: destination, reason: "cannot move the finished file into place: \(reason)")
        }
    }

    /// Removes the temporary file (the destination is left as it was).
    public func discard() {
        done = true
        unlink(temporaryPath)
    }

    /// Writes `data` to `path` through a temporary file and a rename.
    public static func write(_ data: Data, to path: String) throws {
        let out = try OutputFile(destination: path)
        do {
            try data.write(to: URL(fileURLWithPath: out.temporaryPath))
        } catch {
            out.discard()
            throw GraphError.io(path: path, reason: "cannot write: \(FileCheck.plainReason(error))")
        }
        try out.commit()
    }

    /// Refuses URLs and FFmpeg protocol names: outputs are local files only.
    public static func checkLocal(_ path: String) throws {
        guard !path.isEmpty else { throw GraphError.io(path: "\"\"", reason: "an empty output path") }
        if path.contains("://") || FileCheck.protocolPrefix(of: path) != nil {
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
