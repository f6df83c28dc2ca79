import Foundation
import Synchronization

/// A model hosted in a collection, in the shape of ML Kit's `CustomRemoteModel`.
public struct RemoteModel: Sendable, Hashable, CustomStringConvertible {
    public let collection: String
    public let entry: String

    public init(collection: String, entry: String) {
        self.collection = collection
        self.entry = entry
    }

    /// From `collection:NAME/ENTRY`.
    public init(reference: String) throws {
        let (c, e) = try ModelReference.parse(reference)
        self.init(collection: c, entry: e)
    }

    public var description: String { "\(ModelReference.collectionPrefix)\(collection)/\(entry)" }
}

/// When a download may happen (ML Kit's `ModelDownloadConditions`).
public struct ModelDownloadConditions: Sendable, Equatable {
    /// Download over a metered connection (NetworkManager says so, or the machine config's
    /// `meteredNetwork` when NetworkManager is absent).
    public var allowsMeteredNetwork: Bool
    /// Download while a pipeline runs (updates in the background); `framegraph models pull` is a
    /// foreground download and ignores it.
    public var allowsBackgroundDownloading: Bool

    public init(allowsMeteredNetwork: Bool = false, allowsBackgroundDownloading: Bool = true) {
        self.allowsMeteredNetwork = allowsMeteredNetwork
        self.allowsBackgroundDownloading = allowsBackgroundDownloading
    }

    /// The machine config's conditions.
    public init(config: MachineConfig) {
        self.init(allowsMeteredNetwork: config.allowMeteredDownloads ?? false, allowsBackgroundDownloading: config.allowBackgroundDownloads ?? true)
    }

    /// Throws ``DeploymentError/conditionsNotMet(_:)`` when a download may not happen now.
    public func check(config: MachineConfig, background: Bool) throws {
        if background && !allowsBackgroundDownloading {
            throw DeploymentError.conditionsNotMet("background downloading is not allowed (allowBackgroundDownloads)")
        }
        if !allowsMeteredNetwork && NetworkMonitor.isMetered(config: config) {
            throw DeploymentError.conditionsNotMet("the network is metered and metered downloads are not allowed (allowMeteredDownloads)")
        }
    }
}

/// What a download reports.
public enum ModelDownloadEvent: Sendable, Equatable {
    /// Bytes so far, rate and time left of one archive of the collection.
    case progress(RemoteModel, archive: String, HTTPClient.Progress)
    /// The model's collection is complete in the cache (`deployment` is active).
    case downloadDidSucceed(RemoteModel, deployment: String, sequence: Int)
    case downloadDidFail(RemoteModel, DeploymentError)
}

/// Downloads hosted models and says whether they are here (ML Kit's `ModelManager`): events as an
/// `AsyncStream` per download, and to every observer.
public final class ModelManager: Sendable {
    public let configuration: MachineConfig
    private let observers = Mutex<[Int: @Sendable (ModelDownloadEvent) -> Void]>([:])
    private let nextToken = Atomic<Int>(1)

    public init(configuration: MachineConfig) { self.configuration = configuration }

    /// Whether the active deployment of the model's collection has it, with its archive in the cache.
    public func isModelDownloaded(_ model: RemoteModel) -> Bool {
        let cache = ModelCache(root: configuration.cachePath)
        guard let active = try? cache.withLock(exclusive: false, { try cache.active(model.collection) }),
              let e = active.entries[model.entry] else { return false }
        return cache.hasArchive(sha256: e.sha256)
    }

    /// Registers `observer` for every download's events; returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (ModelDownloadEvent) -> Void) -> Int {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        observers.withLock { $0[token] = observer }
        return token
    }

    public func removeObserver(_ token: Int) { observers.withLock { $0[token] = nil } }

    private func notify(_ event: ModelDownloadEvent, _ continuation: AsyncStream<ModelDownloadEvent>.Continuation) {
        continuation.yield(event)
        for o in observers.withLock({ Array($0.values) }) { o(event) }
    }

    /// Downloads the model's collection (all its entries: they are released together) when the
    /// conditions allow; `background` says whether this is a background download.
    public func download(_ model: RemoteModel, conditions: ModelDownloadConditions, background: Bool = false) -> AsyncStream<ModelDownloadEvent> {
        let (stream, continuation) = AsyncStream<ModelDownloadEvent>.makeStream()
        let config = configuration
        Thread.detachNewThread { [self] in
            defer { continuation.finish() }
            do { try conditions.check(config: config, background: background) } catch let error as DeploymentError {
                notify(.downloadDidFail(model, error), continuation)
                return
            } catch {
                return
            }
            do {
                let outcome = try CollectionUpdater(config: config).update(model.collection) { archive, progress in
                    self.notify(.progress(model, archive: archive, progress), continuation)
                }
                guard outcome.active.entries[model.entry] != nil else {
                    notify(.downloadDidFail(model, .notFound("collection '\(model.collection)', deployment '\(outcome.active.deployment)' has no entry '\(model.entry)'")), continuation)
                    return
                }
                notify(.downloadDidSucceed(model, deployment: outcome.active.deployment, sequence: outcome.active.sequence), continuation)
            } catch let error as DeploymentError {
                notify(.downloadDidFail(model, error), continuation)
            } catch {
                notify(.downloadDidFail(model, .usage("\(error)")), continuation)
            }
        }
        return stream
    }
}

/// Whether the network is metered: NetworkManager's answer (`nmcli`) when it runs, else the
/// machine config's `meteredNetwork`.
public enum NetworkMonitor {
    public static func isMetered(config: MachineConfig) -> Bool {
        if let answer = networkManagerSaysMetered() { return answer }
        return config.meteredNetwork ?? false
    }

    /// nil when NetworkManager is not there to ask.
    static func networkManagerSaysMetered() -> Bool? {
        let nmcli = ["/usr/bin/nmcli", "/bin/nmcli"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let nmcli else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nmcli)
        process.arguments = ["-t", "-f", "GENERAL.STATE,GENERAL.METERED", "device", "show"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        // Blocks of "GENERAL.STATE:100 (connected)" then "GENERAL.METERED:yes|no|yes (guessed)|…".
        var connected = false, metered = false
        for line in String(decoding: data.prefix(1 << 20), as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("GENERAL.STATE:") { connected = line.contains("(connected)") }
            if line.hasPrefix("GENERAL.METERED:"), connected, line.dropFirst("GENERAL.METERED:".count).hasPrefix("yes") { metered = true }
        }
        return metered
    }
}
