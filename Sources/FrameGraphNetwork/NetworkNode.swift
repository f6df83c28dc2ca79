import CFrameGraphKernels
import FFmpegSupport
import Foundation
import FrameGraph
import Synchronization
import FrameGraphModels
import MetalTensorImport
import ModelDeployment
import ModelFormats
import NeuralGraph
import XNNPACKRuntime

/// Runs a neural network on each admitted frame, on its own worker thread (drop-while-busy in live
/// mode), and hands the outputs to a decoder that turns them into the node's output frame.
///
/// ```swift
/// let net = NetworkNode(name: "segment", model: "selfie_segmentation",
///                       decoder: SegmentationDecoder(smoothing: 0.3))
/// camera --> net --> matte.port(1)
/// ```
/// The frame is scaled to the model's input size as RGB and normalised (by default as MediaPipe does
/// for its known models, else to 0…1); the model loads and compiles when the graph is validated
/// (``negotiate(inputs:)``), so a bad model is reported before the first frame.
public final class NetworkNode: FilterNode, HotSwappableModelUser, WorkerSharing, @unchecked Sendable {
    /// Settings with their defaults.
    public struct Options: Sendable {
        /// Inference threads. Default 1.
        public var threads = 1
        /// Input normalisation; nil: MediaPipe's for its models, else 0…1 (RGB) or L/50 − 1 (lightness).
        public var normalization: InputNormalization?
        /// What the model sees: RGB (default) or the Lab lightness L (0…100, a colorizer's input).
        public var input: ModelInput.Content = .rgb
        /// How a frame of another shape is fitted to the model's input; a MetalTensor model (.plist)
        /// given `.stretch` is fed as MetalImage does (`.pixelCentres`).
        public var fit: ModelInput.Fit = .stretch
        /// Float32; float16 storage as on an iPhone (MetalTensor models); the dense convolutions in int8.
        public var precision: NetworkPrecision = .float32
        /// MetalTensor models: the weight blob (default: NAME.bin beside the plist).
        public var weights: String?
        /// The model used when a `collection:` model cannot be had (offline, failed verification, no
        /// key): said once in the log and in the stats' `modelSource`.
        public var fallback: String?
        public init(threads: Int = OptionSpecs.threads.defaultValue, normalization: InputNormalization? = nil, input: ModelInput.Content = .rgb,
                    fit: ModelInput.Fit = .stretch, precision: NetworkPrecision = .float32, weights: String? = nil,
                    fallback: String? = nil) {
            self.threads = threads
            self.normalization = normalization
            self.input = input
            self.fit = fit
            self.precision = precision
            self.weights = weights
            self.fallback = fallback
        }
    }

    public let modelReference: String
    public let options: Options
    /// Where the model comes from: the run's model service (search path, limits, hosted models). A
    /// node made in code gets a standard one of its own; a pipeline gives every node the run's.
    public var models = ModelService()
    /// Turns the network's outputs into the node's output (replaced with the model by a hot swap).
    public private(set) var decoder: any OutputDecoder
    private var predictor: Predictor?
    private var input: ModelInput?
    /// Seconds spent importing and compiling the model.
    public private(set) var loadSeconds = 0.0
    /// Where the model came from (set when it loads, or before by a labeler that read its metadata).
    package var resolvedModel: ResolvedModel?
    /// Warnings while loading (a fallback used); default: a line on standard error.
    public var warn: @Sendable (String) -> Void = { FileHandle.standardError.write(Data("framegraph: warning: \($0)\n".utf8)) }
    /// For a labeler: the decoder a swapped-in model needs (its own labels and calibration) and the
    /// input normalisation its metadata asks for.
    package var decoderForModel: (@Sendable (String) throws -> (decoder: any OutputDecoder, normalization: InputNormalization?))?
    private let pendingSwap = Mutex<PendingSwap?>(nil)
    /// What arrives at the node (a swapped-in model's decoder is negotiated with it).
    private var negotiatedInput: FrameDescription?
    private let swaps = Atomic<Int>(0)

    /// The group's model compiled for 2 … ``WorkerGroup/batchLimit`` images (index: images − 2), on
    /// the leader; nil where the batch was not faster per image than single predictions (timed at
    /// validation), empty: one prediction per frame. `batchBase`: the predictor of one image they
    /// were made beside (a member whose model was swapped since runs alone).
    private var batchPredictors: [Predictor?] = []
    /// Per batch size (index: images − 2): milliseconds per image of one batched prediction and of
    /// single predictions, as timed at validation (lower quartiles; the log says them when the
    /// batch is not kept).
    public private(set) var batchTimings: [(images: Int, batched: Double, single: Double)] = []
    /// Tests: keep the compiled batches whatever the timing says (true), or never (false); nil: timed.
    package var keepsBatches: Bool?
    private var batchBase: Predictor?

    /// A model loaded and compiled off the worker, waiting for the next frame boundary.
    private struct PendingSwap: @unchecked Sendable {
        var predictor: Predictor
        var decoder: any OutputDecoder
        var resolved: ResolvedModel
    }

    public init(name: String = "network", model: String, decoder: any OutputDecoder, options: Options = Options()) {
        modelReference = model
        self.decoder = decoder
        self.options = options
        super.init(name: name)
    }

    /// The worker group this node shares with the same node of other streams (nil: a worker of its own).
    public private(set) var workerGroup: WorkerGroup?
    /// The member of the group whose model this node uses (nil: its own).
    private var modelLeader: NetworkNode?

    /// Runs this node on `group`'s worker with `leader`'s predictor: the model is loaded and compiled
    /// once for every stream. Each member keeps its own input preparation and decoder (a decoder's
    /// smoothing is per stream). With a ``WorkerGroup/batchLimit`` over 1 the leader also compiles
    /// the model for batches of 2 … limit images (``NeuralGraph/batched(_:)``), and a turn of several
    /// frames runs as one prediction (``processBatch(_:context:)``); a model that takes no batch runs
    /// one prediction per frame.
    public func join(_ group: WorkerGroup, leader: NetworkNode) {
        workerGroup = group
        modelLeader = leader === self ? nil : leader
    }

    override public var modelSource: String? { resolvedModel?.source }
    public var modelReferences: [String] { [modelReference] + (options.fallback.map { [$0] } ?? []) + (options.weights.map { [$0] } ?? []) }
    override public var modelSwaps: Int { swaps.load(ordering: .relaxed) }

    /// Whether this node's model is the collection entry `collection`/`entry` (hot swaps go to it).
    public func uses(collection: String, entry: String) -> Bool {
        guard ModelReference.isCollection(modelReference), let parsed = try? ModelReference.parse(modelReference) else { return false }
        return parsed.collection == collection && parsed.entry == entry
    }

    /// Loads and compiles `resolved` now (on the caller's thread, while the worker goes on with the
    /// old model) and hands it to the worker, which switches to it before its next frame: the old
    /// predictor finishes its frame, no tick is skipped. The new model must take the same input and
    /// give outputs of the same shapes.
    public func stageSwap(to resolved: ResolvedModel) throws {
        do {
            try stage(resolved)
        } catch {
            models.release(resolved)
            throw error
        }
    }

    private func stage(_ resolved: ResolvedModel) throws {
        guard let current = predictor else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        let p = try loadPredictor(resolved)
        let shapes = { (p: Predictor) in ((0..<p.inputCount).map { p.inputInfo($0).shape }, (0..<p.outputCount).map { p.outputInfo($0).shape }) }
        let (oldIn, oldOut) = shapes(current), (newIn, newOut) = shapes(p)
        guard oldIn == newIn, oldOut == newOut else {
            throw GraphError.mismatch(node: name, port: "the new model", field: "input/output shapes", expected: "\(oldIn) → \(oldOut)",
                                      got: "\(newIn) → \(newOut)")
        }
        let newDecoder: any OutputDecoder
        if let make = decoderForModel, let frame = negotiatedInput {
            let made = try make(resolved.path)
            // The input is prepared on the delivering thread while the worker swaps: a model that
            // wants another normalisation waits for the next launch.
            let wanted = made.normalization ?? options.normalization
            if let wanted, let input, wanted != input.normalization {
                throw GraphError.mismatch(node: name, port: "the new model", field: "input normalisation",
                                          expected: "\(input.normalization) (the running model's; it is used from the next launch)", got: "\(wanted)")
            }
            newDecoder = made.decoder
            _ = try newDecoder.negotiate(outputs: (0..<p.outputCount).map { (p.outputInfo($0).name, p.outputInfo($0).shape) }, input: frame, node: name)
        } else {
            newDecoder = decoder
        }
        let replaced = pendingSwap.withLock { pending -> PendingSwap? in
            defer { pending = PendingSwap(predictor: p, decoder: newDecoder, resolved: resolved) }
            return pending
        }
        if let replaced { models.release(replaced.resolved) }  // staged, never used
    }

    /// On the worker, between frames: takes a staged model.
    private func takePendingSwap(context: RunContext, sequence: Int) {
        guard let swap = pendingSwap.withLock({ s -> PendingSwap? in defer { s = nil }; return s }) else { return }
        let old = resolvedModel
        predictor = swap.predictor
        decoder = swap.decoder
        resolvedModel = swap.resolved
        swaps.wrappingAdd(1, ordering: .relaxed)
        context.tracer?.instant("\(name): model swapped to \(swap.resolved.source)", lane: Lane(id: 900, name: "\(name) model"),
                                at: context.clock.now(), sequence: sequence)
        context.warn("node '\(name)': switched to \(swap.resolved.source) before frame \(sequence)")
        if let old { models.release(old) }
    }

    override public var kind: String { "network" }
    override public var outputKind: StreamKind { decoder.emits }
    override public var execution: Execution { .worker }
    /// Files read besides the model (a `classify` node's labels file).
    public var extraFilesRead: [String] = []

    /// The model and everything that goes with it: a MetalTensor model's weight map, blob and
    /// secondary images, a classifier's labels beside it, a collection's cached archive and fallback.
    override public var filesRead: [String] {
        var files = extraFilesRead
        if ModelReference.isCollection(modelReference), let cached = models.cachedArchive(for: modelReference) { files.append(cached) }
        let model = ModelReference.isCollection(modelReference) ? options.fallback : modelReference
        guard let path = model.flatMap(models.locateIfPresent) else { return files }
        if (try? models.format(of: path)) == .metalTensor {
            let weights = options.weights.flatMap(models.locateIfPresent)
            return files + MetalTensorImporter.filesRead(path: path, options: .init(weights: weights), limits: models.limits)
        }
        let labels = URL(fileURLWithPath: path).deletingPathExtension().appendingPathExtension("labels.txt").path
        return files + [path] + (ModelFile.exists(labels) ? [labels] : [])
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        try requireEightBit(frame)
        negotiatedInput = frame
        let predictor = try loadPredictor()
        let info = predictor.inputInfo(0)
        guard info.shape.count == 4, info.shape[0] == 1, info.shape[3] == 3 || info.shape[3] == 1 else {
            throw GraphError.mismatch(node: name, port: "model input '\(info.name)'", field: "shape",
                                      expected: "[1, H, W, 3] or [1, H, W, 1] (an image)", got: "\(info.shape)")
        }
        if options.input == .lightness && info.shape[3] != 1 {
            throw GraphError.mismatch(node: name, port: "model input '\(info.name)'", field: "channels",
                                      expected: "1 (Lab lightness)", got: "\(info.shape[3])")
        }
        let fallback: InputNormalization = options.input == .lightness ? .lightness : .unit
        // A quantized input takes the frame's bytes as its integers; otherwise the option, else the default.
        let normalization = InputNormalization.forQuantizedInput(info) ?? options.normalization ?? fallback
        let isMetalTensor = resolvedModel?.format == .metalTensor
        input = ModelInput(width: info.shape[2], height: info.shape[1], channels: info.shape[3], content: options.input,
                           normalization: normalization, fit: isMetalTensor && options.fit == .stretch ? .pixelCentres : options.fit)
        let outputs = (0..<predictor.outputCount).map { (predictor.outputInfo($0).name, predictor.outputInfo($0).shape) }
        let description = try decoder.negotiate(outputs: outputs, input: frame, node: name)
        try compileBatches(beside: predictor)
        return description
    }

    /// The leader of a group with a batch limit over 1: the model compiled for each batch size, at
    /// validation (before the run's clock starts), and kept only where one prediction of N images
    /// takes less time than N predictions of one (timed here, alternated: on a CPU whose caches
    /// hold one image's activations and not N, the batch can be slower). A model that takes no
    /// batch is said once and runs one prediction per frame.
    private func compileBatches(beside predictor: Predictor) throws {
        guard modelLeader == nil, let limit = workerGroup?.batchLimit, limit > 1, batchBase !== predictor, let resolved = resolvedModel else { return }
        batchPredictors = []
        batchTimings = []
        batchBase = predictor
        do {
            for images in 2...limit {
                let batched = try models.predictor(at: resolved.path, threads: options.threads, precision: options.precision.predictor,
                                                   metalTensor: .init(precision: options.precision.metalTensorStorage, weights: options.weights),
                                                   node: name, batch: images)
                let (batch, single) = try Self.timePerImage(batched: batched, single: predictor, images: images)
                batchTimings.append((images, batch * 1000, single * 1000))
                batchPredictors.append(keepsBatches ?? (batch < single) ? batched : nil)
            }
            if let (images, batched, single) = batchTimings.last, batchPredictors.last ?? nil == nil {
                warn(String(format: "node '%@': one prediction of %d images took %.3f ms per image, %d predictions of one %.3f ms (timed at the start): a turn of several frames runs one prediction per frame",
                            name, images, batched, images, single))
            }
        } catch {
            batchPredictors = []
            warn("node '\(name)': the model takes no batch (\(error)); a turn of several frames runs one prediction per frame")
        }
    }

    /// Seconds per image of one prediction of `batched` (`images` images) and of `single`, each the
    /// lower quartile of 8 turns, alternated (the host's noise only ever adds time).
    private static func timePerImage(batched: Predictor, single: Predictor, images: Int) throws -> (batched: Double, single: Double) {
        func seconds(_ body: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        var b: [Double] = [], s: [Double] = []
        for _ in 0..<8 {
            b.append(try seconds { try batched.predict() } / Double(images))
            s.append(try seconds { for _ in 0..<images { try single.predict() } } / Double(images))
        }
        return (b.sorted()[b.count / 4], s.sorted()[s.count / 4])
    }

    /// One worker turn: the members' prepared inputs side by side in the model compiled for that
    /// many images, one prediction, then each member's decoder on its image's slice of the outputs
    /// (copied into the predictor of one image, which the decoders read). Falls back to one
    /// prediction per frame when no batch was compiled, or a member's model was swapped.
    public func processBatch(_ items: [BatchItem], context: RunContext) throws -> [Frame?] {
        let owner = modelLeader ?? self
        let one = { try items.map { try $0.node.process($0.frame, prepared: $0.prepared, context: context) } }
        guard items.count > 1, owner.batchPredictors.indices.contains(items.count - 2), let batched = owner.batchPredictors[items.count - 2],
              let base = owner.batchBase else { return try one() }
        var members: [(node: NetworkNode, staged: PreparedInput)] = []
        for item in items {
            guard let node = item.node as? NetworkNode, let staged = item.prepared as? PreparedInput, node.predictor === base,
                  node.pendingSwap.withLock({ $0 == nil }) else { return try one() }
            members.append((node, staged))
        }
        let target = batched.input(0), per = base.input(0).count
        guard target.count == per * items.count,
              (0..<base.outputCount).allSatisfy({ batched.output($0).count == base.output($0).count * items.count }) else { return try one() }
        for (k, member) in members.enumerated() {
            (target.pointer + k * per).update(from: member.staged.values, count: min(member.staged.count, per))
        }
        try batched.predict()
        var outputs: [Frame?] = []
        for (k, member) in members.enumerated() {
            for i in 0..<base.outputCount {
                let out = base.output(i)
                out.pointer.update(from: batched.output(i).pointer + k * out.count, count: out.count)
            }
            outputs.append(try member.node.decode(base, for: items[k].frame))
        }
        return outputs
    }

    private func loadPredictor() throws -> Predictor {
        if let predictor { return predictor }
        if let leader = modelLeader {
            // One model for the whole group: the leader loads it (once), the members point at it.
            let p = try leader.loadPredictor()
            resolvedModel = leader.resolvedModel
            predictor = p
            return p
        }
        let start = Date()
        let resolved: ResolvedModel
        do {
            resolved = try resolvedModel ?? models.resolve(modelReference, fallback: options.fallback, warn: warn)
        } catch let error as ModelError {
            throw NetworkNodeError(node: name, error: error)
        } catch let error as DeploymentError {
            throw GraphError.invalidOption(node: name, option: "model", reason: error.description)
        }
        resolvedModel = resolved
        let p = try loadPredictor(resolved)
        predictor = p
        loadSeconds = Date().timeIntervalSince(start)
        return p
    }

    /// The predictor of a resolved model, with this node's threads, precision and weights.
    private func loadPredictor(_ resolved: ResolvedModel) throws -> Predictor {
        try models.predictor(at: resolved.path, threads: options.threads, precision: options.precision.predictor,
                             metalTensor: .init(precision: options.precision.metalTensorStorage, weights: options.weights), node: name)
    }

    /// Staging memory for inputs prepared on the delivering thread (one being filled, one waiting,
    /// one being copied at most).
    private let preparedPool = BufferPool(maxFreePerSize: 3)

    /// Scales, converts and normalises the frame into staging memory on the delivering thread, while
    /// the worker still runs the previous prediction (the input preparation is then off the
    /// network's critical path). Only the delivering thread calls it.
    override public func prepare(_ frame: Frame, context: RunContext) throws -> (any Sendable)? {
        guard let input else { return nil }
        let staged = PreparedInput(count: input.count, pool: preparedPool)
        try input.fill(staged.values, from: frame)
        return staged
    }

    override public func process(_ frame: Frame, prepared: (any Sendable)?, context: RunContext) throws -> Frame? {
        takePendingSwap(context: context, sequence: frame.sequence)
        guard let predictor else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        guard let staged = prepared as? PreparedInput else { return try process(frame, context: context) }
        let target = predictor.input(0)
        target.pointer.update(from: staged.values, count: min(staged.count, target.count))
        return try predictAndDecode(predictor, for: frame)
    }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        takePendingSwap(context: context, sequence: frame.sequence)
        guard let predictor, let input else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        try input.fill(predictor.input(0), from: frame)
        return try predictAndDecode(predictor, for: frame)
    }

    private func predictAndDecode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        try predictor.predict()
        return try decode(predictor, for: frame)
    }

    /// The node's output from `predictor`'s outputs (non-finite values zeroed first).
    private func decode(_ predictor: Predictor, for frame: Frame) throws -> Frame? {
        if replaceNonFinite(in: predictor) { counters.update { $0.nonFinite += 1 } }
        var out = try decoder.decode(predictor, for: frame)
        if let input, input.fit == .letterbox, let results = out?.results {
            // Found in the letterboxed input: back to the frame's own coordinates.
            out?.results = input.letterbox(frameWidth: frame.width, frameHeight: frame.height).unproject(results)
        }
        return out
    }

    /// Replaces NaN and ±infinity in every output by 0, so that no decoder or composite sees them
    /// (a float-to-byte conversion would trap). True when any was found.
    private func replaceNonFinite(in predictor: Predictor) -> Bool {
        var found = false
        for i in 0..<predictor.outputCount {
            let out = predictor.output(i)
            if fg_zero_nonfinite(out.pointer, out.count) > 0 { found = true }
        }
        return found
    }
}

extension NetworkNode {
    /// Options shared by the network node types (`segment`, `colorize`).
    public enum OptionSpecs {
        public static let threads = NodeOption.int("threads", default: 1, 1...64, "inference threads")
        public static let segmentModel = NodeOption<String?>.text(
            "model", required: true, "model file or name (selfie_segmentation → models/cache/selfie_segmentation.tflite)")
        public static let colorizeModel = NodeOption.text(
            "model", default: "colorizer", "model file or name (colorizer → models/colorizer/colorizer.onnx)")
        /// Input normalisation, value = byte × scale + offset; nil: the model's own (MediaPipe's).
        public static let scale = NodeOption<Double?>.number(
            "scale", optional: -1e6...1e6, "input normalisation: value = byte × scale + offset (default: the model's)")
        public static let offset = NodeOption<Double?>.number("offset", optional: -1e6...1e6, "see scale")
        /// The arithmetic: float32, MetalTensor's float16 storage, bfloat16 or int8 dense convolutions.
        public static let precision = NodeOption<NetworkPrecision>.choice(
            "precision", default: .float32,
            "fp32; fp16: MetalTensor models (.plist) with fp16 storage as on an iPhone; bf16: the dense convolutions with bfloat16 products (AVX-512 BF16); int8: in 8-bit integers (AVX-512 VNNI; check with framegraph model compare)")
        /// The bundled model used when a `collection:` model cannot be had.
        public static let fallback = NodeOption<String?>.text("fallback", required: false,
                                                              "model used when a collection:NAME/ENTRY model cannot be had (offline, not verified, no key)")
        /// MetalTensor models: the weight blob.
        public static let weights = NodeOption<String?>.text("weights", required: false, "MetalTensor models (.plist): the .bin weights (default: beside the plist)")
        /// A colorizer's input normalisation, value = L × scale + offset (default L/50 − 1).
        public static let lightnessScale = NodeOption.number(
            "scale", default: Double(InputNormalization.lightness.scale), -1e6...1e6, "input normalisation: value = L × scale + offset")
        public static let lightnessOffset = NodeOption.number(
            "offset", default: Double(InputNormalization.lightness.offset), -1e6...1e6, "see scale")
    }
}
