import CXNNPACK
import Foundation
import NeuralGraph

/// One compiled way of running a graph: its stages in order (XNNPACK subgraph runtimes, native
/// operations, FrameGraph's own kernels), the buffers of the tensors that cross stages, the
/// constants the stages read, and the thread pool they run on. A ``Predictor`` holds one; the
/// kernel tuner (``KernelTuning``) compiles two and keeps the faster.
final class CompiledPlan {
    /// One step of the plan.
    enum Stage {
        case xnnpack(XNNPACKStage)
        case native(nodeIndex: Int, run: () -> Void)
        case own(any OwnKernel)
        /// Real numbers rounded to their tensor's quantized type, after an operation that computed a
        /// quantized tensor in float32 (the buffer, its length, the parameters, the type).
        case rounding(buffer: UnsafeMutablePointer<Float>, count: Int, quantization: Quantization, type: ElementType)
    }

    let graph: NeuralGraph
    /// Whether FrameGraph's own kernels run the groups they can (else XNNPACK runs them).
    let usesOwnKernels: Bool
    /// The dense convolutions that run in 8-bit integers (``Predictor/Precision/int8``) or with
    /// bfloat16 products (``Predictor/Precision/bfloat16``).
    private(set) var int8Convolutions = 0
    private(set) var stages: [Stage] = []
    /// Where and in what arithmetic each node runs, by node index (``Predictor/placements``).
    private(set) var placements: [Int: String] = [:]
    private(set) var buffers: [Int: TensorBuffer] = [:]
    /// The bytes of the arena that the tensors living only inside a prediction share, and what
    /// they would take with a buffer each.
    private(set) var arenaBytes = 0, unsharedBytes = 0
    /// Constants as XNNPACK reads them: float32, or a quantized tensor's own integers.
    private var constants: [Int: ConstantStorage] = [:]
    /// Constants as real numbers (float32), for FrameGraph's native and own kernels.
    private var realConstants: [Int: ConstantStorage] = [:]
    private var threadpool: pthreadpool_t?

    /// Partitions `graph` (already lowered for XNNPACK) into stages and creates them. `int8`: the
    /// dense convolutions that pay (``ConvolutionGroup/paysInInt8``) run in 8-bit integers;
    /// `bfloat16`: they run with bfloat16 products.
    init(graph: NeuralGraph, threads requested: Int, stagePerOperation: Bool, ownKernels: Bool, int8: Bool = false,
         bfloat16: Bool = false) throws {
        self.graph = graph
        usesOwnKernels = ownKernels
        if requested > 1 { threadpool = pthreadpool_create(requested) }

        // Constants as float32 in storage the plan keeps (XNNPACK reads them at runtime creation);
        // quantized ones as their integers for XNNPACK, and as real numbers for the other kernels.
        for (i, t) in graph.tensors.enumerated() {
            guard let c = t.constant else { continue }
            if let q = t.quantization {
                constants[i] = c
                realConstants[i] = ConstantStorage(floats: q.dequantize(c.integers(), shape: t.shape))
            } else {
                constants[i] = c.elementType == .float32 ? c : ConstantStorage(floats: c.floats())
                realConstants[i] = constants[i]
            }
        }
        // What FrameGraph's own kernels run (convolutions with what they fuse, the annealed mean,
        // upsampling layers); each group runs where its last node was.
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        var groups = ownKernels ? ownKernelGroups(in: graph, fuse: !stagePerOperation, threads: threads, banding: !int8 && !bfloat16) : []
        if int8 || bfloat16 {
            groups = groups.map { group in
                guard var convolution = group as? ConvolutionGroup, convolution.paysInInt8 else { return group }
                convolution.int8 = int8
                convolution.bfloat16 = !int8
                int8Convolutions += 1
                return convolution
            }
            if bfloat16 && !int8 { groups = ConvolutionFusion.bfloat16HandOffs(in: groups, readers: GraphReaders(graph)) }
        }
        var groupAt: [Int: any OwnKernelGroup] = [:], inGroup = Set<Int>()
        for g in groups {
            groupAt[g.position] = g
            inGroup.formUnion(g.nodes)
        }
        // Partition into stages.
        enum Kind { case xnnpack, xnnpackReal, native, quantized, own(any OwnKernelGroup) }
        var plan: [(kind: Kind, nodes: [Int])] = []
        for (i, node) in graph.nodes.enumerated() {
            if let g = groupAt[i] {
                plan.append((.own(g), g.nodes))
                continue
            }
            if inGroup.contains(i) { continue }
            // A quantized operation runs in XNNPACK when this XNNPACK defines it with its types, else
            // natively on real numbers (its output rounded to its quantized type).
            let quantized = (node.inputs + node.outputs).contains { $0 >= 0 && graph.tensors[$0].isQuantized }
            let conversion: Bool
            switch node.operation {
            case .quantize, .dequantize: conversion = true
            default: conversion = false
            }
            let definable = quantized && !conversion && XNNPACKStage.definable(node, in: graph, constants: constants)
            let requantization: Bool
            if case .quantize = node.operation, let input = node.inputs.first, graph.tensors[input].isQuantized {
                requantization = !XNNPACKStage.definable(node, in: graph, constants: constants)
            } else {
                requantization = false
            }
            if quantized, (!conversion && !definable) || requantization, QuantizedKernels.supports(node, in: graph) {
                plan.append((.quantized, [i]))  // LiteRT's integer arithmetic, natively
                continue
            }
            if quantized, !conversion, !definable, XNNPACKStage.supports(node, in: graph) {
                plan.append((.xnnpackReal, [i]))  // XNNPACK's float32 kernel, its output rounded after
                continue
            }
            let supported = quantized ? definable || (conversion && XNNPACKStage.definable(node, in: graph, constants: constants))
                : XNNPACKStage.supports(node, in: graph) && !(ownKernels && NativeKernels.runsInsteadOfXNNPACK(node, in: graph))
            if supported, !stagePerOperation, let last = plan.last, case .xnnpack = last.kind {
                plan[plan.count - 1].nodes.append(i)
            } else {
                plan.append((supported ? .xnnpack : .native, [i]))
            }
        }
        for step in plan {
            for n in step.nodes {
                let node = graph.nodes[n]
                let quantizedOut = node.outputs.compactMap { graph.tensors[$0].isQuantized ? "\(graph.tensors[$0].elementType)" : nil }.first
                let type = quantizedOut ?? node.inputs.compactMap { $0 >= 0 && graph.tensors[$0].isQuantized && graph.tensors[$0].constant == nil
                    ? "\(graph.tensors[$0].elementType)" : nil }.first
                switch step.kind {
                case .xnnpack:
                    if case .quantize = node.operation { placements[n] = "XNNPACK convert → \(type ?? "float32")" }
                    else if case .dequantize = node.operation { placements[n] = "XNNPACK convert → float32" }
                    else { placements[n] = type.map { "XNNPACK, \($0) integers" } ?? "XNNPACK, float32" }
                case .xnnpackReal:
                    placements[n] = "XNNPACK in float32, rounded to \(type ?? "its type") (this XNNPACK has no \(type ?? "integer") kernel)"
                case .quantized:
                    placements[n] = "FrameGraph, \(type ?? "integer") integers as LiteRT's own kernel computes them"
                case .native:
                    placements[n] = type.map { "FrameGraph in float32, rounded to \($0)" } ?? "FrameGraph, float32"
                case .own(let g):
                    let convolution = g as? ConvolutionGroup
                    placements[n] = convolution?.int8 == true ? "FrameGraph's kernels, int8 (precision=int8)"
                        : convolution?.bfloat16 == true ? "FrameGraph's kernels, bfloat16 products (precision=bf16)" : "FrameGraph's kernels, float32"
                }
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
            case .native, .xnnpackReal, .quantized:
                for n in step.nodes {
                    for t in graph.nodes[n].inputs + graph.nodes[n].outputs where t >= 0 && constants[t] == nil { crossing.insert(t) }
                }
            case .own(let g):
                crossing.formUnion(g.boundaryTensors)
            }
        }
        // The graph's inputs and outputs own their buffers (written and read between predictions);
        // the rest share an arena, each alive from the stage that writes it to the last that reads it.
        let external = Set(graph.inputs).union(graph.outputs)
        var lifetimes: [TensorArena.Lifetime] = []
        for t in crossing.sorted() where constants[t] == nil {
            if external.contains(t) {
                buffers[t] = TensorBuffer(shape: graph.tensors[t].shape)
            } else {
                let stages = (producerStage[t].map { [$0] } ?? []) + (consumerStages[t] ?? [])
                let bytes = graph.tensors[t].shape.reduce(1, *) * MemoryLayout<Float>.size
                lifetimes.append(TensorArena.Lifetime(tensor: t, bytes: bytes, first: stages.min() ?? 0, last: stages.max() ?? plan.count))
            }
        }
        let arena = TensorArena(lifetimes)
        for l in lifetimes { buffers[l.tensor] = arena.buffer(for: l.tensor, shape: graph.tensors[l.tensor].shape) }
        arenaBytes = arena.layout.bytes
        unsharedBytes = lifetimes.map { TensorArena.paddedSize($0.bytes) }.reduce(0, +)
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
            case .xnnpackReal:
                let used = step.nodes.flatMap { graph.nodes[$0].inputs + graph.nodes[$0].outputs }.filter { $0 >= 0 && externalIDs[$0] != nil }
                let local = Dictionary(uniqueKeysWithValues: Array(Set(used)).sorted().enumerated().map { ($1, UInt32($0)) })
                stages.append(.xnnpack(try XNNPACKStage(graph: graph, nodeIndices: step.nodes, externals: local, buffers: buffers,
                                                        constants: realConstants, threadpool: threadpool, realNumbers: true)))
                stages += roundings(of: step.nodes)
            case .native:
                for n in step.nodes {
                    stages.append(.native(nodeIndex: n, run: try NativeKernels.make(graph.nodes[n], graph: graph, buffers: buffers,
                                                                                     constants: realConstants)))
                    if case .quantize = graph.nodes[n].operation { continue }  // rounds already
                    stages += roundings(of: [n])
                }
            case .quantized:
                for n in step.nodes {
                    stages.append(.native(nodeIndex: n, run: try QuantizedKernels.make(graph.nodes[n], graph: graph, buffers: buffers,
                                                                                       constants: constants)))
                }
            case .own(let g):
                stages.append(.own(try g.kernel(graph: graph, buffers: buffers, constants: realConstants, threadpool: threadpool)))
            }
        }
    }

    /// The roundings after float32 operations whose outputs are quantized tensors.
    private func roundings(of nodes: [Int]) -> [Stage] {
        nodes.flatMap { graph.nodes[$0].outputs }.compactMap { t in
            guard let q = graph.tensors[t].quantization, let b = buffers[t] else { return nil }
            return .rounding(buffer: b.pointer, count: b.count, quantization: q, type: graph.tensors[t].elementType)
        }
    }

    deinit {
        stages.removeAll()
        if let threadpool { pthreadpool_destroy(threadpool) }
    }

    /// Runs every stage once on the current input buffers. The caller serialises calls.
    func run() throws {
        for stage in stages {
            switch stage {
            case .xnnpack(let s): try s.run()
            case .native(_, let run): run()
            case .own(let k): k.run()
            case .rounding(let b, let n, let q, let type): for i in 0..<n { b[i] = q.fakeQuantize(b[i], type: type) }
            }
        }
    }

    /// Runs every stage once, timing each: the nodes it ran and its seconds.
    func runTimed() throws -> [(nodes: [Int], seconds: Double)] {
        var result: [(nodes: [Int], seconds: Double)] = []
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
            case .rounding(let b, let n, let q, let type):
                for i in 0..<n { b[i] = q.fakeQuantize(b[i], type: type) }
                nodes = []
            }
            result.append((nodes, Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9))
        }
        return result
    }

    /// How the graph was split: XNNPACK stages (with their operation counts), native operations and
    /// own kernels (with the operations each fuses).
    var summary: String {
        stages.map { stage -> String in
            switch stage {
            case .xnnpack(let s): return "xnnpack(\(s.nodeIndices.count) ops)"
            case .native(let n, _): return "native(\(graph.nodes[n].operation.name))"
            case .own(let k): return "own(" + k.nodeIndices.map { graph.nodes[$0].operation.name }.joined(separator: "+") + ")"
            case .rounding: return "round-to-quantized"
            }
        }.joined(separator: " → ")
    }
}
