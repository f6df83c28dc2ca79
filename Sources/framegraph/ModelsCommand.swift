import Foundation
import FrameGraph
import FrameGraphModels
import ModelDeployment
import NeuralGraph

/// The machine side of model deployment: `framegraph models list|pull|status|clear`.
struct ModelsCommand {
    let arguments: Arguments

    static let usage = "usage: framegraph models list | pull COLLECTION… | status [COLLECTION…] | clear [--keys]; each with [--machine-config FILE]"

    func execute() throws -> Int32 {
        let w = Array(arguments.positional.dropFirst())
        guard let verb = w.first else { throw Arguments.UsageError(description: Self.usage) }
        var models = ModelService.Configuration.standard()
        models.machineConfigPath = arguments.value("machine-config")
        models.isCancelled = { Interrupts.shared.interrupted }
        let config = try ModelService(models).machineConfigForPull()
        let cache = ModelCache(root: config.cachePath)
        switch verb {
        case "list":
            let collections = cache.collections()
            if collections.isEmpty { print("no collections in \(cache.root)") }
            for c in collections {
                guard let a = try cache.withLock(exclusive: false, { try cache.active(c) }) else {
                    print("\(c): nothing complete yet")
                    continue
                }
                print("\(c): deployment \(a.deployment) (sequence \(a.sequence), \(a.reason)), since \(a.activated)")
                for (entry, e) in a.entries.sorted(by: { $0.key < $1.key }) {
                    print("  \(entry): \(e.modelFormat) \(e.version), \(e.size) bytes\(e.keyID != nil ? ", encrypted" : "")\(cache.hasArchive(sha256: e.sha256) ? "" : ", MISSING from the cache")")
                }
            }
            return 0
        case "pull":
            guard w.count >= 2 else { throw Arguments.UsageError(description: "usage: framegraph models pull COLLECTION… [--machine-config FILE]") }
            // A foreground download: only the metered-network condition applies.
            try ModelDownloadConditions(config: config).check(config: config, background: false)
            let showBar = !arguments.has("quiet") && isatty(STDERR_FILENO) == 1
            var allReady = true
            for collection in w.dropFirst() {
                let bar = ProgressBar(enabled: showBar)
                let outcome = try CollectionUpdater(config: config).update(collection) { entry, p in bar.show(entry, p) }
                bar.finish()
                let a = outcome.active
                // Ready means it opens here: every entry read, checked and decrypted (its team key
                // fetched and checked against it) now, not at a pipeline's first frame.
                var problems: [String] = []
                for entry in a.entries.keys.sorted() {
                    do {
                        let opened = try ModelReference.resolveCollection(collection, entry: entry, config: config)
                        MemoryModelFiles.remove(folder: opened.memoryFolder)
                    } catch {
                        problems.append("\(entry): \(FrameGraph.describe(error))")
                    }
                }
                if !problems.isEmpty {
                    allReady = false
                    print("\(collection): deployment \(a.deployment) (sequence \(a.sequence)) downloaded (\(outcome.downloadedBytes) bytes) but NOT ready on this machine: "
                          + problems.joined(separator: "; "))
                } else if outcome.changed {
                    print("\(collection): deployment \(a.deployment) (sequence \(a.sequence), \(a.reason)) ready, \(outcome.downloadedBytes) bytes downloaded; "
                          + "pipelines use it from their next launch")
                } else if outcome.downloadedBytes > 0 {
                    print("\(collection): deployment \(a.deployment) (sequence \(a.sequence)) repaired: \(outcome.downloadedBytes) bytes downloaded again")
                } else {
                    print("\(collection): up to date and ready (deployment \(a.deployment), sequence \(a.sequence))")
                }
            }
            return allReady ? 0 : 1
        case "status":
            let updater = CollectionUpdater(config: config)
            print("machine: \(updater.machine.summary)")
            print("server: \(config.server)")
            print("cache: \(cache.root)")
            let names = w.count > 1 ? Array(w.dropFirst()) : cache.collections()
            for c in names {
                let active = try? cache.withLock(exclusive: false, { try cache.active(c) })
                let here = active.map { "deployment \($0.deployment) (sequence \($0.sequence))" } ?? "nothing downloaded"
                do {
                    let (m, _, _) = try updater.fetchManifest(c)
                    let pick = m.deployment(for: updater.machine)
                    let behind = active == nil || active?.sequence != m.sequence || active?.deployment != pick?.name
                    print("\(c): here \(here); server sequence \(m.sequence) gives this machine \(pick.map { "\($0.name) by \($0.reason)" } ?? "nothing")"
                          + (behind ? " — run `framegraph models pull \(c)`" : " — up to date"))
                } catch {
                    print("\(c): here \(here); server: \(error)")
                }
            }
            return 0
        case "clear":
            let kept = try cache.clear(keys: arguments.has("keys"))
            print("cleared \(cache.root)\(arguments.has("keys") ? " (team keys too)" : " (team keys kept; --keys removes them)")")
            if !kept.isEmpty {
                print("left \(kept.count) file\(kept.count == 1 ? "" : "s") the cache did not make: \(kept.prefix(5).joined(separator: ", "))\(kept.count > 5 ? ", …" : "")")
            }
            return 0
        default:
            throw Arguments.UsageError(description: Self.usage)
        }
    }
}

/// A download's progress on a terminal: `FlowerClassifier  [#######.....]  1.2/3.4 MiB  5.6 MiB/s  ETA 0:01`.
final class ProgressBar: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var last = Date.distantPast

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ label: String, _ p: HTTPClient.Progress) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        guard Date().timeIntervalSince(last) > 0.1 || p.bytes == p.total else { return }
        last = Date()
        let total = Double(p.total ?? max(1, p.bytes)), fraction = min(1, Double(p.bytes) / max(1, total))
        let filled = Int(fraction * 24)
        let eta = p.secondsLeft.map { String(format: "%d:%02d", Int($0) / 60, Int($0) % 60) } ?? "?"
        let line = String(format: "%@  [%@%@]  %.1f/%.1f MiB  %.1f MiB/s  ETA %@", label, String(repeating: "#", count: filled),
                          String(repeating: ".", count: 24 - filled), Double(p.bytes) / 1_048_576, total / 1_048_576, p.bytesPerSecond / 1_048_576, eta)
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
