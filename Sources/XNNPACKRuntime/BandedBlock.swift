import CFrameGraphKernels
import CXNNPACK
import NeuralGraph

/// An inverted-residual block run a band of rows at a time by `fg_banded_block_part`: a 1×1
/// "expansion" convolution (with its clamp, and a PReLU or hard-swish) whose result only a depthwise
/// convolution reads, the depthwise convolution (with its epilogue), and a 1×1 "projection" (with its
/// epilogue: the block's residual addition) that alone reads the depthwise result — the depthwise
/// convolution and at least one of the two others. The intermediate tensors, the largest of the
/// block, never leave the core's caches.
struct BandedBlockGroup {
    var expansion: ConvolutionGroup?
    var depthwise: ConvolutionGroup
    var projection: ConvolutionGroup?
    /// Every node of the group.
    var nodes: [Int] { (expansion?.nodes ?? []) + depthwise.nodes + (projection?.nodes ?? []) }
    /// The graph position the group runs at: its last group's last node.
    var position: Int { projection?.position ?? depthwise.position }
    var input: Int { expansion?.input ?? depthwise.input }
    var output: Int { projection?.output ?? depthwise.output }

    /// Floats of the expanded tensor one band may hold (256 KB: half a Zen 3 core's L2). Measured on
    /// EfficientNet-Lite0's blocks (`model bench --stages`), 16 K to 256 K floats: 64 K the best or
    /// within noise of it for every block.
    static let bandBudget = 64 * 1024
    /// Floats of the depthwise result one band may hold before the projection reads it.
    static let middleBudget = 32 * 1024
    /// Blocks whose intermediate tensors are all smaller than this (floats) stay with the kernels one
    /// after the other (those stay in the caches between the passes anyway).
    static let smallestIntermediate = 2 * bandBudget
    /// Blocks with an expansion whose expanded tensor is smaller than this (bytes: twice the core's
    /// L2) stay with the kernels one after the other: since a prediction's tensors share an arena
    /// (``TensorArena``) the pass-by-pass kernels find such a tensor near the caches, and a band's
    /// expansion of a few rows, moved rows and band-sized depthwise calls cost more than the tensor's
    /// round trip. EfficientNet-Lite0 on a 1 MB-L2 Zen 4 (`model bench --stages`, one run): its
    /// 56×56×144 blocks 0.73 and 0.50 ms one after the other against 0.90 and 0.66 ms banded, its
    /// 28×28×240 ones 0.46 against 0.59 ms; only the 112×112×96 block (4.8 MB) gains from bands,
    /// 1.12 against 1.26 ms.
    static var smallestBandedExpansion: Int { 2 * Int(fg_l2_bytes()) }
    /// Output rows each thread's part of a banded block gets at least (each part starts its band
    /// afresh).
    static let rowsPerThread = 8

    /// The blocks among `convolutions` (the groups ConvolutionFusion found, fused): each depthwise
    /// group with the 1×1 convolution whose output nothing else reads before it (and which adds no
    /// residual), and the 1×1 convolution that alone reads its output after it (when it adds none
    /// itself), where an intermediate tensor is large enough to gain and, with a thread pool of
    /// `threads`, every thread gets `rowsPerThread` output rows (the kernels one after the other split
    /// a 14×14 layer by channels instead; a band cannot, its projection needs every channel).
    static func groups(from convolutions: [ConvolutionGroup], readers: GraphReaders, threads: Int = 1) -> [BandedBlockGroup] {
        var pointwiseByOutput: [Int: ConvolutionGroup] = [:], pointwiseByInput: [Int: ConvolutionGroup] = [:]
        for g in convolutions where g.isPointwise {
            pointwiseByOutput[g.output] = g
            pointwiseByInput[g.input] = g
        }
        return convolutions.compactMap { d -> BandedBlockGroup? in
            guard d.kind == .depthwise, threads <= 1 || Int(d.geometry.batch) * Int(d.geometry.out_h) >= threads * rowsPerThread else { return nil }
            let x = d.geometry
            let channels = Int(x.in_c), inputPixels = Int(x.batch) * Int(x.in_h) * Int(x.in_w)
            let outputPixels = Int(x.batch) * Int(x.out_h) * Int(x.out_w)
            var block = BandedBlockGroup(depthwise: d)
            if let e = pointwiseByOutput[d.input], e.residual == nil, e.outputChannels == channels, readers.onlyConsumer(e.output) == d.convolution,
               e.geometry.batch == x.batch, e.geometry.out_h == x.in_h, e.geometry.out_w == x.in_w {
                block.expansion = e
            }
            if d.residual == nil, let p = pointwiseByInput[d.output], Int(p.geometry.in_c) == channels, readers.onlyConsumer(d.output) == p.convolution,
               p.geometry.batch == x.batch, p.geometry.in_h == x.out_h, p.geometry.in_w == x.out_w {
                block.projection = p
            }
            let largest = max(block.expansion == nil ? 0 : inputPixels * channels, outputPixels * channels)
            guard block.expansion != nil || block.projection != nil, largest >= smallestIntermediate else { return nil }
            if block.expansion != nil, inputPixels * channels * MemoryLayout<Float>.size < smallestBandedExpansion { return nil }
            return block
        }
    }
}

extension BandedBlockGroup: OwnKernelGroup {
    var boundaryTensors: [Int] {
        [input, output] + (depthwise.residual.map { [$0] } ?? []) + (projection?.residual.map { [$0] } ?? [])
    }
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel {
        try BandedBlockKernel(self, graph: graph, buffers: buffers, constants: constants, threadpool: threadpool)
    }
}

/// A ``BandedBlockGroup`` bound to the predictor's buffers: the weights packed once, scratch bands
/// per part, the depthwise output rows split between the thread pool's threads.
final class BandedBlockKernel: OwnKernel {
    let group: BandedBlockGroup
    var nodeIndices: [Int] { group.nodes.sorted() }
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    /// Packed weights, geometry, epilogues and stages in memory of their own, freed by deinit (parts
    /// on several threads read them at once).
    private var allocations: [UnsafeMutableRawPointer] = []
    private let packedDepthwise: UnsafeMutablePointer<Float>
    private let geometry: UnsafeMutablePointer<fg_conv_geometry>
    private let depthwiseEpilogue: UnsafeMutablePointer<fg_conv_epilogue>
    private let expansion: UnsafeMutablePointer<fg_pointwise_stage>?
    private let projection: UnsafeMutablePointer<fg_pointwise_stage>?
    /// `bandRows` rows of the depthwise input and `middleRows` rows of its output per part.
    private let bands: UnsafeMutablePointer<Float>
    private let bandRows: Int
    private let bandCount: Int
    private let middles: UnsafeMutablePointer<Float>
    private let middleRows: Int
    private let middleCount: Int
    private let parts: KernelParts
    private let rowsPerPart: Int

    init(_ group: BandedBlockGroup, graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
         threadpool: pthreadpool_t?) throws {
        self.group = group
        let d = graph.nodes[group.depthwise.convolution]
        let bind = KernelBindings(graph: graph, buffers: buffers, constants: constants,
                                  label: "banded block at \(d.operation.name) ('\(d.name)')")
        /// Weights, bias, residual and PReLU slopes of one group.
        struct Operands {
            var weights: UnsafeMutablePointer<Float>, bias: UnsafeMutablePointer<Float>?
            var residual: UnsafePointer<Float>?, slopes: UnsafePointer<Float>?
        }
        func operands(_ g: ConvolutionGroup) throws -> Operands {
            let node = graph.nodes[g.convolution]
            return Operands(weights: try bind.constant(node.inputs[1]), bias: try bind.bias(of: node),
                            residual: try g.residual.map { UnsafePointer(try bind.buffer($0)) },
                            slopes: try g.preluSlopes.map { UnsafePointer(try bind.constant($0)) })
        }
        input = try bind.buffer(group.input)
        output = try bind.buffer(group.output)
        let dw = try operands(group.depthwise)
        let ex = try group.expansion.map(operands), pr = try group.projection.map(operands)
        // Nothing below throws: what is allocated is freed by deinit.
        var owned: [UnsafeMutableRawPointer] = []
        func epilogue(_ g: ConvolutionGroup, _ o: Operands) -> UnsafeMutablePointer<fg_conv_epilogue> {
            let e = UnsafeMutablePointer<fg_conv_epilogue>.allocate(capacity: 1)
            e.initialize(to: fg_conv_epilogue(min1: g.convolutionRange.0, max1: g.convolutionRange.1, residual: o.residual,
                                              residual_stride: o.residual == nil ? 0 : g.residualChannels,
                                              residual_channels: o.residual == nil ? 0 : Int32(g.residualChannels),
                                              min2: g.additionRange.0, max2: g.additionRange.1,
                                              prelu_slopes: o.slopes, hard_swish: g.hardSwish ? 1 : 0))
            owned.append(UnsafeMutableRawPointer(e))
            return e
        }
        func stage(_ g: ConvolutionGroup, _ o: Operands) -> UnsafeMutablePointer<fg_pointwise_stage> {
            let k = Int32(g.windowSize), n = Int32(g.outputChannels)
            let packed = UnsafeMutablePointer<Float>.allocate(capacity: fg_conv_packed_count(k, n))
            fg_conv_pack(o.weights, o.bias, k, n, packed)
            owned.append(UnsafeMutableRawPointer(packed))
            let s = UnsafeMutablePointer<fg_pointwise_stage>.allocate(capacity: 1)
            s.initialize(to: fg_pointwise_stage(packed: packed, k: k, n: n, epilogue: epilogue(g, o)))
            owned.append(UnsafeMutableRawPointer(s))
            return s
        }
        let channels = Int32(group.depthwise.outputChannels), taps = Int32(group.depthwise.windowSize)
        packedDepthwise = .allocate(capacity: fg_dwconv_packed_count(taps, channels))
        fg_dwconv_pack(dw.weights, dw.bias, taps, channels, packedDepthwise)
        depthwiseEpilogue = epilogue(group.depthwise, dw)
        expansion = group.expansion.flatMap { g in ex.map { stage(g, $0) } }
        projection = group.projection.flatMap { g in pr.map { stage(g, $0) } }
        allocations = owned
        geometry = .allocate(capacity: 1)
        geometry.initialize(to: group.depthwise.geometry)
        let threads = threadpool.map { pthreadpool_get_threads_count($0) } ?? 1
        let rows = fg_dwconv_rows(geometry)
        parts = KernelParts(count: min(threads, rows / BandedBlockGroup.rowsPerThread), threadpool: threadpool)
        rowsPerPart = (rows + parts.count - 1) / parts.count
        let g = group.depthwise.geometry
        bandRows = group.expansion == nil ? 1 : fg_banded_block_band_rows(geometry, BandedBlockGroup.bandBudget)
        bandCount = bandRows * Int(g.in_w) * Int(channels)
        bands = .allocate(capacity: bandCount * parts.count)
        middleRows = group.projection == nil ? 0 : max(1, BandedBlockGroup.middleBudget / max(1, Int(g.out_w) * Int(channels)))
        middleCount = max(1, middleRows * Int(g.out_w) * Int(channels))
        middles = .allocate(capacity: middleCount * parts.count)
        parts.bind { [unowned self] in self.run(part: $0) }
    }

    deinit {
        packedDepthwise.deallocate()
        geometry.deallocate()
        bands.deallocate()
        middles.deallocate()
        for p in allocations { p.deallocate() }
    }

    func run() { parts.run() }

    /// Depthwise output rows part·rowsPerPart …, with scratch of its own.
    private func run(part: Int) {
        let first = part * rowsPerPart
        fg_banded_block_part(input, expansion, geometry, packedDepthwise, depthwiseEpilogue, projection, output,
                             bands + part * bandCount, bandRows, middles + part * middleCount, middleRows,
                             first, first + rowsPerPart, 1)
    }
}
