import Foundation

/// Checks on the files a run reads and writes, made before anything is opened: inputs are regular
/// files of a bounded size (a FIFO or a device would block or never end), outputs never name an input
/// (after symlinks and `..`), and no two outputs name the same file.
public enum FileCheck {
    /// A file's identity on disk: device and inode (the same file under any name).
    public struct Identity: Hashable, Sendable {
        public let device: UInt64
        public let inode: UInt64
    }

    /// The identity of the file at `path` (symlinks followed), or nil when there is none.
    public static func identity(of path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Checks that `path` is an existing regular file no larger than `maxBytes`, and returns its size.
    /// `what` names it in the error ("input", "model", "pipeline file").
    @discardableResult
    public static func regularFile(_ path: String, what: String, maxBytes: Int64 = .max) throws -> Int64 {
        if path.contains("://") || protocolPrefix(of: path) != nil {
            throw GraphError.io(path: path, reason: "\(what) must be a local file (URLs and FFmpeg protocols are not read)")
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw GraphError.io(path: path, reason: errno == ENOENT ? "no such file" : "\(what): \(String(cString: strerror(errno)))")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            throw GraphError.io(path: path, reason: "\(what) is \(kindName(info.st_mode)), not a regular file")
        }
        guard access(path, R_OK) == 0 else {
            throw GraphError.io(path: path, reason: "\(what): permission denied (cannot read it)")
        }
        let size = Int64(info.st_size)
        guard size <= maxBytes else {
            throw GraphError.io(path: path, reason: "\(what) is \(size) bytes, over the limit of \(maxBytes) bytes")
        }
        return size
    }

    /// Reads a whole regular file of at most `maxBytes` (checked before reading).
    public static func read(_ path: String, what: String, maxBytes: Int64) throws -> Data {
        try regularFile(path, what: what, maxBytes: maxBytes)
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw GraphError.io(path: path, reason: "\(what): cannot read it: \(plainReason(error))")
        }
    }

    /// "a FIFO (named pipe)", "a folder", … for a `st_mode`.
    public static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    /// The FFmpeg protocol a path would select (`tcp` for `tcp:…`), for the protocols that reach
    /// outside the file system; nil for plain paths.
    public static func protocolPrefix(of path: String) -> String? {
        guard let colon = path.firstIndex(of: ":") else { return nil }
        let scheme = path[..<colon].lowercased()
        let network = ["tcp", "udp", "udplite", "rtp", "rtmp", "rtmps", "rtmpt", "rtsp", "srt", "http", "https", "ftp", "sftp",
                       "tls", "unix", "pipe", "fd", "data", "concat", "concatf", "subfile", "crypto", "cache", "async",
                       "gopher", "gophers", "hls", "icecast", "mmsh", "mmst", "prompeg", "sctp", "zmq", "ipfs", "ipns", "srtp", "teeproto"]
        return network.contains(scheme) ? scheme : nil
    }

    /// A user-facing reason for a Foundation error, without framework dumps.
    public static func plainReason(_ error: any Error) -> String {
        let ns = error as NSError
        let underlying = (ns.userInfo[NSUnderlyingErrorKey] as? NSError) ?? (ns.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        if let underlying, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        switch ns.code {
        case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "no such file"
        case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "permission denied"
        case NSFileWriteOutOfSpaceError: return "no space left on the device"
        case NSFileReadTooLargeError: return "too large to read"
        default: break
        }
        if let graph = error as? GraphError { return graph.description }
        return "I/O error \(ns.code)"
    }

    /// Refuses a set of outputs that would overwrite an input or each other: each output is compared
    /// with every input by identity (device and inode, symlinks followed) and with the other outputs by
    /// resolved path. `inputs` and `outputs` pair a path with who uses it ("node 'source'", "--stats").
    public static func checkOutputs(_ outputs: [(path: String, owner: String)], inputs: [(path: String, owner: String)]) throws {
        var inputIDs: [Identity: (path: String, owner: String)] = [:]
        for input in inputs {
            if let id = identity(of: input.path) { inputIDs[id] = input }
        }
        var seen: [String: (path: String, owner: String)] = [:]
        for output in outputs {
            if let id = identity(of: output.path), let input = inputIDs[id] {
                throw GraphError.io(path: output.path, reason: "\(output.owner) would overwrite \(input.path), which \(input.owner) reads: choose another output path")
            }
            let key = resolvedPath(output.path)
            if let other = seen[key] {
                throw GraphError.io(path: output.path, reason: "\(output.owner) and \(other.owner) both write this file: give each its own path")
            }
            seen[key] = output
        }
    }

    /// `path` made absolute with its folder's symlinks and `..` resolved (the file itself need not exist).
    public static func resolvedPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let folder = url.deletingLastPathComponent().path
        if let real = realpath(folder, nil) {
            defer { free(real) }
            return String(cString: real) + "/" + url.lastPathComponent
        }
        return url.standardizedFileURL.path
    }
}
