import Foundation

/// A model file format's importer into the graph IR. A format implements ``load(bytes:fileName:)``;
/// reading from a path or from `Data` comes with it.
public protocol ModelImporter {
    /// Imports a model from its bytes; `fileName` names it in error messages.
    static func load(bytes: [UInt8], fileName: String) throws(ModelError) -> NeuralGraph
}

extension ModelImporter {
    /// Loads the model at `path`. Errors reading the file are passed on as they are; everything about
    /// its content is a ``ModelError``.
    /// The file must be a regular file within `limits.maxFileBytes` (checked before it is read), and
    /// the imported graph must pass ``NeuralGraph/checkResources(_:file:)``.
    public static func load(path: String, limits: ModelLimits = .standard) throws -> NeuralGraph {
        let name = (path as NSString).lastPathComponent
        let data = try ModelFile.read(path, maxBytes: limits.maxFileBytes)
        let graph = try load(bytes: [UInt8](data), fileName: name)
        try graph.checkResources(limits, file: name)
        return graph
    }

    /// Loads a model from `data`; `fileName` names it in error messages.
    public static func load(data: Data, fileName: String, limits: ModelLimits = .standard) throws(ModelError) -> NeuralGraph {
        let graph = try load(bytes: [UInt8](data), fileName: fileName)
        try graph.checkResources(limits, file: fileName)
        return graph
    }
}

/// Reading a model file: a regular file of bounded size (checked before reading, so a FIFO does not
/// block and a huge sparse file is not read), with errors in plain words.
/// In-memory files (``MemoryModelFiles``, decrypted models) are read the same way.
public enum ModelFile {
    /// Whether something (on disk or in memory) exists at `path`: a file, or anything else that
    /// reading then refuses by name (a folder, a FIFO), so that the user hears what it is.
    public static func exists(_ path: String) -> Bool {
        if MemoryModelFiles.isMemoryPath(path) { return MemoryModelFiles.data(at: path) != nil }
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `what` names the kind of file in the error for a folder, FIFO or device ("model file").
    public static func read(_ path: String, maxBytes: Int64, what: String = "model file") throws(ModelError) -> Data {
        if MemoryModelFiles.isMemoryPath(path) {
            guard let data = MemoryModelFiles.data(at: path) else {
                throw ModelError.malformed(file: path, reason: "no such file (in memory)", offset: nil)
            }
            guard Int64(data.count) <= maxBytes else {
                throw ModelError.malformed(file: path, reason: "the file is \(data.count) bytes, over the limit of \(maxBytes) bytes", offset: nil)
            }
            return data
        }
        let fd = try open(path, what: what)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ModelError.malformed(file: path, reason: String(cString: strerror(errno)), offset: nil)
        }
        guard Int64(info.st_size) <= maxBytes else {
            throw ModelError.malformed(file: path, reason: "the file is \(info.st_size) bytes, over the limit of \(maxBytes) bytes", offset: nil)
        }
        return try readAll(fd, count: Int(info.st_size), path: path)
    }

    /// The first `count` bytes of a model file (fewer when it is shorter), with the same checks as
    /// ``read(_:maxBytes:what:)`` but reading no more.
    public static func readHead(_ path: String, count: Int, maxBytes: Int64, what: String = "model file") throws(ModelError) -> Data {
        if MemoryModelFiles.isMemoryPath(path) { return try read(path, maxBytes: maxBytes, what: what).prefix(count) }
        let fd = try open(path, what: what)
        defer { close(fd) }
        return try readAll(fd, count: count, path: path, exact: false)
    }

    /// Opens `path` for reading without blocking (a FIFO planted after a check cannot hang the
    /// read) and makes sure the descriptor is a regular file: the check and the read are of the
    /// same file.
    private static func open(_ path: String, what: String) throws(ModelError) -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let reason: String
            switch errno {
            case ENOENT: reason = "no such file"
            case EACCES: reason = "permission denied (cannot read it)"
            default: reason = String(cString: strerror(errno))
            }
            throw ModelError.malformed(file: path, reason: reason, offset: nil)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw ModelError.malformed(file: path, reason: String(cString: strerror(errno)), offset: nil)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            let kind: String
            switch info.st_mode & S_IFMT {
            case S_IFDIR: kind = "a folder"
            case S_IFIFO: kind = "a FIFO (named pipe)"
            case S_IFCHR: kind = "a character device"
            case S_IFBLK: kind = "a block device"
            case S_IFSOCK: kind = "a socket"
            default: kind = "not a regular file"
            }
            throw ModelError.malformed(file: path, reason: "is \(kind), not a \(what)", offset: nil)
        }
        return fd
    }

    /// Reads `count` bytes (or until the end of the file when not `exact`).
    private static func readAll(_ fd: Int32, count: Int, path: String, exact: Bool = true) throws(ModelError) -> Data {
        var data = Data(count: count)
        var done = 0
        let failure: Int32? = data.withUnsafeMutableBytes { raw -> Int32? in
            guard let base = raw.baseAddress else { return nil }
            while done < count {
                let n = Glibc.read(fd, base + done, count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if n == 0 { break }
                done += n
            }
            return nil
        }
        if let failure {
            throw ModelError.malformed(file: path, reason: "cannot read it (\(String(cString: strerror(failure))))", offset: nil)
        }
        if done < count {
            guard !exact else { throw ModelError.malformed(file: path, reason: "the file shrank while it was read", offset: Int(done)) }
            data.removeSubrange(done...)
        }
        return data
    }
}
