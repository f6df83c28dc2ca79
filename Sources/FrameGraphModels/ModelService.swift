import Foundation
import MetalTensorImport
import ModelDeployment
import ModelFormats
import NeuralGraph
import Synchronization

/// The one place models come from during a run: it finds a model by name or path along the
/// ``ModelSearchPath``, tells its format by content, opens archives and hosted collections (with
/// their fallback), imports it within the ``ModelLimits`` (size and memory budget), and keeps each
/// imported graph once for every node that uses the same file. Errors are typed
/// (``NeuralGraph/ModelError``: `notFound` with the places searched, `malformed`, `overBudget`,
/// `keyFetch`; ``ModelDeployment/DeploymentError`` for hosted models).
///
/// A run carries one service: the CLI makes it from the command line and the environment (read
/// once, in ``Configuration/standard(pipelineFile:environment:)``) and gives it to every node that
/// loads models (``ModelUser``). A program may make its own:
///
/// ```swift
/// let models = ModelService(.standard(pipelineFile: nil))
/// let path = try models.locate("selfie_segmentation")      // …/models/cache/selfie_segmentation.tflite
/// let graph = try models.graph(at: path)
/// ```
public final class ModelService: Sendable {
    /// What a service is set up with.
    public struct Configuration: Sendable {
        /// Where names are looked for.
        public var searchPath: ModelSearchPath
        /// Bounds every model must fit (file size, memory budget: `--model-budget`).
        public var limits: ModelLimits
        /// The machine config for hosted models (`--machine-config`); nil: `$FRAMEGRAPH_MACHINE_CONFIG`,
        /// else `~/.config/framegraph/machine.json`.
        public var machineConfigPath: String?
        /// The environment the service reads (`FRAMEGRAPH_MACHINE_CONFIG`, `FRAMEGRAPH_MODEL_CACHE`).
        public var environment: [String: String]
        /// Asked during downloads (at least once a second): true stops them (the CLI: Ctrl-C).
        public var isCancelled: @Sendable () -> Bool = { false }

        public init(searchPath: ModelSearchPath, limits: ModelLimits = .standard, machineConfigPath: String? = nil,
                    environment: [String: String] = [:]) {
            self.searchPath = searchPath
            self.limits = limits
            self.machineConfigPath = machineConfigPath
            self.environment = environment
        }

        /// The standard set-up for a pipeline at `pipelineFile` (nil: none), from `environment` (by
        /// default this process's, read here once).
        public static func standard(pipelineFile: String? = nil,
                                    environment: [String: String] = ProcessInfo.processInfo.environment) -> Configuration {
            Configuration(searchPath: .standard(pipelineFile: pipelineFile, environment: environment), environment: environment)
        }
    }

    public let configuration: Configuration
    /// Imported graphs by file identity and import options (a few: the models of one run).
    private let graphs = Mutex<[(key: String, graph: NeuralGraph)]>([])
    private static let cachedGraphs = 8

    public init(_ configuration: Configuration = .standard()) {
        self.configuration = configuration
    }

    public var limits: ModelLimits { configuration.limits }

    /// The same service with other limits (a node's own budget, say).
    public func with(limits: ModelLimits) -> ModelService {
        var c = configuration
        c.limits = limits
        return ModelService(c)
    }

    // MARK: Finding

    /// The file `reference` names: an existing path (on disk or in memory), a relative path tried
    /// below the search path's roots, or a bare name along the search path. `what` names the kind of
    /// file in the error ("model", "labels file").
    public func locate(_ reference: String, what: String = "model") throws(ModelError) -> String {
        if ModelFile.exists(reference) { return reference }
        // A bundle's part (`X.task#part`): the bundle's file.
        let (file, part) = Self.splitPart(reference)
        if part != nil { return try locate(file, what: what) }
        let path = configuration.searchPath
        if reference.contains("/") || Self.hasModelExtension(reference) || reference.hasPrefix(".") {
            var places = ["\(reference) (from the current folder)"]
            if !reference.hasPrefix("/") {
                for root in path.relativeRoots {
                    let candidate = URL(fileURLWithPath: root).appendingPathComponent(reference).standardizedFileURL.path
                    if ModelFile.exists(candidate) { return candidate }
                    places.append("\(candidate) (below \(root))")
                }
            }
            throw ModelError.notFound(reference: reference, places: places, hint: "check the path (a path in a pipeline file is tried from the current folder, then from the pipeline's folder and the one above it)")
        }
        for candidate in path.candidates(for: reference) where ModelFile.exists(candidate) { return candidate }
        let forms = reference.contains(".") ? reference : ModelSearchPath.extensions.map { "\(reference).\($0)" }.joined(separator: ", ") + " or \(reference)/\(reference).*"
        throw ModelError.notFound(reference: reference, places: path.placesText,
                                  hint: "looked for \(forms) in each; add folders with \(ModelSearchPath.variable)=DIR[:DIR…], "
                                      + "or give a path (the shipped models are fetched by scripts/test.sh or installed by scripts/install.sh)")
    }

    /// Like ``locate(_:what:)`` for a file that goes with a model (a labels file, a config plist):
    /// nil when it is nowhere.
    public func locateIfPresent(_ reference: String) -> String? {
        try? locate(reference)
    }

    /// `X.task#part` → (`X.task`, `part`); anything else → (itself, nil).
    static func splitPart(_ reference: String) -> (file: String, part: String?) {
        guard let hash = reference.lastIndex(of: "#"), hash != reference.startIndex else { return (reference, nil) }
        let part = String(reference[reference.index(after: hash)...])
        return part.isEmpty ? (String(reference[..<hash]), nil) : (String(reference[..<hash]), part)
    }

    /// Whether `reference` ends in an extension of a model format (so it is a path, not a name).
    public static func hasModelExtension(_ reference: String) -> Bool {
        let lower = reference.lowercased()
        return ModelSearchPath.extensions.contains { lower.hasSuffix("." + $0) }
    }

    // MARK: Resolving references

    /// Resolves `reference` to a model file: a hosted collection entry (from the cache's active
    /// deployment, downloaded when the cache has none), an archive (decrypted in memory), or a file.
    /// When a collection cannot be had and `fallback` is given, the fallback is used and `warn` says
    /// why, once.
    public func resolve(_ reference: String, fallback: String? = nil, warn: (String) -> Void = { _ in }) throws -> ResolvedModel {
        if ModelReference.isCollection(reference) {
            let (collection, entry) = try ModelReference.parse(reference)
            do {
                // A first use downloads within the machine's first-use deadline (then the fallback).
                let config = try machineConfig()
                return try resolved(ModelReference.resolveCollection(collection, entry: entry,
                                                                     config: config.limited(seconds: config.firstUseDeadlineSeconds ?? 30,
                                                                                            isCancelled: configuration.isCancelled)))
            } catch {
                guard let fallback else { throw error }
                let path = try locate(fallback)
                let why = "\(error)"
                warn("model \(reference): \(why); using the bundled fallback \(fallback)")
                return ResolvedModel(path: path, format: try format(of: path), source: "fallback \(fallback) (\(why))", usedFallback: true)
            }
        }
        // `BUNDLE.task#PART`: one model of a MediaPipe Tasks bundle.
        let (file, part) = Self.splitPart(reference)
        let path = try locate(file)
        let format = try self.format(of: path)
        if format == .archive {
            return try resolved(ModelReference.openArchive(path: path, reference: reference, config: { try self.machineConfig() }))
        }
        if format == .zip {
            let bundle = try ModelBundle(path: path, limits: configuration.limits)
            let name = try bundle.partName(part)
            let folder = MemoryModelFiles.register([name: try bundle.part(name)])
            return ResolvedModel(path: folder + "/" + name, format: try self.format(of: folder + "/" + name),
                                 source: "\(path)#\(name)", memoryFolder: folder)
        }
        if let part { throw ModelError.malformed(file: path, reason: "is a \(format) model, not a bundle: '#\(part)' names nothing", offset: nil) }
        return ResolvedModel(path: path, format: format, source: path)
    }

    /// This machine's model for the collection entry `collection`/`entry` (the cache's active
    /// deployment, downloaded when the cache has none).
    public func resolveCollection(_ collection: String, entry: String) throws -> ResolvedModel {
        try resolved(ModelReference.resolveCollection(collection, entry: entry, config: machineConfig()))
    }

    /// The machine config with the pull deadline and this service's cancellation (`models pull`).
    public func machineConfigForPull() throws -> MachineConfig {
        let config = try machineConfig()
        return config.limited(seconds: config.pullDeadlineSeconds ?? 900, isCancelled: configuration.isCancelled)
    }

    private func resolved(_ opened: ModelReference.Opened) throws -> ResolvedModel {
        do {
            return ResolvedModel(path: opened.path, format: try format(of: opened.path), source: opened.source, collection: opened.collection,
                                 entry: opened.entry, deployment: opened.deployment, sequence: opened.sequence, memoryFolder: opened.memoryFolder)
        } catch {
            MemoryModelFiles.remove(folder: opened.memoryFolder)
            throw error
        }
    }

    /// Forgets the in-memory files of a resolved model (an archive's, a collection's) once no node
    /// uses it.
    public func release(_ model: ResolvedModel) {
        guard let folder = model.memoryFolder else { return }
        MemoryModelFiles.remove(folder: folder)
        graphs.withLock { $0.removeAll { $0.key.hasPrefix(folder + "/") } }
    }

    /// The cache's archive a `collection:NAME/ENTRY` reference loads now (its active deployment's),
    /// nil when there is none (never downloads): a file the run reads.
    public func cachedArchive(for reference: String) -> String? {
        guard let (collection, entry) = try? ModelReference.parse(reference), let config = try? machineConfig() else { return nil }
        let cache = ModelCache(root: config.cachePath)
        guard let active = try? cache.active(collection), let e = active.entries[entry] else { return nil }
        return cache.archivePath(sha256: e.sha256)
    }

    /// The format of the file at `path`, from its first bytes.
    public func format(of path: String) throws(ModelError) -> ModelFormat {
        try ModelFormat.detect(path: path, limits: configuration.limits)
    }

    /// The machine config for hosted models.
    public func machineConfig() throws -> MachineConfig {
        let path = MachineConfig.location(explicit: configuration.machineConfigPath, environment: configuration.environment)
        guard FileManager.default.fileExists(atPath: path) else {
            throw DeploymentError.invalidFile(path: path, reason: "no machine config (it names the model server and the publisher key; see docs/DEPLOYMENT.md)")
        }
        var config = try MachineConfig.load(path: path)
        config.session = DownloadSession(isCancelled: configuration.isCancelled)
        return config
    }

    // MARK: Importing

    /// The graph of the model file at `path`, imported within the limits; a file imported before
    /// with the same options (and unchanged since) is not imported again.
    public func graph(at path: String, metalTensor: MetalTensorImporter.Options = .init()) throws -> NeuralGraph {
        let key = Self.identity(of: path) + "|\(metalTensor)|\(configuration.limits.maxFileBytes)|\(configuration.limits.memoryBudgetBytes)"
        if let hit = graphs.withLock({ $0.first { $0.key == key }?.graph }) { return hit }
        let graph = try ModelImport.load(path: path, limits: configuration.limits, metalTensor: metalTensor)
        graphs.withLock { cache in
            cache.removeAll { $0.key == key }
            cache.append((key, graph))
            if cache.count > Self.cachedGraphs { cache.removeFirst(cache.count - Self.cachedGraphs) }
        }
        return graph
    }

    /// A file's identity for the cache: its path, device, inode, size and change time (a file
    /// replaced or rewritten is another file).
    private static func identity(of path: String) -> String {
        if MemoryModelFiles.isMemoryPath(path) { return path }
        var info = stat()
        guard stat(path, &info) == 0 else { return path + "|?" }
        return "\(path)|\(info.st_dev)|\(info.st_ino)|\(info.st_size)|\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
    }
}
