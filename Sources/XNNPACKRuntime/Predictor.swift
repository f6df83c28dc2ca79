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
        public init(threads: Int = 1, stagePerOperation: Bool = false, convolutions: ConvolutionKernels = .auto) {
            self.threads = threads
            self.stagePerOperation = stagePerOperation
            self.convolutions = convolutions
        }
    }

    /// Who runs the graph's convolutions: ungrouped ones and depthwise ones with multiplier 1.
    public enum ConvolutionKernels: String, Sendable, CaseIterable {
        /// FrameGraph's own kernel where it is the faster (AVX2 without AVX-512F), else XNNPACK;
        /// the environment variable `FRAMEGRAPH_CONV_KERNELS` (`own` or `xnnpack`) overrides the rule.
        case auto
        /// FrameGraph's own kernels, with the addition, channel pad and PReLU / hard-swish after the
        /// convolution fused into its pass.
        case own
        /// XNNPACK's convolution, every operation separate.
        case xnnpack

        /// Whether this choice uses FrameGraph's kernel on this CPU.
        public var usesOwnKernel: Bool {
            switch self {
            case .auto:
                // FRAMEGRAPH_CONV_KERNELS=own|xnnpack overrides the CPU rule for every predictor of
                // the process (pipelines included), to compare the two or to step around a kernel.
                switch ProcessInfo.processInfo.environment["FRAMEGRAPH_CONV_KERNELS"] {
                case "own": return true
                case "xnnpack": return false
                default: return fg_conv_is_preferred() != 0
                }
            case .own: return true
            case .xnnpack: return false
            }
        }
    }

    /// One step of the execution plan.
    enum Stage {
        case xnnpack(XNNPACKStage)
        case native(nodeIndex: Int, run: () -> Void)
        case own(any OwnKernel)
    }

    public let graph: NeuralGraph
    public let options: Options
    /// Seconds spent compiling (partitioning, creating runtimes).
    public let compileSeconds: Double
    private var stages: [Stage] = []
    private var buffers: [Int: TensorBuffer] = [:]
    private var constants: [Int: ConstantStorage] = [:]
    private var threadpool: pthreadpool_t?
    private let lock = NSLock()

    /// Compiles `graph` for prediction.
    public init(graph original: NeuralGraph, options: Options = Options()) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        self.options = options
        let graph = original.loweredForXNNPACK()
        self.graph = graph
        guard XNNPACKLibrary.initialized else { throw ModelError.runtime(operation: "initialize XNNPACK", reason: "failed") }
        if options.threads > 1 { threadpool = pthreadpool_create(options.threads) }

        // Constants as float32 in storage the predictor keeps (XNNPACK reads them at runtime creation).
        for (i, t) in graph.tensors.enumerated() {
            guard let c = t.constant else { continue }
            constants[i] = c.elementType == .float32 ? c : ConstantStorage(floats: c.floats())
        }
        // What FrameGraph's own kernels run (convolutions with what they fuse, the annealed mean,
        // upsampling layers); each group runs where its last node was.
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        let groups = options.convolutions.usesOwnKernel ? ownKernelGroups(in: graph, fuse: !options.stagePerOperation, threads: threads) : []
        var groupAt: [Int: any OwnKernelGroup] = [:], inGroup = Set<Int>()
        for g in groups {
            groupAt[g.position] = g
            inGroup.formUnion(g.nodes)
        }
        // Partition into stages.
        enum Kind { case xnnpack, native, own(any OwnKernelGroup) }
        var plan: [(kind: Kind, nodes: [Int])] = []
        for (i, node) in graph.nodes.enumerated() {
            if let g = groupAt[i] {
                plan.append((.own(g), g.nodes))
                continue
            }
            if inGroup.contains(i) { continue }
            let supported = XNNPACKStage.supports(node, in: graph)
            if supported, !options.stagePerOperation, let last = plan.last, case .xnnpack = last.kind {
                plan[plan.count - 1].nodes.append(i)
            } else {
                plan.append((supported ? .xnnpack : .native, [i]))
            }
        }
        // Tensors that cross stages (or are graph inputs/outputs) get buffers of their own.
        var producerStage: [Int: Int] = [:], consumerStages: [Int: Set<Int>] = [:]
        for (s, step) in plan.enumerated() {
            for n in step.nodes {
                for o in graph.nodes[n].outputs { producerStage[o] = s }
                for i in graph.nodes[n].inputs where i >= 0 { consumerStages[i, default: []].insert(s) }
            }
        }
        var crossing = Set(graph.inputs).union(graph.outputs)
        for (tensor, producer) in producerStage where consumerStages[tensor]?.contains(where: { $0 != producer }) ?? false {
            crossing.insert(tensor)
        }
        for step in plan {
            switch step.kind {
            case .xnnpack: break
            case .native:
                for n in step.nodes {
                    for t in graph.nodes[n].inputs + graph.nodes[n].outputs where t >= 0 && constants[t] == nil { crossing.insert(t) }
                }
            case .own(let g):
                crossing.formUnion(g.boundaryTensors)
            }
        }
        for t in crossing where constants[t] == nil { buffers[t] = TensorBuffer(shape: graph.tensors[t].shape) }
        let externalIDs = Dictionary(uniqueKeysWithValues: buffers.keys.sorted().enumerated().map { ($1, UInt32($0)) })

        for step in plan {
            switch step.kind {
            case .xnnpack:
                // External ids must be dense per subgraph: renumber the ones this stage touches.
                var used: [Int] = []
                for n in step.nodes {
                    for t in graph.nodes[n].inputs + graph.nodes[n].outputs where t >= 0 && externalIDs[t] != nil && !used.contains(t) {
                        used.append(t)
                    }
                }
                let local = Dictionary(uniqueKeysWithValues: used.enumerated().map { ($1, UInt32($0)) })
                stages.append(.xnnpack(try XNNPACKStage(graph: graph, nodeIndices: step.nodes, externals: local, buffers: buffers,
                                                        constants: constants, threadpool: threadpool)))
            case .native:
                for n in step.nodes {
                    stages.append(.native(nodeIndex: n, run: try NativeKernels.make(graph.nodes[n], graph: graph, buffers: buffers,
                                                                                     constants: constants)))
                }
            case .own(let g):
                stages.append(.own(try g.kernel(graph: graph, buffers: buffers, constants: constants, threadpool: threadpool)))
            }
        }
        compileSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    deinit {
        stages.removeAll()
        if let threadpool { pthreadpool_destroy(threadpool) }
    }

    /// Number of inputs and outputs.
    public var inputCount: Int { graph.inputs.count }
    public var outputCount: Int { graph.outputs.count }

    /// The buffer of input `i` (NHWC float32): write into it before ``predict()``.
    public func input(_ i: Int) -> TensorBuffer { buffers[graph.inputs[i]] ?? TensorBuffer(shape: [0]) }
    /// The buffer of output `i`: valid after ``predict()`` until the next one.
    public func output(_ i: Int) -> TensorBuffer { buffers[graph.outputs[i]] ?? TensorBuffer(shape: [0]) }
    /// Name and shape of input / output `i`.
    public func inputInfo(_ i: Int) -> TensorValue { graph.tensors[graph.inputs[i]] }
    public func outputInfo(_ i: Int) -> TensorValue { graph.tensors[graph.outputs[i]] }

    /// How the graph was split: XNNPACK stages (with their operation counts) and native operations.
    public var planSummary: String {
        stages.map { stage -> String in
            switch stage {
            case .xnnpack(let s): return "xnnpack(\(s.nodeIndices.count) ops)"
            case .native(let n, _): return "native(\(graph.nodes[n].operation.name))"
            case .own(let k): return "own(" + k.nodeIndices.map { graph.nodes[$0].operation.name }.joined(separator: "+") + ")"
            }
        }.joined(separator: " → ")
    }

    /// Runs the graph on the current input buffers (synchronous).
    public func predict() throws {
        lock.lock()
        defer { lock.unlock() }
        for stage in stages {
            switch stage {
            case .xnnpack(let s): try s.run()
            case .native(_, let run): run()
            case .own(let k): k.run()
            }
        }
    }

    /// Runs the graph, timing each stage; returns per stage the operation names, the first node's
    /// name and output shape, its floating-point operations (a multiply-add counts as 2) and seconds.
    public func predictTimed() throws -> [(operations: [String], node: String, flops: Int, seconds: Double)] {
        lock.lock()
        defer { lock.unlock() }
        var result: [(operations: [String], node: String, flops: Int, seconds: Double)] = []
        for stage in stages {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let nodes: [Int]
            switch stage {
            case .xnnpack(let s):
                try s.run()
                nodes = s.nodeIndices
            case .native(let n, let run):
                run()
                nodes = [n]
            case .own(let k):
                k.run()
                nodes = k.nodeIndices
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
            let first = graph.nodes[nodes.first ?? 0]
            let shape = first.outputs.first.map { "\(graph.tensors[$0].shape)" } ?? ""
            let flops = nodes.reduce(0) { total, n in total.addingReportingOverflow(graph.flops(of: graph.nodes[n])).partialValue }
            result.append((nodes.map { graph.nodes[$0].operation.name }, "'\(first.name)' → \(shape)", flops, seconds))
        }
        return result
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
