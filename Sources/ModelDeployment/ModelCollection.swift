import Foundation
import NeuralGraph

/// A collection of deployed models as this machine sees it, in the shape of Core ML's
/// `MLModelCollection`: its active deployment and an entry per model.
///
/// ```swift
/// let config = try MachineConfig.load(path: MachineConfig.location(explicit: nil))
/// let flowers = try await ModelCollection.beginAccessing(identifier: "FlowerModels", configuration: config)
/// let path = try flowers.entries["FlowerClassifier"]!.load()     // decrypted in memory if encrypted
/// ```
/// The first access downloads the collection; later ones use the cache at once and check the
/// server in the background: a new deployment is used from the next access (the next launch).
public struct ModelCollection: Sendable {
    public let identifier: String
    public let deploymentID: String
    /// The manifest sequence of the deployment.
    public let sequence: Int
    /// Why this machine got this deployment.
    public let reason: String
    public let entries: [String: Entry]

    /// One model of the collection.
    public struct Entry: Sendable {
        public let name: String
        public let version: String
        /// The archive in the cache (encrypted archives stay encrypted there).
        public let modelURL: URL
        public let isEncrypted: Bool
        let entry: CollectionManifest.Entry
        let config: MachineConfig
        let collection: String

        /// Opens the archive (verified; decrypted in memory with the team key, fetched once) and
        /// returns the path the importers load the model from (`memory:N/NAME`).
        public func load() throws -> String {
            try ModelCollection.load(entry, name: name, collection: collection, config: config).path
        }
    }

    /// The collection from the cache, or downloaded first when the cache has none; then a
    /// background check for a newer deployment (used from the next access) unless `checkForUpdates` is false.
    public static func beginAccessing(identifier: String, configuration: MachineConfig, checkForUpdates: Bool = true) async throws -> ModelCollection {
        let updater = CollectionUpdater(config: configuration)
        let (active, fromCache) = try await Task.detached { try updater.activeOrDownload(identifier) }.value
        if fromCache && checkForUpdates {
            Task.detached(priority: .background) { _ = try? updater.update(identifier) }
        }
        return ModelCollection(active: active, config: configuration)
    }

    init(active: ModelCache.ActiveDeployment, config: MachineConfig) {
        identifier = active.collection
        deploymentID = active.deployment
        sequence = active.sequence
        reason = active.reason
        let cache = ModelCache(root: config.cachePath)
        entries = Dictionary(uniqueKeysWithValues: active.entries.map { name, e in
            (name, Entry(name: name, version: e.version, modelURL: URL(fileURLWithPath: cache.archivePath(sha256: e.sha256)),
                         isEncrypted: e.keyID != nil, entry: e, config: config, collection: active.collection))
        })
    }

    /// A loaded entry: where the importers find it, and the folder to release.
    struct Loaded {
        var path: String
        var folder: String
    }

    /// Opens an entry's archive from the cache under the shared lock: its SHA-256 checked against
    /// the manifest, decrypted in memory when encrypted, its files registered in memory.
    static func load(_ e: CollectionManifest.Entry, name: String, collection: String, config: MachineConfig) throws -> Loaded {
        let cache = ModelCache(root: config.cachePath)
        let path = cache.archivePath(sha256: e.sha256)
        let read: (bytes: [UInt8]?, digest: String) = try cache.withLock(exclusive: false) {
            guard FileManager.default.fileExists(atPath: path) else {
                throw DeploymentError.notFound("collection '\(collection)', entry '\(name)': its archive is not in the cache (\(path)); run `framegraph models pull \(collection)`")
            }
            let data = try JSONFile.read(path, maxBytes: e.size)
            let digest = Crypto.sha256(data)
            return (digest == e.sha256 ? [UInt8](data) : nil, digest)
        }
        guard let bytes = read.bytes else {
            // Damaged on disk since it was verified: removed, so that the next update fetches it again.
            try cache.withLock(exclusive: true) {
                if Crypto.sha256(fileAt: path) != e.sha256 { unlink(path) }
            }
            throw DeploymentError.digestMismatch(what: "\(path) (cached; run `framegraph models pull \(collection)`)", expected: e.sha256, got: read.digest)
        }
        let archiveName = "\(collection)/\(name) (\(e.sha256.prefix(12)))"
        let key = try e.keyID.map { try config.teamKey(id: $0, opens: { (try? ModelArchive.open(bytes: bytes, name: archiveName, key: $0)) != nil }) }
        let (manifest, files) = try ModelArchive.open(bytes: bytes, name: archiveName, key: key)
        let folder = MemoryModelFiles.register(files)
        return Loaded(path: folder + "/" + manifest.model, folder: folder)
    }
}
