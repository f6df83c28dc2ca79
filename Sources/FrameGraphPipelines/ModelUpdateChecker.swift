import Foundation
import FrameGraph
import Synchronization
import FrameGraphModels
import FrameGraphServe
import ModelDeployment

/// During a run (`framegraph run`, or a program's through the C library): checks the collections
/// the pipeline's network nodes use, at the start and every `--update-interval` seconds. A newer deployment is downloaded in the background (when
/// the machine's download conditions allow) and, as Core ML does, used from the next launch; with
/// `--hot-swap` the nodes switch to it at a frame boundary.
public final class ModelUpdateChecker: @unchecked Sendable {
    private let nodes: [any HotSwappableModelUser]
    private let models: ModelService
    private let interval: Double?
    private let hotSwap: Bool
    private let warn: @Sendable (String) -> Void
    private let onSwap: @Sendable (Swap) -> Void
    private let stopped = NSCondition()
    /// Set when the run has ended and the grace for a download in progress has passed: the download
    /// stops (its partial file is kept, and resumed by the next update).
    private let cancelled = Atomic<Bool>(false)
    private var isStopped = false
    private var thread: Thread?

    /// A node staged to switch models (it switches at its next frame boundary).
    public struct Swap: Sendable {
        public var node: String
        public var collection: String
        public var deployment: String
        public var sequence: Int
    }

    /// `warn` gets each line to tell the user; `onSwap` each staged switch (`--serve`'s event stream).
    public init(users: [any HotSwappableModelUser], models: ModelService, interval: Double?, hotSwap: Bool, warn: @escaping @Sendable (String) -> Void,
         onSwap: @escaping @Sendable (Swap) -> Void = { _ in }) {
        self.nodes = users.filter { $0.modelReferences.contains(where: ModelReference.isCollection) }
        self.models = models
        self.interval = interval
        self.hotSwap = hotSwap
        self.warn = warn
        self.onSwap = onSwap
    }

    /// A checker that reports as `framegraph run` does: each line on standard error and, with a
    /// monitor (`--serve`), as a "model" event on its event stream; each staged switch as a "swap"
    /// event. The CLI and the C library both make theirs this way.
    public convenience init(users: [any HotSwappableModelUser], models: ModelService, interval: Double?, hotSwap: Bool, monitor: RunMonitor?) {
        self.init(users: users, models: models, interval: interval, hotSwap: hotSwap,
                  warn: { [weak monitor] line in
                      FileHandle.standardError.write(Data("framegraph: \(line)\n".utf8))
                      monitor?.event(["event": "model", "message": line])
                  },
                  onSwap: { [weak monitor] swap in
                      monitor?.event(["event": "swap", "node": swap.node, "collection": swap.collection,
                                      "deployment": swap.deployment, "sequence": swap.sequence])
                  })
    }

    /// The collection entries in use.
    private var entries: [(collection: String, entry: String)] {
        nodes.flatMap { $0.modelReferences.filter(ModelReference.isCollection).compactMap { try? ModelReference.parse($0) } }
    }

    /// Whether any of the nodes uses a hosted collection (else there is nothing to check).
    public var hasCollections: Bool { !nodes.isEmpty }

    /// Starts the checks on a thread of their own (nothing when no node uses a collection).
    public func start() {
        guard !nodes.isEmpty else { return }
        let t = Thread { [self] in run() }
        t.name = "model updates"
        thread = t
        t.start()
    }

    private var finished = false

    /// Ends the checks; a download in progress gets `wait` seconds to finish (so that the next
    /// launch finds the deployment complete), then it is stopped.
    public func stop(wait: Double = 5) {
        stopped.lock()
        isStopped = true
        stopped.broadcast()
        let deadline = Date().addingTimeInterval(wait)
        let quietUntil = Date().addingTimeInterval(0.5)
        var said = false
        while thread != nil && !finished && Date() < deadline {
            if !said && Date() >= quietUntil {
                said = true
                warn("finishing the model download in progress (the next launch uses it)")
            }
            _ = stopped.wait(until: min(deadline, Date().addingTimeInterval(0.5)))
        }
        if thread != nil && !finished {
            cancelled.store(true, ordering: .relaxed)
            warn("the model download in progress is stopped (it resumes at the next update)")
            // The download notices within a second; the thread then ends on its own.
            let end = Date().addingTimeInterval(3)
            while !finished && Date() < end { _ = stopped.wait(until: Date().addingTimeInterval(0.2)) }
        }
        stopped.unlock()
    }

    private func run() {
        defer {
            stopped.lock()
            finished = true
            stopped.broadcast()
            stopped.unlock()
        }
        guard var config = try? models.machineConfig() else { return }
        let session = config.session
        config.session = DownloadSession(isCancelled: { [weak self] in (self?.cancelled.load(ordering: .relaxed) ?? true) || session.isCancelled() })
        let conditions = ModelDownloadConditions(config: config)
        let collections = Array(Set(entries.map(\.collection))).sorted()
        var announced: Set<String> = []
        while true {
            for collection in collections where !isStoppedNow() {
                check(collection, config: config, conditions: conditions, announced: &announced)
            }
            guard let interval else { return }
            stopped.lock()
            let deadline = Date().addingTimeInterval(interval)
            while !isStopped && Date() < deadline { _ = stopped.wait(until: deadline) }
            let end = isStopped
            stopped.unlock()
            if end { return }
        }
    }

    private func isStoppedNow() -> Bool {
        stopped.lock()
        defer { stopped.unlock() }
        return isStopped
    }

    private func check(_ collection: String, config: MachineConfig, conditions: ModelDownloadConditions, announced: inout Set<String>) {
        let updater = CollectionUpdater(config: config)
        if (try? conditions.check(config: config, background: true)) == nil {
            if let (m, _, _) = try? updater.fetchManifest(collection), let active = try? updater.cache.active(collection), m.sequence > active.sequence,
               announced.insert("\(collection)#\(m.sequence)").inserted {
                warn("collection \(collection): sequence \(m.sequence) is published; the download conditions do not allow a background download (run `framegraph models pull \(collection)`)")
            }
            return
        }
        do {
            let outcome = try updater.update(collection)
            guard outcome.changed else { return }
            let a = outcome.active
            if !hotSwap {
                warn("collection \(collection): deployment \(a.deployment) (sequence \(a.sequence)) downloaded; it is used from the next launch (or now with --hot-swap)")
                return
            }
            for node in nodes {
                // Only nodes whose own entry changed switch.
                for (c, entry) in entries where c == collection && node.uses(collection: c, entry: entry)
                    && outcome.previous?.entries[entry]?.sha256 != a.entries[entry]?.sha256 {
                    do {
                        let resolved = try models.resolveCollection(collection, entry: entry)
                        try node.stageSwap(to: resolved)
                        onSwap(Swap(node: node.name, collection: collection, deployment: "\(a.deployment)", sequence: Int(a.sequence)))
                    } catch {
                        warn("node '\(node.name)': could not switch to deployment \(a.deployment) of \(collection): \(FrameGraph.describe(error)); it keeps its model")
                    }
                }
            }
        } catch {
            if announced.insert("error:\(collection):\(error)").inserted {
                warn("collection \(collection): update check failed: \(FrameGraph.describe(error)); the pipeline keeps its model")
            }
        }
    }
}
