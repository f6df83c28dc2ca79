import CModelDeployment
import Foundation

/// SHA-256, AES-256-GCM, Ed25519 and random bytes from OpenSSL's libcrypto (thin wrappers over
/// CModelDeployment; no C pointer leaves this file).
public enum Crypto {
    /// `count` cryptographically strong random bytes.
    public static func randomBytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard fg_random_bytes(&out, count) == 0 else { throw DeploymentError.usage("the system's random generator failed") }
        return out
    }

    /// SHA-256 of `bytes`, as 64 lowercase hex digits.
    public static func sha256(_ bytes: some ContiguousBytes) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { raw in
            _ = fg_sha256(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, &digest)
        }
        return Hex.encode(digest)
    }

    /// SHA-256 of a file read in pieces (never whole into memory), nil when it cannot be read.
    public static func sha256(fileAt path: String) -> String? {
        let hasher = SHA256Stream()
        guard hasher.update(fileAt: path) != nil else { return nil }
        return hasher.finish()
    }

    /// AES-256-GCM: the ciphertext (same length as `plain`) and the 16-byte tag; `aad` is authenticated.
    public static func seal(_ plain: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        precondition(key.count == 32 && nonce.count == 12)
        var out = [UInt8](repeating: 0, count: plain.count), tag = [UInt8](repeating: 0, count: 16)
        guard fg_aes256gcm_seal(key, nonce, aad, aad.count, plain, plain.count, &out, &tag) == 0 else {
            throw DeploymentError.usage("AES-256-GCM encryption failed in libcrypto")
        }
        return (out, tag)
    }

    /// AES-256-GCM: the plaintext, or nil when authentication fails (wrong key, altered bytes).
    public static func open(_ ciphertext: ArraySlice<UInt8>, tag: [UInt8], key: [UInt8], nonce: [UInt8], aad: ArraySlice<UInt8>) throws -> [UInt8]? {
        precondition(key.count == 32 && nonce.count == 12 && tag.count == 16)
        var out = [UInt8](repeating: 0, count: ciphertext.count)
        let result = ciphertext.withUnsafeBufferPointer { c in
            aad.withUnsafeBufferPointer { a in
                fg_aes256gcm_open(key, nonce, a.baseAddress, a.count, c.baseAddress, c.count, tag, &out)
            }
        }
        switch result {
        case 0: return out
        case 1:
            out.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }  // never keep unauthenticated bytes
            return nil
        default: throw DeploymentError.usage("AES-256-GCM decryption failed in libcrypto")
        }
    }

    /// A new Ed25519 key pair (private, public), 32 bytes each.
    public static func ed25519KeyPair() throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
        var priv = [UInt8](repeating: 0, count: 32), pub = [UInt8](repeating: 0, count: 32)
        guard fg_ed25519_keypair(&priv, &pub) == 0 else { throw DeploymentError.usage("Ed25519 key generation failed in libcrypto") }
        return (priv, pub)
    }

    /// The public key of an Ed25519 private key.
    public static func ed25519PublicKey(of privateKey: [UInt8]) throws -> [UInt8] {
        precondition(privateKey.count == 32)
        var pub = [UInt8](repeating: 0, count: 32)
        guard fg_ed25519_public(privateKey, &pub) == 0 else { throw DeploymentError.usage("not an Ed25519 private key") }
        return pub
    }

    /// The Ed25519 signature (64 bytes) of `message`.
    public static func sign(_ message: [UInt8], privateKey: [UInt8]) throws -> [UInt8] {
        precondition(privateKey.count == 32)
        var signature = [UInt8](repeating: 0, count: 64)
        guard fg_ed25519_sign(privateKey, message, message.count, &signature) == 0 else {
            throw DeploymentError.usage("Ed25519 signing failed in libcrypto")
        }
        return signature
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by `publicKey`.
    public static func verify(_ message: [UInt8], signature: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        return fg_ed25519_verify(publicKey, message, message.count, signature) == 1
    }
}

/// An incremental SHA-256 (downloads are hashed as they arrive).
public final class SHA256Stream {
    /// The C state (the download path hashes into it directly).
    private(set) var state: OpaquePointer?

    public init() { state = fg_sha256_begin() }
    deinit { fg_sha256_free(state) }

    public func update(_ bytes: some ContiguousBytes) {
        guard let state else { return }
        bytes.withUnsafeBytes { raw in _ = fg_sha256_update(state, raw.bindMemory(to: UInt8.self).baseAddress, raw.count) }
    }

    /// Feeds a file's bytes, read in 1 MiB pieces; returns how many, nil when it cannot be read.
    @discardableResult
    public func update(fileAt path: String) -> Int64? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var count: Int64 = 0
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: 1 << 20) } catch { return nil }
            guard let chunk, !chunk.isEmpty else { return count }  // nil or empty at the end
            update(chunk)
            count += Int64(chunk.count)
        }
    }

    /// The digest as hex; the stream cannot be used afterwards.
    public func finish() -> String? {
        guard let state else { return nil }
        self.state = nil
        var digest = [UInt8](repeating: 0, count: 32)
        return fg_sha256_end(state, &digest) == 0 ? Hex.encode(digest) : nil
    }
}

/// Lowercase hexadecimal text of bytes, and back (strictly: even length, hex digits only).
public enum Hex {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// Whether `text` is exactly `bytes` bytes of hex.
    public static func isHex(_ text: String, bytes: Int) -> Bool { text.utf8.count == 2 * bytes && decode(text) != nil }
}
