import Foundation
import Synchronization

/// Model files that exist only in memory: a decrypted model from an encrypted archive is never
/// written to disk, so its files are registered here under a path of the form
/// `memory:ID/NAME` and every importer reads them through ``ModelFile`` as if they were files.
///
/// ```swift
/// let folder = MemoryModelFiles.register(["classifier.tflite": bytes])   // "memory:1"
/// let graph = try ModelLoader.load(path: folder + "/classifier.tflite")
/// ```
public enum MemoryModelFiles {
    /// The path prefix of in-memory files.
    public static let scheme = "memory:"
    private static let state = Mutex<(next: Int, files: [String: Data])>((1, [:]))

    /// Registers a set of files under a new folder; returns the folder's path (`memory:ID`). The
    /// files stay until ``remove(folder:)``.
    public static func register(_ files: [String: Data]) -> String {
        state.withLock { s in
            let folder = "\(scheme)\(s.next)"
            s.next += 1
            for (name, data) in files { s.files[folder + "/" + name] = data }
            return folder
        }
    }

    /// Forgets the files of a folder made by ``register(_:)``.
    public static func remove(folder: String) {
        state.withLock { s in
            for key in s.files.keys where key.hasPrefix(folder + "/") { s.files[key] = nil }
        }
    }

    /// The bytes of an in-memory file, nil when there is none at `path`.
    public static func data(at path: String) -> Data? {
        guard path.hasPrefix(scheme) else { return nil }
        return state.withLock { $0.files[path] }
    }

    /// Whether `path` names an in-memory file.
    public static func isMemoryPath(_ path: String) -> Bool { path.hasPrefix(scheme) }
}
