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
    /// Whether a model file (on disk or in memory) exists at `path`.
    public static func exists(_ path: String) -> Bool {
        if MemoryModelFiles.isMemoryPath(path) { return MemoryModelFiles.data(at: path) != nil }
        return FileManager.default.fileExists(atPath: path)
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
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ModelError.malformed(file: path, reason: errno == ENOENT ? "no such file" : String(cString: strerror(errno)), offset: nil)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
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
        guard Int64(info.st_size) <= maxBytes else {
            throw ModelError.malformed(file: path, reason: "the file is \(info.st_size) bytes, over the limit of \(maxBytes) bytes", offset: nil)
        }
        guard access(path, R_OK) == 0 else {
            throw ModelError.malformed(file: path, reason: "permission denied (cannot read it)", offset: nil)
        }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw ModelError.malformed(file: path, reason: "cannot read it (\(String(cString: strerror(errno))))", offset: nil)
        }
    }
}
