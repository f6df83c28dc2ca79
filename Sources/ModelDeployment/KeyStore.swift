import Foundation
import NeuralGraph

/// Team keys on this machine (`CACHE/keystore.json`, mode 0600): fetched once from the key service
/// (HTTPS, the machine's bearer token), then used without the network.
public struct KeyStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    struct File: Codable { var format = "framegraph-keystore-1"; var keys: [String: String] }

    /// The stored key with this id, nil when there is none.
    public func key(id: String) -> TeamKey? {
        guard let data = try? JSONFile.read(path, maxBytes: 1 << 20),
              let file = try? JSONDecoder().decode(File.self, from: data),
              let hex = file.keys[id], let bytes = Hex.decode(hex) else { return nil }
        return try? TeamKey(id: id, key: bytes)
    }

    /// Adds a key (the file stays 0600). Two processes adding keys at once take turns (flock), so
    /// neither loses the other's key.
    public func store(_ key: TeamKey) throws {
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw DeploymentError.invalidFile(path: path + ".lock", reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(lock, LOCK_UN) }
        var file = (try? JSONFile.read(path, maxBytes: 1 << 20)).flatMap { try? JSONDecoder().decode(File.self, from: $0) } ?? File(keys: [:])
        file.keys[key.id] = Hex.encode(key.key)
        try JSONFile.writeAtomically(try JSONFile.encode(file), to: path, mode: 0o600)
    }

    /// The key `id`: from the store, else fetched from the key service and stored. `opens` checks a
    /// key against the archive it is for (decrypting it): a stored key that fails is fetched again
    /// (and replaced), and a fetched key that fails is not stored. A failure is `ModelError.keyFetch`.
    public func key(id: String, config: MachineConfig, client: HTTPClient, opens: ((TeamKey) -> Bool)? = nil) throws -> TeamKey {
        if let k = key(id: id), opens?(k) ?? true { return k }
        guard let service = config.keyService else {
            throw ModelError.keyFetch(keyID: id, reason: "the machine config has no keyService")
        }
        let data: Data
        do {
            data = try client.fetch(service.url + id, maxBytes: 4096, bearer: service.token)
        } catch let DeploymentError.download(url, reason) {
            throw ModelError.keyFetch(keyID: id, reason: "\(url): \(reason)")
        }
        let key: TeamKey
        do { key = try TeamKey(data: data, name: "the key service's answer") } catch {
            throw ModelError.keyFetch(keyID: id, reason: "the key service's answer is not a team key (\(error))")
        }
        guard key.id == id else { throw ModelError.keyFetch(keyID: id, reason: "the key service sent key '\(key.id)'") }
        if let opens, !opens(key) {
            throw ModelError.keyFetch(keyID: id, reason: "the key service's key does not open the archive (authentication failed); it was not stored")
        }
        try store(key)
        return key
    }
}
