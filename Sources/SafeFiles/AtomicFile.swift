import CSafeFiles
#if canImport(Glibc)
import Glibc
#endif

/// A file written safely, the one way FrameGraph writes every output (videos, stats, results, JSON,
/// keys, archives): the bytes go to a new temporary file in the destination's folder, created with
/// `O_CREAT | O_EXCL | O_NOFOLLOW` under a random name (never an existing file, never through a
/// planted symlink) and with its final permissions from the first instant (0600 for secrets); then
/// ``commit()`` renames it onto the destination in one step. A crash or a kill leaves the old file
/// or the complete new one, never half of one.
///
/// The temporary name is short and independent of the destination's (`.fg-k3J9x2Qa7LmP.mp4`): a
/// destination whose name is as long as the file system allows still gets one. It keeps the
/// destination's extension (when short), so libraries that choose a format by extension (FFmpeg's
/// muxers) choose the same one.
///
/// ```swift
/// let file = try AtomicFile(destination: "out/stats.json")
/// try file.write(bytes)
/// try file.commit()
/// ```
public final class AtomicFile: @unchecked Sendable {
    /// Why a file could not be written: the path and the system's reason.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Where the file ends up.
    public let destination: String
    /// Where it is written until ``commit()``.
    public let temporaryPath: String
    /// The open temporary file (closed by ``commit()`` and ``discard()``).
    private var descriptor: Int32
    private var done = false
    /// Its slot in the table a signal handler empties (a second Ctrl-C leaves no temporary file).
    private var slot: Int32 = -1

    /// Prefix of every temporary name (hidden, and recognisable to clean up).
    public static let temporaryPrefix = ".fg-"

    /// Creates the temporary file beside `destination` (its folder must exist), with `mode`.
    public init(destination: String, mode: mode_t = 0o644) throws {
        self.destination = destination
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        var ext = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let e = name[name.index(after: dot)...]
            if !e.isEmpty && e.count <= 16 && e.allSatisfy({ $0.isLetter || $0.isNumber }) { ext = "." + e }
        }
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var lastError: Int32 = 0
        for _ in 0..<32 {
            let random = String((0..<12).map { _ in letters[Int.random(in: 0..<letters.count)] })
            let path = folder + Self.temporaryPrefix + random + ext
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 {
                // The umask may have narrowed `mode`; a secret must not be wider, an output not narrower.
                _ = fchmod(fd, mode)
                temporaryPath = path
                descriptor = fd
                slot = fg_tempfiles_register(path)
                return
            }
            lastError = errno
            guard errno == EEXIST else { break }
        }
        throw Failure(path: destination, reason: "cannot create a temporary file beside it: \(String(cString: strerror(lastError)))")
    }

    deinit {
        if !done { discard() }
    }

    /// A second descriptor of the temporary file, for a writer of its own (the caller closes it).
    public func duplicateDescriptor() throws -> Int32 {
        let fd = dup(descriptor)
        guard fd >= 0 else { throw Failure(path: destination, reason: String(cString: strerror(errno))) }
        return fd
    }

    /// Appends `bytes` to the temporary file.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure(path: destination, reason: "cannot write: \(String(cString: strerror(n < 0 ? errno : ENOSPC)))") }
            offset += n
        }
    }

    /// Appends `bytes` to the temporary file.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Flushes the temporary file to disk (a full disk is an error here, not a silent truncation)
    /// and renames it onto the destination, replacing what was there; with `replacing` false the
    /// destination must not exist (checked and placed in one step: a link, then the temporary name
    /// removed), as for a new key that must never replace another.
    public func commit(replacing: Bool = true) throws {
        guard !done else { return }
        done = true
        defer { fg_tempfiles_unregister(slot) }
        let synced = fsync(descriptor) == 0 || errno == EINVAL
        let syncError = errno
        let closed = close(descriptor) == 0
        guard synced, closed else {
            unlink(temporaryPath)
            throw Failure(path: destination, reason: "cannot write: \(String(cString: strerror(synced ? errno : syncError)))")
        }
        if !replacing {
            guard link(temporaryPath, destination) == 0 else {
                let reason = errno == EEXIST ? "it exists; choose another name (FrameGraph never replaces it)" : String(cString: strerror(errno))
                unlink(temporaryPath)
                throw Failure(path: destination, reason: reason)
            }
            unlink(temporaryPath)
            return
        }
        guard rename(temporaryPath, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw Failure(path: destination, reason: "cannot move the finished file into place: \(reason)")
        }
    }

    /// Closes and removes the temporary file (the destination is left as it was).
    public func discard() {
        guard !done else { return }
        done = true
        close(descriptor)
        unlink(temporaryPath)
        fg_tempfiles_unregister(slot)
    }

    /// Writes `bytes` to `destination` through a temporary file and a rename.
    public static func write(_ bytes: [UInt8], to destination: String, mode: mode_t = 0o644, replacing: Bool = true) throws {
        let file = try AtomicFile(destination: destination, mode: mode)
        do {
            try file.write(bytes)
        } catch {
            file.discard()
            throw error
        }
        try file.commit(replacing: replacing)
    }
}
