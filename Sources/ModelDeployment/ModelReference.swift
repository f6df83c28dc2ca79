import Foundation
import NeuralGraph

/// Model references beyond files, as written in pipelines and on the command line:
/// `collection:NAME/ENTRY` (this machine's deployment of a hosted collection) and `PATH.fgarchive`
/// (an archive, decrypted in memory). Resolving them is the model service's (FrameGraphModels),
/// which uses ``resolveCollection(_:entry:config:)`` and ``openArchive(path:config:)``.
///
/// ```
/// label model=collection:FlowerModels/FlowerClassifier fallback=models/flowers.tflite
/// ```
public enum ModelReference {
    public static let collectionPrefix = "collection:"

    /// Whether `reference` names a collection entry.
    public static func isCollection(_ reference: String) -> Bool { reference.hasPrefix(collectionPrefix) }

    /// Splits `collection:NAME/ENTRY`.
    public static func parse(_ reference: String) throws -> (collection: String, entry: String) {
        let body = reference.dropFirst(collectionPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard body.count == 2, ArchiveManifest.isSafeName(String(body[0])), ArchiveManifest.isSafeName(String(body[1])) else {
            throw DeploymentError.usage("'\(reference.prefix(80))': a collection model is written collection:COLLECTION/ENTRY")
        }
        return (String(body[0]), String(body[1]))
    }

    /// What a collection entry or an archive opened into.
    public struct Opened: Sendable, Equatable {
        /// The model inside, in memory (`memory:N/NAME`).
        public var path: String
        /// The in-memory folder to release when the model is no longer used.
        public var memoryFolder: String
        /// `collection FlowerModels/FlowerClassifier 1.2, deployment spring (sequence 3, …)` or `archive x.fgarchive (name version)`.
        public var source: String
        public var collection: String?
        public var entry: String?
        public var deployment: String?
        public var sequence: Int?
    }

    /// Opens the archive at `path` (a file found already), with its team key from `config` when it
    /// is encrypted (`config` is only read then).
    public static func openArchive(path: String, reference: String, config: () throws -> MachineConfig) throws -> Opened {
        let data = try JSONFile.read(path, maxBytes: Int(ModelLimits.standard.maxFileBytes) + ModelArchive.maxHeaderBytes + 28)
        let bytes = [UInt8](data), name = (path as NSString).lastPathComponent
        let (manifest, _) = try ModelArchive.manifest(of: bytes, name: name)
        let key = try manifest.encryption.map { e in
            try config().teamKey(id: e.keyID, opens: { (try? ModelArchive.open(bytes: bytes, name: name, key: $0)) != nil })
        }
        let (m, files) = try ModelArchive.open(bytes: bytes, name: name, key: key)
        let folder = MemoryModelFiles.register(files)
        return Opened(path: folder + "/" + m.model, memoryFolder: folder, source: "archive \(reference) (\(m.name) \(m.version))")
    }

    /// This machine's model for `collection`/`entry`: the active deployment in the cache, else the
    /// collection downloaded now.
    public static func resolveCollection(_ collection: String, entry: String, config: MachineConfig) throws -> Opened {
        let active = try CollectionUpdater(config: config).activeOrDownload(collection).active
        guard let e = active.entries[entry] else {
            throw DeploymentError.notFound("collection '\(collection)', deployment '\(active.deployment)' has no entry '\(entry)' (it has \(active.entries.keys.sorted().joined(separator: ", ")))")
        }
        let loaded = try ModelCollection.load(e, name: entry, collection: collection, config: config)
        return Opened(path: loaded.path, memoryFolder: loaded.folder,
                      source: "collection \(collection)/\(entry) \(e.version), deployment \(active.deployment) (sequence \(active.sequence), \(active.reason))"
                          + (e.keyID != nil ? ", encrypted" : ""),
                      collection: collection, entry: entry, deployment: active.deployment, sequence: active.sequence)
    }
}
