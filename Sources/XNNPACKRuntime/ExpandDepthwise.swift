import CFrameGraphKernels
import CXNNPACK
import NeuralGraph

/// The first half of an inverted-residual block: a 1×1 "expansion" convolution (with its clamp, and
/// a PReLU or hard-swish) whose result only a depthwise convolution (with its own epilogue) reads.
/// `fg_expand_dwconv_part` runs both a band of rows at a time, so that the expanded tensor, the
/// largest of the block, never leaves the core's caches.
struct ExpandDepthwiseGroup {
    var expansion: ConvolutionGroup
    var depthwise: ConvolutionGroup
    /// Every node of the group.
    var nodes: [Int] { expansion.nodes + depthwise.nodes }
    /// The graph position the group runs at: the depthwise group's last node.
    var position: Int { depthwise.position }

    /// Floats of the expanded tensor one band may hold (256 KB: half a Zen 3 core's L2). Measured on
    /// EfficientNet-Lite0's blocks (`model bench --stages`), 16 K to 256 K floats: 64 K the best or
    /// within noise of it for every block.
    static let bandBudget = 64 * 1024
    /// Expanded tensors smaller than this (floats) stay with the two kernels one after the other
    /// (they stay in the caches between the two passes anyway).
    static let smallestExpansion = 2 * bandBudget

    /// Pairs of `convolutions` (the groups ConvolutionFusion found, fused) that run as one: a dense
    /// 1×1 convolution with stride 1 and no residual whose output is read by nothing but the
    /// depthwise convolution of another group, and is not a graph output.
    static func groups(from convolutions: [ConvolutionGroup], in graph: NeuralGraph) -> [ExpandDepthwiseGroup] {
        var readers: [Int: Int] = [:]
        for node in graph.nodes { for t in Set(node.inputs) where t >= 0 { readers[t, default: 0] += 1 } }
        let outputs = Set(graph.outputs)
        var depthwiseByInput: [Int: ConvolutionGroup] = [:]
        for g in convolutions where g.kind == .depthwise { depthwiseByInput[g.input] = g }
        return convolutions.compactMap { e -> ExpandDepthwiseGroup? in
            let g = e.geometry
            guard e.kind == .dense, e.residual == nil, g.kernel_h == 1, g.kernel_w == 1, g.stride_h == 1, g.stride_w == 1,
                  g.pad_top == 0, g.pad_left == 0, g.out_h == g.in_h, g.out_w == g.in_w,
                  !outputs.contains(e.output), readers[e.output] == 1,
                  let d = depthwiseByInput[e.output], d.geometry.in_c == Int32(e.outputChannels),
                  d.geometry.batch == g.batch, d.geometry.in_h == g.out_h, d.geometry.in_w == g.out_w,
                  Int(g.batch) * Int(g.out_h) * Int(g.out_w) * e.outputChannels >= smallestExpansion else { return nil }
            return ExpandDepthwiseGroup(expansion: e, depthwise: d)
        }
    }
}

extension ExpandDepthwiseGroup: OwnKernelGroup {
    var boundaryTensors: [Int] { [expansion.input, depthwise.output] + (depthwise.residual.map { [$0] } ?? []) }
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel {
        try ExpandDepthwiseKernel(self, graph: graph, buffers: buffers, constants: constants, threadpool: threadpool)
    }
}

/// An ``ExpandDepthwiseGroup`` bound to the predictor's buffers: both weights packed once, a band of
/// scratch per part, the depthwise output rows split between the thread pool's threads.
final class ExpandDepthwiseKernel: OwnKernel {
    let group: ExpandDepthwiseGroup
    var nodeIndices: [Int] { group.nodes.sorted() }
    private let threadpool: pthreadpool_t?
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private let packedExpansion: UnsafeMutablePointer<Float>
    private let packedDepthwise: UnsafeMutablePointer<Float>
    /// Geometry and epilogues in memory of their own (parts on several threads read them at once).
    private let geometry: UnsafeMutablePointer<fg_conv_geometry>
    private let expansionEpilogue: UnsafeMutablePointer<fg_conv_epilogue>
    private let depthwiseEpilogue: UnsafeMutablePointer<fg_conv_epilogue>
    /// `bandRows` rows of the expanded tensor per part.
    private let bands: UnsafeMutablePointer<Float>
    private let bandRows: Int
    private let bandCount: Int
    private let parts: Int
    private let rowsPerPart: Int

    init(_ group: ExpandDepthwiseGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
         threadpool: pthreadpool_t?) throws {
        self.group = group
        let e = graph.nodes[group.expansion.convolution], d = graph.nodes[group.depthwise.convolution]
        let label = "\(e.operation.name)+\(d.operation.name) ('\(e.name)')"
        func buffer(_ tensor: Int) throws -> UnsafeMutablePointer<Float> {
            guard let b = buffers[tensor] else {
                throw ModelError.runtime(operation: label, reason: "tensor '\(graph.tensors[tensor].name)' has no buffer")
            }
            return b.pointer
        }
        func constant(_ tensor: Int) throws -> UnsafeMutablePointer<Float> {
            guard let c = constants[tensor] else {
                throw ModelError.runtime(operation: label, reason: "tensor '\(graph.tensors[tensor].name)' is not a constant")
            }
            return c.floatPointer
        }
        func bias(_ node: NeuralNode) throws -> UnsafeMutablePointer<Float>? {
            node.inputs.count > 2 && node.inputs[2] >= 0 ? try constant(node.inputs[2]) : nil
        }
        input = try buffer(group.expansion.input)
        output = try buffer(group.depthwise.output)
        let expansionWeights = try constant(e.inputs[1]), expansionBias = try bias(e)
        let depthwiseWeights = try constant(d.inputs[1]), depthwiseBias = try bias(d)
        let residual = try group.depthwise.residual.map { UnsafePointer(try buffer($0)) }
        let expansionSlopes = try group.expansion.preluSlopes.map { UnsafePointer(try constant($0)) }
        let depthwiseSlopes = try group.depthwise.preluSlopes.map { UnsafePointer(try constant($0)) }
        // Nothing below throws: what is allocated is freed by deinit.
        let k = Int32(group.expansion.windowSize), n = Int32(group.expansion.outputChannels)
        let taps = Int32(group.depthwise.windowSize)
        packedExpansion = .allocate(capacity: fg_conv_packed_count(k, n))
        fg_conv_pack(expansionWeights, expansionBias, k, n, packedExpansion)
        packedDepthwise = .allocate(capacity: fg_dwconv_packed_count(taps, n))
        fg_dwconv_pack(depthwiseWeights, depthwiseBias, taps, n, packedDepthwise)
        geometry = .allocate(capacity: 1)
        geometry.initialize(to: group.depthwise.geometry)
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        let rows = fg_dwconv_rows(geometry)
        // Every part gets at least 8 output rows (each part starts its band afresh).
        parts = max(1, min(threads, rows / 8))
        rowsPerPart = (rows + parts - 1) / parts
        self.threadpool = parts > 1 ? threadpool : nil
        bandRows = fg_expand_dwconv_band_rows(geometry, ExpandDepthwiseGroup.bandBudget)
        bandCount = bandRows * Int(group.depthwise.geometry.in_w) * Int(n)
        bands = .allocate(capacity: bandCount * parts)
        let x = group.expansion, y = group.depthwise
        expansionEpilogue = .allocate(capacity: 1)
        expansionEpilogue.initialize(to: fg_conv_epilogue(min1: x.convolutionRange.0, max1: x.convolutionRange.1, residual: nil,
                                                          residual_stride: 0, residual_channels: 0,
                                                          min2: x.additionRange.0, max2: x.additionRange.1,
                                                          prelu_slopes: expansionSlopes, hard_swish: x.hardSwish ? 1 : 0))
        depthwiseEpilogue = .allocate(capacity: 1)
        depthwiseEpilogue.initialize(to: fg_conv_epilogue(min1: y.convolutionRange.0, max1: y.convolutionRange.1,
                                                          residual: residual, residual_stride: residual == nil ? 0 : y.residualChannels,
                                                          residual_channels: residual == nil ? 0 : Int32(y.residualChannels),
                                                          min2: y.additionRange.0, max2: y.additionRange.1,
                                                          prelu_slopes: depthwiseSlopes, hard_swish: y.hardSwish ? 1 : 0))
    }

    deinit {
        packedExpansion.deallocate()
        packedDepthwise.deallocate()
        geometry.deallocate()
        expansionEpilogue.deallocate()
        depthwiseEpilogue.deallocate()
        bands.deallocate()
    }

    func run() {
        guard let threadpool else {
            run(part: 0)
            return
        }
        pthreadpool_parallelize_1d(threadpool, { context, part in
            guard let context else { return }
            Unmanaged<ExpandDepthwiseKernel>.fromOpaque(context).takeUnretainedValue().run(part: part)
        }, Unmanaged.passUnretained(self).toOpaque(), parts, 0)
    }

    /// Depthwise output rows part·rowsPerPart …, with a band of its own.
    private func run(part: Int) {
        let first = part * rowsPerPart
        fg_expand_dwconv_part(input, Int32(group.expansion.windowSize), packedExpansion, expansionEpilogue, geometry, packedDepthwise,
                              output, depthwiseEpilogue, bands + part * bandCount, bandRows, first, first + rowsPerPart, 1)
    }
}
