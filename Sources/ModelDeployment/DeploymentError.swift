import Foundation

/// What went wrong while publishing, fetching, verifying or opening a deployed model, in words a
/// user can act on (each names the file, URL, entry or field).
public enum DeploymentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file given by the user (key, archive, manifest, machine config) is not what it should be.
    case invalidFile(path: String, reason: String)
    /// A model archive is damaged or not an archive (with the byte offset when known).
    case invalidArchive(name: String, reason: String, offset: Int?)
    /// An encrypted archive or its header failed authentication (wrong key, or tampered with).
    case authenticationFailed(name: String)
    /// A collection's manifest is not signed by the configured publisher (or was changed after signing).
    case badSignature(collection: String, reason: String)
    /// The server offered an older manifest than the one this machine already accepted.
    case staleManifest(collection: String, offered: Int, accepted: Int)
    /// Downloaded bytes do not have the SHA-256 the signed manifest gives.
    case digestMismatch(what: String, expected: String, got: String)
    /// An HTTP(S) transfer failed (after its retries).
    case download(url: String, reason: String)
    /// Something named does not exist (a collection, an entry, a deployment, a model in the cache).
    case notFound(String)
    /// A command's arguments are wrong.
    case usage(String)
    /// The download conditions forbid downloading now (metered network, background).
    case conditionsNotMet(String)

    public var description: String {
        switch self {
        case .invalidFile(let path, let reason): return "\(path): \(reason)"
        case .invalidArchive(let name, let reason, let offset):
            return "\(name): not a valid model archive: \(reason)" + (offset.map { " (at byte \($0))" } ?? "")
        case .authenticationFailed(let name):
            return "\(name): the archive failed authentication (the wrong team key, or the archive was altered); it was not loaded"
        case .badSignature(let collection, let reason):
            return "collection '\(collection)': the manifest's signature is not valid (\(reason)); nothing from it was used"
        case .staleManifest(let collection, let offered, let accepted):
            return "collection '\(collection)': the server offers manifest sequence \(offered), older than the \(accepted) already accepted; kept the newer one"
        case .digestMismatch(let what, let expected, let got):
            return "\(what): SHA-256 \(got.prefix(16))… does not match the manifest's \(expected.prefix(16))…; the file was discarded"
        case .download(let url, let reason): return "downloading \(url): \(reason)"
        case .notFound(let what): return what
        case .usage(let message): return message
        case .conditionsNotMet(let message): return message
        }
    }
}
