import Foundation

/// The machine's model cache: content-addressed archives, each collection's accepted manifest and
/// active deployment, the key store, and a lock that lets several processes share it.
///
/// ```
/// CACHE/.lock                               flock: exclusive to change, shared to read
/// CACHE/archives/SHA256.fgarchive           verified archives (encrypted ones stay encrypted)
/// CACHE/partial/SHA256.partial              a download in progress (resumed after a cut within the
///                                           pull's attempts; removed when the pull fails; never loaded,
///                                           never in archives/ until its SHA-256 is checked)
/// CACHE/collections/NAME/index.json(.sig)   the newest manifest accepted (signature checked)
/// CACHE/collections/NAME/active.json        the deployment runs use: switched only when all its
///                                           archives are present and verified
/// CACHE/keystore.json                       team keys fetched from the key service (mode 0600)
/// ```
/// Default location `$FRAMEGRAPH_MODEL_CACHE`, else `$XDG_CACHE_HOME/framegraph/models`, else
/// `~/.cache/framegraph/models`.
public struct ModelCache: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

    /// The cache folder `environment` points to (read once by the caller: the model service).
    public static func defaultLocation(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = env["FRAMEGRAPH_MODEL_CACHE"], !path.isEmpty { return path }
        let base = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.cache")
        return base + "/framegraph/models"
    }

    public var archivesFolder: String { root + "/archives" }
    public func archivePath(sha256: String) -> String { "\(archivesFolder)/\(sha256).\(ModelArchive.fileExtension)" }
    public var partialFolder: String { root + "/partial" }
    func partialPath(sha256: String) -> String { "\(partialFolder)/\(sha256).partial" }
    public func collectionFolder(_ name: String) -> String { root + "/collections/" + name }
    public var keystorePath: String { root + "/keystore.json" }

    /// Makes the folders (the cache itself 0700: it holds the key store).
    public func prepare() throws {
        for folder in [root, archivesFolder, partialFolder, root + "/collections"] {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                        attributes: folder == root ? [.posixPermissions: 0o700] : nil)
            } catch {
                throw DeploymentError.invalidFile(path: folder, reason: "cannot make the model cache folder: \(error.localizedDescription)")
            }
        }
    }

    /// Runs `body` holding the cache's lock (`exclusive` to change it, shared to read it).
    public func withLock<T>(exclusive: Bool, _ body: () throws -> T) throws -> T {
        try prepare()
        let fd = open(root + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DeploymentError.invalidFile(path: root + "/.lock", reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw DeploymentError.invalidFile(path: root + "/.lock", reason: String(cString: strerror(errno))) }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    // MARK: Collections

    /// What runs use for a collection.
    public struct ActiveDeployment: Codable, Sendable, Equatable {
        public var collection: String
        public var sequence: Int
        public var deployment: String
        /// Why this deployment (`rule 1 (device-class kiosk)`, `the default deployment`).
        public var reason: String
        public var entries: [String: CollectionManifest.Entry]
        public var activated: String
        /// Digests of the deployment active before this one: kept until the next switch, so that a
        /// program still holding the older collection can load its entries.
        public var retained: [String]?
    }

    /// The active deployment of `collection`, nil when none was ever completed.
    public func active(_ collection: String) throws -> ActiveDeployment? {
        let path = collectionFolder(collection) + "/active.json"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try JSONFile.decode(ActiveDeployment.self, from: try JSONFile.read(path, maxBytes: CollectionManifest.maxBytes), name: path)
    }

    /// The manifest accepted last for `collection` (its sequence bounds what the server may offer).
    public func acceptedManifest(_ collection: String) -> CollectionManifest? {
        let path = collectionFolder(collection) + "/index.json"
        guard let data = try? JSONFile.read(path, maxBytes: CollectionManifest.maxBytes) else { return nil }
        return try? CollectionManifest.parse(data, name: path)
    }

    /// Collections with a folder in the cache.
    public func collections() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/collections")) ?? []).filter { ArchiveManifest.isSafeName($0) }.sorted()
    }

    func saveManifest(_ data: Data, signature: Data, collection: String) throws {
        let folder = collectionFolder(collection)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONFile.writeAtomically(signature, to: folder + "/index.json.sig")
        try JSONFile.writeAtomically(data, to: folder + "/index.json")
    }

    func activate(_ active: ActiveDeployment) throws {
        let folder = collectionFolder(active.collection)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONFile.writeAtomically(try JSONFile.encode(active), to: folder + "/active.json")
    }

    /// Whether an archive with this digest is in the cache.
    public func hasArchive(sha256: String) -> Bool { FileManager.default.fileExists(atPath: archivePath(sha256: sha256)) }

    /// Removes archives and partial downloads that no collection's active deployment uses (a partial
    /// download of the deployment being fetched is kept in `extra` by the caller); returns how many.
    @discardableResult
    func prune(keeping extra: Set<String> = []) -> Int {
        var used = extra
        for c in collections() {
            if let a = try? active(c) { used.formUnion(a.entries.values.map(\.sha256) + (a.retained ?? [])) }
        }
        var removed = 0
        for folder in [archivesFolder, partialFolder] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !used.contains(String(name.prefix(64))) {
                unlink(folder + "/" + name)
                removed += 1
            }
        }
        return removed
    }

    /// Deletes every archive, manifest and partial download; the key store too when `keys`.
    /// Removes what the cache made — its archives, partial downloads, manifests and active
    /// deployments (and the key store with `keys`) — and nothing else: a file someone put in its
    /// folders is left where it is (returned, so the caller can say so).
    @discardableResult
    public func clear(keys: Bool) throws -> [String] {
        try withLock(exclusive: true) {
            let fm = FileManager.default
            var kept: [String] = []
            func isDigestName(_ name: String, _ ext: String) -> Bool {
                name.hasSuffix("." + ext) && Hex.isHex(String(name.dropLast(ext.count + 1)), bytes: 32)
            }
            func sweep(_ folder: String, _ ours: (String) -> Bool) {
                for name in (try? fm.contentsOfDirectory(atPath: folder)) ?? [] {
                    let path = folder + "/" + name
                    if ours(name) { unlink(path) } else { kept.append(path) }
                }
                rmdir(folder)  // only when empty
            }
            sweep(archivesFolder) { isDigestName($0, ModelArchive.fileExtension) || $0.hasPrefix(".fg-") }
            sweep(partialFolder) { isDigestName($0, "partial") }
            let collections = root + "/collections"
            for name in (try? fm.contentsOfDirectory(atPath: collections)) ?? [] {
                let folder = collections + "/" + name
                guard ArchiveManifest.isSafeName(name), (try? fm.attributesOfItem(atPath: folder)[.type] as? FileAttributeType) == .typeDirectory else {
                    kept.append(folder)
                    continue
                }
                sweep(folder) { ["index.json", "index.json.sig", "active.json"].contains($0) || $0.hasPrefix(".fg-") }
            }
            rmdir(collections)
            if keys { unlink(keystorePath) }
            return kept
        }
    }
}
