import Foundation
import ModelStore
import NeuralGraph
import Synchronization

/// Model references beyond files: `collection:NAME/ENTRY` (this machine's deployment of a hosted
/// collection, from the cache, downloaded on first use) and `PATH.fgarchive` (an archive, decrypted
/// in memory), with a bundled fallback when a collection cannot be had.
///
/// ```
/// label model=collection:FlowerModels/FlowerClassifier fallback=models/flowers.tflite
/// ```
public enum ModelReference {
    public static let collectionPrefix = "collection:"

    /// Where the model came from, for the log and the run's stats (`modelSource`).
    public struct Resolved: Sendable, Equatable {
        /// What importers load (a file, or `memory:N/NAME` for an archive's files).
        public var path: String
        /// `collection FlowerModels/FlowerClassifier, deployment spring (sequence 3, rule 1 (device-class kiosk))`,
        /// `fallback models/flowers.tflite (…why…)`, or the file.
        public var source: String
        /// Set for collection references: the collection, entry and the active deployment used.
        public var collection: String?
        public var entry: String?
        public var deployment: String?
        public var sequence: Int?
        public var usedFallback: Bool
        /// The in-memory folder to release when the model is no longer used.
        public var memoryFolder: String?
    }

    private static let configOverride = Mutex<String?>(nil)

    /// The machine config file to use (the CLI's `--machine-config`); nil: the default location.
    public static var machineConfigPath: String? {
        get { configOverride.withLock { $0 } }
        set { configOverride.withLock { $0 = newValue } }
    }

    /// The machine config in force.
    public static func machineConfig() throws -> MachineConfig {
        let path = MachineConfig.location(explicit: machineConfigPath)
        guard FileManager.default.fileExists(atPath: path) else {
            throw DeploymentError.invalidFile(path: path, reason: "no machine config (it names the model server and the publisher key; see docs/DEPLOYMENT.md)")
        }
        return try MachineConfig.load(path: path)
    }

    public static func isCollection(_ reference: String) -> Bool { reference.hasPrefix(collectionPrefix) }

    /// Splits `collection:NAME/ENTRY`.
    public static func parse(_ reference: String) throws -> (collection: String, entry: String) {
        let body = reference.dropFirst(collectionPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard body.count == 2, ArchiveManifest.isSafeName(String(body[0])), ArchiveManifest.isSafeName(String(body[1])) else {
            throw DeploymentError.usage("'\(reference.prefix(80))': a collection model is written collection:COLLECTION/ENTRY")
        }
        return (String(body[0]), String(body[1]))
    }

    /// Whether `reference` needs this module (a collection or an archive); plain files and names
    /// are ModelLoader's.
    public static func needsResolving(_ reference: String) -> Bool {
        isCollection(reference) || reference.lowercased().hasSuffix("." + ModelArchive.fileExtension)
    }

    /// Resolves `reference`. A collection comes from the cache's active deployment, or is downloaded
    /// when the cache has none; when that fails and `fallback` is given, the fallback is used and
    /// `warn` says why, once. Plain references go to ``ModelLoader/resolve(_:roots:)``.
    public static func resolve(_ reference: String, fallback: String?, roots: [String], warn: (String) -> Void) throws -> Resolved {
        if isCollection(reference) {
            let (collection, entry) = try parse(reference)
            do {
                return try resolveCollection(collection, entry: entry)
            } catch {
                guard let fallback else { throw error }
                let path = try ModelLoader.resolve(fallback, roots: roots)
                let why = "\(error)"
                warn("model \(reference): \(why); using the bundled fallback \(fallback)")
                return Resolved(path: path, source: "fallback \(fallback) (\(why))", usedFallback: true)
            }
        }
        if reference.lowercased().hasSuffix("." + ModelArchive.fileExtension) {
            let file = try ModelLoader.resolve(reference, roots: roots)
            let manifest = try ModelArchive.manifest(path: file)
            let key = try manifest.encryption.map { try machineConfig().teamKey(id: $0.keyID) }
            let (m, files) = try ModelArchive.open(path: file, key: key)
            let folder = MemoryModelFiles.register(files)
            return Resolved(path: folder + "/" + m.model, source: "archive \(reference) (\(m.name) \(m.version))", usedFallback: false, memoryFolder: folder)
        }
        let path = try ModelLoader.resolve(reference, roots: roots)
        return Resolved(path: path, source: path, usedFallback: false)
    }

    /// This machine's model for `collection`/`entry`: the active deployment in the cache, else the
    /// collection downloaded now.
    public static func resolveCollection(_ collection: String, entry: String) throws -> Resolved {
        let config = try machineConfig()
        let active = try CollectionUpdater(config: config).activeOrDownload(collection).active
        guard let e = active.entries[entry] else {
            throw DeploymentError.notFound("collection '\(collection)', deployment '\(active.deployment)' has no entry '\(entry)' (it has \(active.entries.keys.sorted().joined(separator: ", ")))")
        }
        let loaded = try ModelCollection.load(e, name: entry, collection: collection, config: config)
        return Resolved(path: loaded.path,
                        source: "collection \(collection)/\(entry) \(e.version), deployment \(active.deployment) (sequence \(active.sequence), \(active.reason))"
                            + (e.keyID != nil ? ", encrypted" : ""),
                        collection: collection, entry: entry, deployment: active.deployment, sequence: active.sequence, usedFallback: false,
                        memoryFolder: loaded.folder)
    }
}
