import Foundation

/// Brings a collection in the cache up to date with the server: the signed manifest fetched and
/// verified, this machine's deployment chosen, its archives downloaded (resumed after cuts,
/// SHA-256 checked, renamed into place), and only then the deployment made active. Old archives
/// are pruned. Everything under the cache's lock.
public struct CollectionUpdater: Sendable {
    public let config: MachineConfig
    public let cache: ModelCache
    public let client: HTTPClient
    public let machine: MachineProfile

    public init(config: MachineConfig) {
        self.config = config
        cache = ModelCache(root: config.cachePath)
        client = config.httpClient
        machine = MachineProfile.current(deviceClass: config.deviceClass)
    }

    /// The outcome of an update.
    public struct Outcome: Sendable, Equatable {
        public var active: ModelCache.ActiveDeployment
        /// The deployment active before, when it was another one (or another sequence).
        public var previous: ModelCache.ActiveDeployment?
        /// Bytes downloaded.
        public var downloadedBytes: Int64
        public var changed: Bool { previous?.deployment != active.deployment || previous?.entries != active.entries }
    }

    /// What a first use of `collection` gets: the cache's active deployment, or (nothing cached)
    /// the collection downloaded now, within the machine's metered-network condition.
    /// `fromCache` says which.
    public func activeOrDownload(_ collection: String) throws -> (active: ModelCache.ActiveDeployment, fromCache: Bool) {
        if let active = try cache.withLock(exclusive: false, { try cache.active(collection) }) { return (active, true) }
        try ModelDownloadConditions(config: config).check(config: config, background: false)
        return (try update(collection).active, false)
    }

    /// Fetches and verifies `collection`'s manifest (not yet trusted for anything until verified).
    public func fetchManifest(_ collection: String) throws -> (manifest: CollectionManifest, data: Data, signature: Data) {
        guard ArchiveManifest.isSafeName(collection) else { throw DeploymentError.usage("'\(collection.prefix(60))' is not a collection name") }
        let base = config.server + "collections/" + collection + "/"
        let data = try client.fetch(base + "index.json", maxBytes: CollectionManifest.maxBytes)
        let signature: Data
        do { signature = try client.fetch(base + "index.json.sig", maxBytes: 4096) } catch DeploymentError.download(_, let reason) where reason.hasPrefix("HTTP 404") {
            throw DeploymentError.badSignature(collection: collection, reason: "the manifest is not signed (no index.json.sig on the server)")
        }
        try ManifestSignature.verify(manifest: data, signature: signature, trustedKey: config.publisherKey, collection: collection)
        let manifest = try CollectionManifest.parse(data, name: "collection '\(collection)' (index.json from \(config.server))")
        guard manifest.collection == collection else {
            throw DeploymentError.badSignature(collection: collection, reason: "the signed manifest is for collection '\(manifest.collection)'")
        }
        return (manifest, data, signature)
    }

    /// Updates `collection`; `progress` hears each archive's download.
    public func update(_ collection: String, progress: @escaping @Sendable (String, HTTPClient.Progress) -> Void = { _, _ in }) throws -> Outcome {
        let (manifest, data, signature) = try fetchManifest(collection)
        return try cache.withLock(exclusive: true) {
            let previous = try? cache.active(collection)
            // The highest sequence this machine accepted: the saved manifest's, or the active deployment's.
            let accepted = max(cache.acceptedManifest(collection)?.sequence ?? 0, previous?.sequence ?? 0)
            if manifest.sequence < accepted {
                throw DeploymentError.staleManifest(collection: collection, offered: manifest.sequence, accepted: accepted)
            }
            guard let (name, reason) = manifest.deployment(for: machine), let deployment = manifest.deployments[name] else {
                throw DeploymentError.notFound("collection '\(collection)': no rule matches this machine (\(machine.summary)) and there is no default deployment")
            }
            var downloaded: Int64 = 0
            for (entry, e) in deployment.entries.sorted(by: { $0.key < $1.key }) {
                // A cached archive damaged since it was verified is fetched again.
                if cache.hasArchive(sha256: e.sha256) {
                    if Crypto.sha256(fileAt: cache.archivePath(sha256: e.sha256)) == e.sha256 { continue }
                    unlink(cache.archivePath(sha256: e.sha256))
                }
                downloaded += try fetchArchive(e, entry: entry, progress: progress)
            }
            try cache.saveManifest(data, signature: signature, collection: collection)
            let switching = previous?.sequence != manifest.sequence || previous?.deployment != name || previous?.entries != deployment.entries
            var active = ModelCache.ActiveDeployment(collection: collection, sequence: manifest.sequence, deployment: name, reason: reason,
                                                     entries: deployment.entries, activated: CollectionManifest.now(),
                                                     retained: previous.map { Array(Set($0.entries.values.map(\.sha256))).sorted() })
            if switching { try cache.activate(active) } else if let previous { active = previous }
            cache.prune()
            return Outcome(active: active, previous: previous, downloadedBytes: downloaded)
        }
    }

    /// Downloads one archive into the cache: to a partial file (resumable), SHA-256 checked against
    /// the signed manifest, its own manifest checked, then renamed into place. Returns bytes fetched.
    private func fetchArchive(_ e: CollectionManifest.Entry, entry: String, progress: @escaping @Sendable (String, HTTPClient.Progress) -> Void) throws -> Int64 {
        let partial = cache.partialPath(sha256: e.sha256)
        let before = Int64(JSONFile.size(of: partial) ?? 0)
        let digest: String
        do {
            digest = try client.download(config.server + e.archive, to: partial, expectedSize: Int64(e.size)) { progress(entry, $0) }
        } catch {
            // Resumed across this pull's attempts; a pull that fails leaves no partial file behind.
            unlink(partial)
            throw error
        }
        guard digest == e.sha256 else {
            unlink(partial)
            throw DeploymentError.digestMismatch(what: "\(config.server)\(e.archive) (entry \(entry))", expected: e.sha256, got: digest)
        }
        // The whole archive's structure (its exact length from its manifest), not only its header.
        do { _ = try ModelArchive.manifest(of: [UInt8](try JSONFile.read(partial, maxBytes: e.size)), name: "\(entry) (\(e.sha256.prefix(12)))") } catch {
            unlink(partial)
            throw error
        }
        guard rename(partial, cache.archivePath(sha256: e.sha256)) == 0 else {
            throw DeploymentError.invalidFile(path: cache.archivePath(sha256: e.sha256), reason: String(cString: strerror(errno)))
        }
        return Int64(e.size) - before
    }
}
