import Foundation
import NeuralGraph

/// The publishing side: a folder of plain files any static web server can serve.
///
/// ```
/// TREE/archives/SHA256.fgarchive                 archives, content-addressed
/// TREE/collections/NAME/index.json               the collection's manifest (CollectionManifest)
/// TREE/collections/NAME/index.json.sig           its Ed25519 signature by the publisher key
/// ```
/// Every change re-signs the manifest with a higher `sequence`.
public struct DeployTree: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

    func manifestPath(_ collection: String) -> String { "\(root)/collections/\(collection)/index.json" }

    /// Makes an empty collection.
    public func createCollection(_ name: String, key: PublisherKey) throws {
        guard ArchiveManifest.isSafeName(name) else { throw DeploymentError.usage("'\(name.prefix(60))': a collection name is letters, digits, '.', '_' and '-'") }
        guard !FileManager.default.fileExists(atPath: manifestPath(name)) else { throw DeploymentError.usage("collection '\(name)' already exists in \(root)") }
        try FileManager.default.createDirectory(atPath: "\(root)/collections/\(name)", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(root)/archives", withIntermediateDirectories: true)
        var m = CollectionManifest(collection: name)
        m.sequence = 0
        try publish(&m, key: key)
    }

    /// The collection's manifest, its signature checked against `key` (the publisher's own).
    public func manifest(_ collection: String, key: PublisherKey) throws -> CollectionManifest {
        let path = manifestPath(collection)
        guard FileManager.default.fileExists(atPath: path) else {
            throw DeploymentError.notFound("no collection '\(collection)' in \(root) (make it with `framegraph deploy collection \(root) \(collection)`)")
        }
        let data = try JSONFile.read(path, maxBytes: CollectionManifest.maxBytes)
        try ManifestSignature.verify(manifest: data, signature: try JSONFile.read(path + ".sig", maxBytes: 4096), trustedKey: key.publicKeyHex,
                                     collection: collection)
        return try CollectionManifest.parse(data, name: path)
    }

    /// Adds (or replaces) a deployment: each entry's archive is checked and copied into the tree.
    @discardableResult
    /// Every archive is read and checked whole before anything is published: its exact length from
    /// its manifest, its files' SHA-256 when it is not encrypted, and, given the team keys it is
    /// encrypted with (`teamKeys`), that it decrypts — a machine never receives what cannot open.
    public func addDeployment(collection: String, name: String, archives: [String: String], key: PublisherKey, makeDefault: Bool,
                              teamKeys: [TeamKey] = []) throws -> CollectionManifest {
        guard ArchiveManifest.isSafeName(name) else { throw DeploymentError.usage("'\(name.prefix(60))': a deployment name is letters, digits, '.', '_' and '-'") }
        guard !archives.isEmpty else { throw DeploymentError.usage("a deployment needs at least one ENTRY=ARCHIVE") }
        var m = try manifest(collection, key: key)
        var entries: [String: CollectionManifest.Entry] = [:]
        for (entry, path) in archives {
            guard ArchiveManifest.isSafeName(entry) else { throw DeploymentError.usage("'\(entry.prefix(60))': an entry name is letters, digits, '.', '_' and '-'") }
            let data = try JSONFile.read(path, maxBytes: Int(ModelLimits.standard.maxFileBytes) + ModelArchive.maxHeaderBytes + 28)
            let bytes = [UInt8](data)
            let name = (path as NSString).lastPathComponent
            let (archive, _) = try ModelArchive.manifest(of: bytes, name: name)
            if let encryption = archive.encryption {
                if let teamKey = teamKeys.first(where: { $0.id == encryption.keyID }) {
                    _ = try ModelArchive.open(bytes: bytes, name: name, key: teamKey)
                }
            } else {
                _ = try ModelArchive.open(bytes: bytes, name: name, key: nil)
            }
            let sha = Crypto.sha256(data), size = data.count
            let target = "\(root)/\(CollectionManifest.archivePath(sha256: sha))"
            if !FileManager.default.fileExists(atPath: target) {
                try JSONFile.writeAtomically(data, to: target)
            }
            entries[entry] = .init(archive: CollectionManifest.archivePath(sha256: sha), sha256: sha, size: size, version: archive.version,
                                   modelFormat: archive.modelFormat, keyID: archive.encryption?.keyID)
        }
        m.deployments[name] = .init(entries: entries)
        if makeDefault || m.defaultDeployment == nil { m.defaultDeployment = name }
        try publish(&m, key: key)
        return m
    }

    /// Appends a targeting rule (first match wins; `position` 1 puts it first).
    @discardableResult
    public func addRule(collection: String, rule: CollectionManifest.Rule, position: Int?, key: PublisherKey) throws -> CollectionManifest {
        if let problem = rule.problem { throw DeploymentError.usage("the rule: \(problem)") }
        var m = try manifest(collection, key: key)
        guard m.deployments[rule.deployment] != nil else {
            throw DeploymentError.notFound("collection '\(collection)' has no deployment '\(rule.deployment)' (it has \(m.deployments.keys.sorted().joined(separator: ", ")))")
        }
        if let position {
            m.rules.insert(rule, at: max(0, min(m.rules.count, position - 1)))
        } else {
            m.rules.append(rule)
        }
        try publish(&m, key: key)
        return m
    }

    /// Makes `deployment` the default for machines no rule matches.
    @discardableResult
    public func setDefault(collection: String, deployment: String, key: PublisherKey) throws -> CollectionManifest {
        var m = try manifest(collection, key: key)
        guard m.deployments[deployment] != nil else { throw DeploymentError.notFound("collection '\(collection)' has no deployment '\(deployment)'") }
        m.defaultDeployment = deployment
        try publish(&m, key: key)
        return m
    }

    /// Writes the manifest with the next sequence number, then its signature.
    private func publish(_ m: inout CollectionManifest, key: PublisherKey) throws {
        guard m.sequence < CollectionManifest.maxSequence else {
            throw DeploymentError.usage("collection '\(m.collection)': its sequence \(m.sequence) is at the limit (\(CollectionManifest.maxSequence)); start a new collection")
        }
        m.sequence += 1
        m.published = CollectionManifest.now()
        try m.validate(name: manifestPath(m.collection))
        let data = try JSONFile.encode(m)
        let signature = try JSONFile.encode(try ManifestSignature.sign(data, with: key))
        try JSONFile.writeAtomically(data, to: manifestPath(m.collection))
        try JSONFile.writeAtomically(signature, to: manifestPath(m.collection) + ".sig")
    }
}
