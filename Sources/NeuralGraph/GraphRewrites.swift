/// Rewrites of the graph IR that executors use before compiling: dead operations removed, tanh split
/// out of fused activations, ReLU-family activations folded into the operation before them, 1×1
/// convolutions moved before the bilinear upsampling that feeds them.
extension NeuralGraph {
    /// The graph as the XNNPACK executor runs it: dead operations removed, zero padding folded into the
    /// convolution after it, tanh split out, ReLUs fused, 1×1 convolutions run before the upsampling
    /// in front of them.
    public func loweredForXNNPACK() -> NeuralGraph {
        removingDeadOperations().foldingZeroPadding().splittingTanh().fusingActivations().convolvingBeforeUpsampling()
    }

    /// The graph with only the outputs `keep` accepts (in their order; all of them when it accepts
    /// none), so that the executor's dead-operation removal drops what only fed the others (the pose
    /// landmark model's 256×256 segmentation head when no mask is wanted).
    public func keepingOutputs(where keep: (TensorValue) -> Bool) -> NeuralGraph {
        let kept = outputs.filter { $0 >= 0 && $0 < tensors.count && keep(tensors[$0]) }
        guard !kept.isEmpty else { return self }
        var g = self
        g.outputs = kept
        return g
    }

    /// Removes operations none of whose outputs reaches a graph output (a crafted or badly converted
    /// model can have them; a runtime would be asked to produce values nobody has room for).
    public func removingDeadOperations() -> NeuralGraph {
        var live = Set(outputs)
        var keep = [Bool](repeating: false, count: nodes.count)
        for (i, node) in nodes.enumerated().reversed() where node.outputs.contains(where: live.contains) {
            keep[i] = true
            live.formUnion(node.inputs.filter { $0 >= 0 })
        }
        var g = self
        g.nodes = nodes.enumerated().filter { keep[$0.offset] }.map(\.element)
        return g
    }

    /// Folds a zero PAD of the height and width only, whose one reader is a float convolution or
    /// depthwise convolution, into that convolution's own padding (explicit, added to what it had):
    /// the same sums without writing and reading the padded copy (TensorFlow's converter emits such
    /// pads before stride-2 convolutions; MediaPipe's pose landmark model has five, the first over
    /// its whole 258×258 input).
    public func foldingZeroPadding() -> NeuralGraph {
        var g = self
        let (consumers, producer) = g.readersAndProducers
        var removed = Set<Int>()
        for (c, conv) in g.nodes.enumerated() {
            guard conv.inputs.count >= 2, conv.inputs[0] >= 0 else { continue }
            var p: ConvolutionParameters
            let depthwise: Bool
            switch conv.operation {
            case .conv2d(let q): p = q; depthwise = false
            case .depthwiseConv2d(let q): p = q; depthwise = true
            default: continue
            }
            let padded = conv.inputs[0]
            guard consumers[padded] == 1, let pi = producer[padded], !removed.contains(pi) else { continue }
            let pad = g.nodes[pi]
            guard case .pad(let paddings, let value) = pad.operation, value == 0, paddings.count == 4,
                  paddings[0].0 == 0, paddings[0].1 == 0,
                  paddings[3].0 == 0, paddings[3].1 == 0,
                  paddings[1].0 >= 0, paddings[1].1 >= 0, paddings[2].0 >= 0, paddings[2].1 >= 0,
                  let source = pad.inputs.first, source >= 0, pad.outputs == [padded],
                  !g.tensors[source].isQuantized, !g.tensors[padded].isQuantized,
                  g.tensors[source].elementType == .float32, g.tensors[source].shape.count == 4 else { continue }
            let before: (top: Int, left: Int, bottom: Int, right: Int)
            switch p.padding {
            case .valid: before = (0, 0, 0, 0)
            case .explicit(let t, let l, let b, let r): before = (t, l, b, r)
            case .same: continue  // its amounts depend on the padded size: left as it is
            }
            p.padding = .explicit(top: before.top + paddings[1].0, left: before.left + paddings[2].0,
                                  bottom: before.bottom + paddings[1].1, right: before.right + paddings[2].1)
            var folded = conv
            folded.operation = depthwise ? .depthwiseConv2d(p) : .conv2d(p)
            folded.inputs[0] = source
            g.nodes[c] = folded
            removed.insert(pi)
        }
        g.nodes = g.nodes.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        return g
    }

    /// Splits activations XNNPACK cannot fuse (tanh) into separate operations.
    public func splittingTanh() -> NeuralGraph {
        var g = self
        var nodes: [NeuralNode] = []
        for var node in self.nodes {
            var fused: FusedActivation?
            switch node.operation {
            case .conv2d(var p) where p.activation == .tanh: p.activation = .none; node.operation = .conv2d(p); fused = .tanh
            case .depthwiseConv2d(var p) where p.activation == .tanh: p.activation = .none; node.operation = .depthwiseConv2d(p); fused = .tanh
            case .transposeConv2d(var p) where p.activation == .tanh: p.activation = .none; node.operation = .transposeConv2d(p); fused = .tanh
            case .add(.tanh): node.operation = .add(.none); fused = .tanh
            case .subtract(.tanh): node.operation = .subtract(.none); fused = .tanh
            case .multiply(.tanh): node.operation = .multiply(.none); fused = .tanh
            case .divide(.tanh): node.operation = .divide(.none); fused = .tanh
            default: break
            }
            if fused != nil {
                let final = node.outputs[0]
                var t = g.tensors[final]
                t.name += "/before_tanh"
                let intermediate = g.addTensor(t)
                node.outputs[0] = intermediate
                nodes.append(node)
                nodes.append(NeuralNode(operation: .tanh, inputs: [intermediate], outputs: [final], name: node.name + "/tanh"))
            } else {
                nodes.append(node)
            }
        }
        g.nodes = nodes
        return g
    }

    /// Folds a RELU / RELU6 / RELU_N1_TO_1 that is the only consumer of a convolution, pooling,
    /// fully connected or arithmetic result into that operation's output clamp.
    public func fusingActivations() -> NeuralGraph {
        var g = self
        let (consumers, producer) = g.readersAndProducers
        var removed = Set<Int>()
        for (i, node) in g.nodes.enumerated() {
            let activation: FusedActivation
            switch node.operation {
            case .relu: activation = .relu
            case .relu6: activation = .relu6
            case .reluN1To1: activation = .reluN1To1
            default: continue
            }
            let source = node.inputs[0]
            // A quantized activation's own tensor has its own range: it stays a separate operation.
            guard consumers[source] == 1, let p = producer[source], !removed.contains(p), !g.tensors[source].isQuantized else { continue }
            var fused = g.nodes[p]
            switch fused.operation {
            case .conv2d(var c) where c.activation == .none: c.activation = activation; fused.operation = .conv2d(c)
            case .depthwiseConv2d(var c) where c.activation == .none: c.activation = activation; fused.operation = .depthwiseConv2d(c)
            case .transposeConv2d(var c) where c.activation == .none: c.activation = activation; fused.operation = .transposeConv2d(c)
            case .fullyConnected(.none): fused.operation = .fullyConnected(activation: activation)
            case .add(.none): fused.operation = .add(activation)
            case .subtract(.none): fused.operation = .subtract(activation)
            case .multiply(.none): fused.operation = .multiply(activation)
            case .divide(.none): fused.operation = .divide(activation)
            case .averagePool2d(var q) where q.activation == .none: q.activation = activation; fused.operation = .averagePool2d(q)
            case .maxPool2d(var q) where q.activation == .none: q.activation = activation; fused.operation = .maxPool2d(q)
            default: continue
            }
            fused.outputs = node.outputs
            g.nodes[p] = fused
            removed.insert(i)
        }
        g.nodes = g.nodes.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        return g
    }

    /// Swaps a bilinear upsampling and the 1×1 convolution (no activation) that is its only consumer:
    /// conv(resize(x)) becomes resize(conv(x)). Both are linear per pixel and bilinear weights sum to
    /// one, so the bias commutes too and the result is the same up to rounding; the convolution then
    /// runs over the smaller input (MediaPipe's selfie decoder: 32×32 instead of 64×64, 128 → 24
    /// channels, and the upsampling then moves 24 channels instead of 128).
    public func convolvingBeforeUpsampling() -> NeuralGraph {
        var g = self
        let (consumers, producer) = g.readersAndProducers
        var removed = Set<Int>()
        var replacement: [Int: [NeuralNode]] = [:]
        for (c, conv) in g.nodes.enumerated() {
            guard case .conv2d(let p) = conv.operation, p.activation == .none, p.strideH == 1, p.strideW == 1,
                  conv.inputs.count >= 2, conv.inputs[0] >= 0, conv.outputs.count == 1 else { continue }
            if case .explicit(let top, let left, let bottom, let right) = p.padding, top != 0 || left != 0 || bottom != 0 || right != 0 { continue }
            let upsampled = conv.inputs[0]
            guard consumers[upsampled] == 1, let r = producer[upsampled], !removed.contains(r), replacement[r] == nil else { continue }
            let resize = g.nodes[r]
            guard case .resizeBilinear = resize.operation, resize.inputs.first.map({ $0 >= 0 }) == true, resize.outputs == [upsampled] else { continue }
            let filter = g.tensors[conv.inputs[1]].shape, small = g.tensors[resize.inputs[0]].shape
            let large = g.tensors[upsampled].shape, result = g.tensors[conv.outputs[0]].shape
            guard filter.count == 4, filter[1] == 1, filter[2] == 1, small.count == 4, large.count == 4, result.count == 4,
                  filter[3] == small[3], small[3] == large[3], large[0] == small[0], result[0] == large[0],
                  result[1] == large[1], result[2] == large[2], result[3] == filter[0],
                  large[1] * large[2] > small[1] * small[2],
                  g.tensors[resize.inputs[0]].elementType == .float32, g.tensors[conv.outputs[0]].elementType == .float32 else { continue }
            var narrow = g.tensors[conv.outputs[0]]
            narrow.name += "/before_upsampling"
            narrow.shape = [small[0], small[1], small[2], filter[0]]
            narrow.constant = nil
            let t = g.addTensor(narrow)
            var first = conv
            first.inputs[0] = resize.inputs[0]
            first.outputs = [t]
            var then = resize
            then.inputs[0] = t
            then.outputs = conv.outputs
            removed.insert(r)
            replacement[c] = [first, then]
        }
        var nodes: [NeuralNode] = []
        for (i, node) in g.nodes.enumerated() where !removed.contains(i) {
            nodes += replacement[i] ?? [node]
        }
        g.nodes = nodes
        return g
    }

    /// Per tensor, how many operations read it (a graph output counts as one more reader), and which
    /// operation writes it.
    private var readersAndProducers: (readers: [Int: Int], producer: [Int: Int]) {
        var readers: [Int: Int] = [:]
        for n in nodes { for i in n.inputs where i >= 0 { readers[i, default: 0] += 1 } }
        for o in outputs { readers[o, default: 0] += 1 }
        var producer: [Int: Int] = [:]
        for (i, n) in nodes.enumerated() { for o in n.outputs { producer[o] = i } }
        return (readers, producer)
    }
}
