import Foundation

/// A team's model key: 256 bits for AES-256-GCM and an id that archives name (`keyId`), so a
/// machine knows which key to fetch. `framegraph model key new -o team.fgkey` makes one (mode 0600).
public struct TeamKey: Sendable, Equatable {
    /// 16 hex digits, random.
    public let id: String
    /// 32 bytes.
    public let key: [UInt8]

    public init(id: String, key: [UInt8]) throws {
        guard TeamKey.isValidID(id) else { throw DeploymentError.usage("a team key id is 16 hex digits, got '\(id.prefix(40))'") }
        guard key.count == 32 else { throw DeploymentError.usage("a team key is 32 bytes, got \(key.count)") }
        self.id = id
        self.key = key
    }

    /// A new random key.
    public static func generate() throws -> TeamKey {
        try TeamKey(id: Hex.encode(try Crypto.randomBytes(8)), key: try Crypto.randomBytes(32))
    }

    public static func isValidID(_ id: String) -> Bool { Hex.isHex(id, bytes: 8) && id == id.lowercased() }

    struct File: Codable {
        var format: String
        var id: String
        var key: String
    }

    static let fileFormat = "framegraph-team-key-1"

    /// The key file's JSON.
    public func fileData() throws -> Data { try JSONFile.encode(File(format: Self.fileFormat, id: id, key: Hex.encode(key))) }

    /// Parses a key file's (or a key service answer's) JSON; `name` names it in errors.
    public init(data: Data, name: String) throws {
        let file = try JSONFile.decode(File.self, from: data, name: name)
        guard file.format == Self.fileFormat else {
            throw DeploymentError.invalidFile(path: name, reason: "field 'format' is '\(file.format.prefix(40))', expected '\(Self.fileFormat)'")
        }
        guard TeamKey.isValidID(file.id) else { throw DeploymentError.invalidFile(path: name, reason: "field 'id' is not 16 lowercase hex digits") }
        guard let key = Hex.decode(file.key), key.count == 32 else {
            throw DeploymentError.invalidFile(path: name, reason: "field 'key' is not 64 hex digits")
        }
        try self.init(id: file.id, key: key)
    }

    /// Reads a key file.
    public init(path: String) throws { try self.init(data: try JSONFile.read(path, maxBytes: 4096), name: path) }

    /// Writes a new key file readable by its owner only; refuses to replace a file.
    public func write(to path: String) throws {
        try JSONFile.requireAbsent(path)
        try JSONFile.writeAtomically(try fileData(), to: path, mode: 0o600, replacing: false)
    }
}

/// The publisher's Ed25519 signing key. The private half signs every collection manifest; machines
/// hold only the public half (in their machine config), so a machine — or anyone who copies its
/// files — cannot sign a release. (An HMAC key would have to be on every machine to check a
/// signature, and then any machine could forge one.)
public struct PublisherKey: Sendable {
    public let privateKey: [UInt8]
    public let publicKey: [UInt8]

    public static func generate() throws -> PublisherKey {
        let pair = try Crypto.ed25519KeyPair()
        return PublisherKey(privateKey: pair.privateKey, publicKey: pair.publicKey)
    }

    private init(privateKey: [UInt8], publicKey: [UInt8]) {
        self.privateKey = privateKey
        self.publicKey = publicKey
    }

    struct File: Codable {
        var format: String
        var privateKey: String
        var publicKey: String
    }

    static let fileFormat = "framegraph-publisher-key-1"

    /// Reads a signing key file (checks that its halves belong together).
    public init(path: String) throws {
        let file = try JSONFile.decode(File.self, from: try JSONFile.read(path, maxBytes: 4096), name: path)
        guard file.format == Self.fileFormat else {
            throw DeploymentError.invalidFile(path: path, reason: "field 'format' is '\(file.format.prefix(40))', expected '\(Self.fileFormat)' (a publisher signing key)")
        }
        guard let priv = Hex.decode(file.privateKey), priv.count == 32 else {
            throw DeploymentError.invalidFile(path: path, reason: "field 'privateKey' is not 64 hex digits")
        }
        let pub = try Crypto.ed25519PublicKey(of: priv)
        guard Hex.encode(pub) == file.publicKey.lowercased() else {
            throw DeploymentError.invalidFile(path: path, reason: "field 'publicKey' does not belong to the private key")
        }
        self.init(privateKey: priv, publicKey: pub)
    }

    /// Writes the key (mode 0600); refuses to replace a file.
    public func write(to path: String) throws {
        try JSONFile.requireAbsent(path)
        try JSONFile.writeAtomically(try JSONFile.encode(File(format: Self.fileFormat, privateKey: Hex.encode(privateKey), publicKey: Hex.encode(publicKey))),
                                     to: path, mode: 0o600, replacing: false)
    }

    public var publicKeyHex: String { Hex.encode(publicKey) }
}
