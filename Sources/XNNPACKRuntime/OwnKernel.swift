import CXNNPACK
import NeuralGraph

/// Operations of a graph that one of FrameGraph's own kernels runs in one pass (a convolution and
/// what follows it, an inverted-residual block in bands, the colorizer's annealed mean, an
/// upsampling layer and its sigmoid), found
/// before the graph is split into XNNPACK stages.
protocol OwnKernelGroup {
    /// Every node the group runs.
    var nodes: [Int] { get }
    /// The graph position the group runs at (its last node: every input exists by then).
    var position: Int { get }
    /// Tensors the kernel reads or writes, which need buffers of their own.
    var boundaryTensors: [Int] { get }
    /// The kernel, bound to the predictor's buffers.
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel
}

/// A group bound to the predictor's buffers, run once per prediction.
protocol OwnKernel: AnyObject {
    /// The group's nodes, in the order the plan summary lists them.
    var nodeIndices: [Int] { get }
    func run()
}

extension ConvolutionGroup: OwnKernelGroup {
    var boundaryTensors: [Int] { [input, output] + (residual.map { [$0] } ?? []) }
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel {
        try ConvolutionKernel(self, graph: graph, buffers: buffers, constants: constants, threadpool: threadpool)
    }
}

extension SoftmaxProjectionGroup: OwnKernelGroup {
    var boundaryTensors: [Int] { [input, output] }
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel {
        try SoftmaxProjectionKernel(self, graph: graph, buffers: buffers, constants: constants, threadpool: threadpool)
    }
}

extension UpsamplingGroup: OwnKernelGroup {
    var boundaryTensors: [Int] { [input, output] }
    func kernel(graph: NeuralGraph, buffers: [Int: TensorBuffer], constants: [Int: ConstantStorage],
                threadpool: pthreadpool_t?) throws -> any OwnKernel {
        try UpsamplingKernel(self, graph: graph, buffers: buffers, constants: constants, threadpool: threadpool)
    }
}

extension ConvolutionKernel: OwnKernel {
    var nodeIndices: [Int] { group.nodes.sorted() }
}

extension SoftmaxProjectionKernel: OwnKernel {
    var nodeIndices: [Int] { group.nodes }
}

extension UpsamplingKernel: OwnKernel {
    var nodeIndices: [Int] { group.nodes }
}

/// Every group of `graph` (lowered for XNNPACK) that FrameGraph's own kernels run; no node is in two
/// (a later candidate that overlaps an earlier one is dropped). `fuse` = false keeps each convolution
/// to itself and finds no multi-operation group (for timing operations one by one). `threads`: the
/// thread pool's threads (blocks with too few rows to share are not banded). `banding` = false runs
/// no block in bands (int8 runs the 1×1 convolutions of the blocks instead).
func ownKernelGroups(in graph: NeuralGraph, fuse: Bool, threads: Int = 1, banding: Bool = true) -> [any OwnKernelGroup] {
    // The annealed mean first: its convolution is not a group of its own.
    let readers = GraphReaders(graph)
    var candidates: [any OwnKernelGroup] = fuse ? SoftmaxProjectionGroup.groups(in: graph, readers: readers) : []
    candidates += UpsamplingGroup.groups(in: graph, readers: readers).filter { fuse || $0.sigmoid == nil } as [any OwnKernelGroup]
    let convolutions = ConvolutionFusion.groups(in: graph, readers: readers, fuse: fuse)
    // An inverted-residual block run in bands before its convolutions alone.
    if fuse, banding { candidates += BandedBlockGroup.groups(from: convolutions, readers: readers, threads: threads) as [any OwnKernelGroup] }
    candidates += convolutions as [any OwnKernelGroup]
    if fuse { candidates += ElementwiseGroup.groups(in: graph, readers: readers) as [any OwnKernelGroup] }
    // Own kernels compute in float32: a group that touches a quantized tensor stays XNNPACK's (its
    // integer kernels are the arithmetic a quantized model was made for).
    let quantized = Set(graph.nodes.indices.filter { n in
        (graph.nodes[n].inputs + graph.nodes[n].outputs).contains { $0 >= 0 && graph.tensors[$0].isQuantized }
    })
    var taken = quantized, groups: [any OwnKernelGroup] = []
    for g in candidates where taken.isDisjoint(with: g.nodes) {
        taken.formUnion(g.nodes)
        groups.append(g)
    }
    return groups
}
