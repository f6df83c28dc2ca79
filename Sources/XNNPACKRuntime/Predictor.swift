import CFrameGraphKernels
import CXNNPACK
import Foundation
import NeuralGraph

/// Runs a ``NeuralGraph`` on the CPU: maximal runs of operations XNNPACK supports become XNNPACK
/// subgraph runtimes; the rest run as native kernels in between. Input and output buffers are
/// allocated once and reused for every prediction: write the inputs, call ``predict()``, read the
/// outputs.
///
/// ```swift
/// let predictor = try Predictor(graph: try TFLiteImporter.load(path: "selfie_segmentation.tflite"))
/// fill(predictor.input(0).values)      // NHWC float32
/// try predictor.predict()
/// let mask = predictor.output(0).values
/// ```
/// Threads: one by default (steady when the other core is busy; a 2-thread pool spikes under load on
/// a 2-core machine). A predictor is used by one thread at a time; ``predict()`` holds a lock.
public final class Predictor: @unchecked Sendable {
    /// Settings with their defaults.
    public struct Options: Sendable {
        /// Inference threads. Default 1 (no thread pool).
        public var threads = 1
        /// Compile every operation as its own stage, to time operations one by one (slower; for
        /// `model bench`'s per-operation report only).
        public var stagePerOperation = false
        /// Who runs convolutions (dense and depthwise, and what follows them). Default: ``ConvolutionKernels/auto``.
        public var convolutions = ConvolutionKernels.auto
        /// The arithmetic of the dense convolutions. Default: ``Precision/float32``.
        public var precision = Precision.float32
        public init(threads: Int = 1, stagePerOperation: Bool = false, convolutions: ConvolutionKernels = .auto,
                    precision: Precision = .float32) {
            self.threads = threads
            self.stagePerOperation = stagePerOperation
            self.convolutions = convolutions
            self.precision = precision
        }
    }

    /// The arithmetic a predictor runs its dense convolutions in.
    public enum Precision: String, Sendable, CaseIterable {
        /// Float32 throughout.
        case float32
        /// The dense convolutions that pay (``ConvolutionGroup/paysInInt8``) in 8-bit integers
        /// (`fg_qconv_part`: weights per output channel, activations per block of 12 pixels over their
        /// own range, products in AVX-512 VNNI), FrameGraph's own kernels for every convolution; the
        /// rest (depthwise convolutions, small 1×1 ones, everything else) in float32. On a CPU without
        /// AVX-512 VNNI the predictor runs float32 and says so in ``Predictor/kernelChoice``.
        case int8
        /// The same dense convolutions as ``int8`` with bfloat16 products (`fg_bconv_part`: weights
        /// and each block of 12 input rows rounded to bfloat16, 8 significant bits, every value with
        /// its own exponent; the products added in float32 by AVX-512 BF16), the rest in float32. On a
        /// CPU without AVX-512 BF16 the predictor runs float32 and says so in ``Predictor/kernelChoice``.
        case bfloat16
    }

    /// Who runs the graph's convolutions (dense and depthwise, and what the own kernels fuse with them).
    public enum ConvolutionKernels: String, Sendable, CaseIterable {
        /// The faster of the two on this CPU for this graph: both plans are compiled and timed,
        /// alternated, and the faster is kept (``KernelTuning``; the decision is kept for the process).
        /// Without AVX2 and FMA, XNNPACK. The environment variable `FRAMEGRAPH_CONV_KERNELS` (`own` or
        /// `xnnpack`) fixes the choice for every predictor of the process, for reproducible runs or to
        /// compare the two.
        case auto
        /// FrameGraph's own kernels, with the addition, channel pad and PReLU / hard-swish after the
        /// convolution fused into its pass.
        case own
        /// XNNPACK's convolution, every operation separate.
        case xnnpack

        /// `own` or `xnnpack` where the choice is fixed (by this value, the environment, the CPU or
        /// per-operation staging); nil where ``auto`` is to time both.
        func fixedChoice(stagePerOperation: Bool) -> Bool? {
            switch self {
            case .own: return true
            case .xnnpack: return false
            case .auto:
                switch ProcessInfo.processInfo.environment["FRAMEGRAPH_CONV_KERNELS"] {
                case "own": return true
                case "xnnpack": return false
                default:
                    if fg_conv_has_simd() == 0 { return false }
                    // Per-operation stages are for timing operations one by one, not for running.
                    return stagePerOperation ? true : nil
                }
            }
        }
    }

    public let graph: NeuralGraph
    public let options: Options
    /// Seconds spent compiling (partitioning, creating runtimes, and for ``ConvolutionKernels/auto``
    /// timing both plans).
    public let compileSeconds: Double
    /// Whether FrameGraph's own kernels run this predictor's convolutions (else XNNPACK's).
    public let usesOwnKernels: Bool
    /// Who runs the convolutions and why, in words: `FrameGraph's kernels (auto, timed: own 1.431 ms,
    /// XNNPACK 1.527 ms)`.
    public let kernelChoice: String
    private let plan: CompiledPlan
    private let lock = NSLock()

    /// Compiles `graph` for prediction.
    public init(graph original: NeuralGraph, options: Options = Options()) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        self.options = options
        let graph = original.loweredForXNNPACK()
        self.graph = graph
        guard XNNPACKLibrary.initialized else { throw ModelError.runtime(operation: "initialize XNNPACK", reason: "failed") }
        func compile(own: Bool, int8: Bool = false, bfloat16: Bool = false) throws -> CompiledPlan {
            try CompiledPlan(graph: graph, threads: options.threads, stagePerOperation: options.stagePerOperation, ownKernels: own, int8: int8,
                             bfloat16: bfloat16)
        }
        func named(_ own: Bool) -> String { own ? "FrameGraph's kernels" : "XNNPACK" }
        let int8Runs = fg_qconv_has_simd() != 0, bfloat16Runs = fg_bconv_has_simd() != 0
        var choice: String
        if options.precision == .int8, int8Runs {
            // Only FrameGraph's kernels run convolutions in int8: no timing against XNNPACK's float.
            plan = try compile(own: true, int8: true)
            choice = named(true) + " (precision int8: \(plan.int8Convolutions) convolutions in 8-bit integers)"
        } else if options.precision == .bfloat16, bfloat16Runs {
            plan = try compile(own: true, bfloat16: true)
            choice = named(true) + " (precision bf16: \(plan.int8Convolutions) convolutions with bfloat16 products)"
        } else if let own = options.convolutions.fixedChoice(stagePerOperation: options.stagePerOperation) {
            plan = try compile(own: own)
            choice = named(own) + " (--conv-kernels \(options.convolutions.rawValue))"
        } else {
            let key = KernelTuning.key(of: graph, threads: options.threads)
            let decision: KernelTuning.Decision
            if let known = KernelTuning.known(key) {
                decision = known
                plan = try compile(own: known.own)
            } else {
                let own = try compile(own: true), xnnpack = try compile(own: false)
                decision = try KernelTuning.decide(key: key, own: own, xnnpack: xnnpack)
                plan = decision.own ? own : xnnpack
            }
            choice = named(decision.own) + String(format: " (auto, timed: own %.3f ms, XNNPACK %.3f ms)",
                                                  decision.ownMilliseconds, decision.xnnpackMilliseconds)
        }
        if options.precision == .int8, !int8Runs { choice += "; precision int8 needs AVX-512 VNNI, which this CPU lacks: float32" }
        if options.precision == .bfloat16, !bfloat16Runs { choice += "; precision bf16 needs AVX-512 BF16, which this CPU lacks: float32" }
        kernelChoice = choice
        usesOwnKernels = plan.usesOwnKernels
        compileSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Number of inputs and outputs.
    public var inputCount: Int { graph.inputs.count }
    public var outputCount: Int { graph.outputs.count }

    /// The buffer of input `i` (NHWC float32): write into it before ``predict()``.
    public func input(_ i: Int) -> TensorBuffer { plan.buffers[graph.inputs[i]] ?? TensorBuffer(shape: [0]) }
    /// The buffer of output `i`: valid after ``predict()`` until the next one.
    public func output(_ i: Int) -> TensorBuffer { plan.buffers[graph.outputs[i]] ?? TensorBuffer(shape: [0]) }
    /// Name and shape of input / output `i`.
    public func inputInfo(_ i: Int) -> TensorValue { graph.tensors[graph.inputs[i]] }
    public func outputInfo(_ i: Int) -> TensorValue { graph.tensors[graph.outputs[i]] }

    /// How the graph was split: XNNPACK stages (with their operation counts), native operations and
    /// own kernels (with the operations each fuses).
    public var planSummary: String { plan.summary }
    /// Every node of ``graph`` with where and in what arithmetic it runs ("XNNPACK, int8 integers",
    /// "FrameGraph, float32" …), in graph order.
    public var placements: [(node: NeuralNode, runsIn: String)] {
        graph.nodes.enumerated().map { ($1, plan.placements[$0] ?? "?") }
    }

    /// The bytes that the tensors living only inside a prediction take in their shared arena
    /// (``TensorArena``), and what a buffer for each would take.
    public var intermediateBytes: (shared: Int, unshared: Int) { (plan.arenaBytes, plan.unsharedBytes) }

    /// Runs the graph on the current input buffers (synchronous).
    public func predict() throws {
        lock.lock()
        defer { lock.unlock() }
        try plan.run()
    }

    /// Runs the graph, timing each stage; returns per stage the operation names, the first node's
    /// name and output shape, its floating-point operations (a multiply-add counts as 2) and seconds.
    public func predictTimed() throws -> [(operations: [String], node: String, flops: Int, seconds: Double)] {
        lock.lock()
        defer { lock.unlock() }
        return try plan.runTimed().map { stage in
            let first = graph.nodes[stage.nodes.first ?? 0]
            let shape = first.outputs.first.map { "\(graph.tensors[$0].shape)" } ?? ""
            let flops = stage.nodes.reduce(0) { total, n in total.addingReportingOverflow(graph.flops(of: graph.nodes[n])).partialValue }
            return (stage.nodes.map { graph.nodes[$0].operation.name }, "'\(first.name)' → \(shape)", flops, stage.seconds)
        }
    }

    /// Copies `inputs` (one flat NHWC array per input) in, predicts, and returns copies of the outputs.
    public func predict(_ inputs: [[Float]]) throws -> [[Float]] {
        guard inputs.count == inputCount else {
            throw ModelError.inputMismatch(input: "all", expected: "\(inputCount) inputs", got: "\(inputs.count)")
        }
        for (i, values) in inputs.enumerated() {
            let buffer = input(i)
            guard values.count == buffer.count else {
                throw ModelError.inputMismatch(input: inputInfo(i).name, expected: "\(buffer.count) values \(buffer.shape)", got: "\(values.count) values")
            }
            buffer.pointer.update(from: values, count: values.count)
        }
        try predict()
        return (0..<outputCount).map { Array(output($0).values) }
    }

    /// Asynchronous prediction: runs on a background queue and resumes when done.
    public func predictAsync() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                do {
                    try predict()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
