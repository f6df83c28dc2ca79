import Foundation

/// A model collection as published (`collections/NAME/index.json` in a deploy tree, signed in
/// `index.json.sig`): its deployments (sets of archives released together), the targeting rules
/// that pick one for a machine (first match wins) and the default for the rest. `sequence` grows
/// with every publication; a machine never goes back to a lower one.
public struct CollectionManifest: Codable, Sendable, Equatable {
    public static let formatName = "framegraph-collection-1"
    public static let maxBytes = 1 << 20
    public var format = CollectionManifest.formatName
    public var collection: String
    /// The largest sequence a manifest may carry (so that publishing the next one cannot overflow).
    public static let maxSequence = 1 << 53
    public var sequence: Int
    public var published: String
    public var deployments: [String: Deployment]
    public var rules: [Rule]
    public var defaultDeployment: String?

    public init(collection: String) {
        self.collection = collection
        sequence = 1
        published = CollectionManifest.now()
        deployments = [:]
        rules = []
        defaultDeployment = nil
    }

    /// Archives released together, by entry name (`FlowerClassifier`, `FlowerStylizer`).
    public struct Deployment: Codable, Sendable, Equatable {
        public var entries: [String: Entry]
        public init(entries: [String: Entry]) { self.entries = entries }
    }

    /// One model of a deployment: where its archive is in the tree, and what it must hash to.
    public struct Entry: Codable, Sendable, Equatable {
        /// `archives/SHA256.fgarchive`, relative to the tree's root.
        public var archive: String
        public var sha256: String
        public var size: Int
        public var version: String
        public var modelFormat: String
        /// The team key it is encrypted with, nil when it is not.
        public var keyID: String?
        enum CodingKeys: String, CodingKey { case archive, sha256, size, version, modelFormat, keyID = "keyId" }

        public init(archive: String, sha256: String, size: Int, version: String, modelFormat: String, keyID: String?) {
            self.archive = archive
            self.sha256 = sha256
            self.size = size
            self.version = version
            self.modelFormat = modelFormat
            self.keyID = keyID
        }
    }

    /// A targeting rule: every condition given must hold for the machine.
    public struct Rule: Codable, Sendable, Equatable {
        public var deployment: String
        public var deviceClass: String?
        public var arch: String?
        public var features: [String]?
        public var minCores: Int?
        public var minMemoryMiB: Int?
        public var os: String?

        public init(deployment: String, deviceClass: String? = nil, arch: String? = nil, features: [String]? = nil,
                    minCores: Int? = nil, minMemoryMiB: Int? = nil, os: String? = nil) {
            self.deployment = deployment
            self.deviceClass = deviceClass
            self.arch = arch
            self.features = features
            self.minCores = minCores
            self.minMemoryMiB = minMemoryMiB
            self.os = os
        }

        /// What is wrong with the rule's conditions (a name that is not a safe word, a count out of
        /// range), or nil.
        public var problem: String? {
            for (field, value) in [("deviceClass", deviceClass), ("arch", arch), ("os", os)] {
                if let value, !ArchiveManifest.isSafeName(value) {
                    return "\(field) '\(value.prefix(40))' is not a safe name (letters, digits, '.', '_' and '-', at most 128)"
                }
            }
            if let features {
                guard features.count <= 64 else { return "more than 64 features" }
                for f in features where !ArchiveManifest.isSafeName(f) { return "feature '\(f.prefix(40))' is not a safe name" }
            }
            if let minCores, !(1...4096).contains(minCores) { return "minCores \(minCores) is not within 1 … 4096" }
            if let minMemoryMiB, !(1...(1 << 30)).contains(minMemoryMiB) { return "minMemoryMiB \(minMemoryMiB) is out of range" }
            return nil
        }

        /// Whether `machine` meets every condition of the rule.
        public func matches(_ machine: MachineProfile) -> Bool {
            if let deviceClass, machine.deviceClass != deviceClass { return false }
            if let arch, machine.arch != arch { return false }
            if let features, !features.allSatisfy(machine.features.contains) { return false }
            if let minCores, machine.cores < minCores { return false }
            if let minMemoryMiB, machine.memoryMiB < minMemoryMiB { return false }
            if let os, machine.os != os { return false }
            return true
        }

        /// The conditions in words (`device-class kiosk, features avx512f`).
        public var summary: String {
            var parts: [String] = []
            if let deviceClass { parts.append("device-class \(deviceClass)") }
            if let arch { parts.append("arch \(arch)") }
            if let features { parts.append("features \(features.joined(separator: "+"))") }
            if let minCores { parts.append("cores ≥ \(minCores)") }
            if let minMemoryMiB { parts.append("memory ≥ \(minMemoryMiB) MiB") }
            if let os { parts.append("os \(os)") }
            return parts.isEmpty ? "every machine" : parts.joined(separator: ", ")
        }
    }

    /// The deployment for `machine`: the first rule that matches, else the default; with the reason.
    public func deployment(for machine: MachineProfile) -> (name: String, reason: String)? {
        for (i, rule) in rules.enumerated() where rule.matches(machine) && deployments[rule.deployment] != nil {
            return (rule.deployment, "rule \(i + 1) (\(rule.summary))")
        }
        if let d = defaultDeployment, deployments[d] != nil { return (d, "the default deployment") }
        return nil
    }

    static func now() -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date())
    }

    /// The archive path an entry must have (content-addressed; nothing else is accepted, so a
    /// manifest cannot point a machine outside the tree).
    public static func archivePath(sha256: String) -> String { "archives/\(sha256).\(ModelArchive.fileExtension)" }

    /// Every field checked (names, counts, digests, paths, references between deployments and rules).
    public func validate(name file: String) throws {
        func bad(_ reason: String) -> DeploymentError { .invalidFile(path: file, reason: reason) }
        guard format == Self.formatName else { throw bad("field 'format' is '\(format.prefix(40))', expected '\(Self.formatName)'") }
        guard ArchiveManifest.isSafeName(collection) else { throw bad("field 'collection' is not a safe name") }
        guard sequence >= 1, sequence <= CollectionManifest.maxSequence else {
            throw bad("field 'sequence' must be from 1 to \(CollectionManifest.maxSequence)")
        }
        guard deployments.count <= 64, rules.count <= 256 else { throw bad("at most 64 deployments and 256 rules") }
        for (name, d) in deployments {
            guard ArchiveManifest.isSafeName(name) else { throw bad("deployment name '\(name.prefix(40))' is not a safe name") }
            guard !d.entries.isEmpty, d.entries.count <= 64 else { throw bad("deployments.\(name): 1 … 64 entries") }
            for (entry, e) in d.entries {
                let at = "deployments.\(name).entries.\(entry)"
                guard ArchiveManifest.isSafeName(entry) else { throw bad("\(at): not a safe entry name") }
                guard Hex.isHex(e.sha256, bytes: 32), e.sha256 == e.sha256.lowercased() else { throw bad("\(at).sha256 is not 64 lowercase hex digits") }
                guard e.archive == Self.archivePath(sha256: e.sha256) else { throw bad("\(at).archive must be '\(Self.archivePath(sha256: e.sha256))'") }
                guard e.size > 0, e.size <= Int(2 << 30) else { throw bad("\(at).size \(e.size) is out of range") }
                guard ["tflite", "onnx", "metaltensor"].contains(e.modelFormat) else { throw bad("\(at).modelFormat is not tflite, onnx or metaltensor") }
                if let k = e.keyID, !TeamKey.isValidID(k) { throw bad("\(at).keyId is not 16 lowercase hex digits") }
            }
        }
        for (i, r) in rules.enumerated() {
            guard deployments[r.deployment] != nil else { throw bad("rules[\(i)] names deployment '\(r.deployment.prefix(40))', which does not exist") }
            if let problem = r.problem { throw bad("rules[\(i)]: \(problem)") }
        }
        if let d = defaultDeployment, deployments[d] == nil { throw bad("field 'defaultDeployment' names '\(d.prefix(40))', which does not exist") }
    }

    /// Parses and validates a manifest's bytes.
    public static func parse(_ data: Data, name: String) throws -> CollectionManifest {
        guard data.count <= maxBytes else { throw DeploymentError.invalidFile(path: name, reason: "over \(maxBytes) bytes") }
        let m = try JSONFile.decode(CollectionManifest.self, from: data, name: name)
        try m.validate(name: name)
        return m
    }
}

/// The detached signature of a manifest (`index.json.sig`): Ed25519 over the exact bytes of `index.json`.
public struct ManifestSignature: Codable, Sendable {
    public static let formatName = "framegraph-signature-1"
    public var format = ManifestSignature.formatName
    public var algorithm = "ed25519"
    public var publicKey: String
    public var signature: String

    /// Signs `manifest` bytes.
    public static func sign(_ manifest: Data, with key: PublisherKey) throws -> ManifestSignature {
        ManifestSignature(publicKey: key.publicKeyHex, signature: Hex.encode(try Crypto.sign([UInt8](manifest), privateKey: key.privateKey)))
    }

    /// Checks `manifest` bytes against this signature and the publisher key the machine trusts.
    public static func verify(manifest: Data, signature data: Data, trustedKey: String, collection: String) throws {
        let s: ManifestSignature
        do { s = try JSONFile.decode(ManifestSignature.self, from: data.prefix(4096), name: "index.json.sig") } catch {
            throw DeploymentError.badSignature(collection: collection, reason: "index.json.sig is not a signature file")
        }
        guard s.format == formatName, s.algorithm == "ed25519" else {
            throw DeploymentError.badSignature(collection: collection, reason: "unknown signature format or algorithm")
        }
        guard s.publicKey.lowercased() == trustedKey.lowercased() else {
            throw DeploymentError.badSignature(collection: collection, reason: "signed by key \(s.publicKey.prefix(16))…, not the publisher key \(trustedKey.prefix(16))… that is trusted")
        }
        guard let key = Hex.decode(trustedKey), let sig = Hex.decode(s.signature),
              Crypto.verify([UInt8](manifest), signature: sig, publicKey: key) else {
            throw DeploymentError.badSignature(collection: collection, reason: "the signature does not match index.json (altered after signing?)")
        }
    }
}
