/// Counts for `framegraph model info`: operations by name and floating-point operations.
extension NeuralGraph {
    /// How many operations of each kind, most frequent first.
    public var operationCounts: [(name: String, count: Int)] {
        var counts: [String: Int] = [:]
        for n in nodes { counts[n.operation.name, default: 0] += 1 }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Floating-point operations of one prediction (a multiply-add counts as 2); saturates at
    /// `Int.max` for absurd graphs instead of overflowing.
    public var flops: Int {
        nodes.reduce(0) { total, node in
            let (sum, overflow) = total.addingReportingOverflow(flops(of: node))
            return overflow ? Int.max : sum
        }
    }

    /// Floating-point operations of one node.
    public func flops(of node: NeuralNode) -> Int {
        /// Product of `factors`, saturating at Int.max (negative factors count as 0).
        func product(_ factors: [Int]) -> Int {
            var p = 1
            for f in factors {
                guard f > 0 else { return 0 }
                let (r, o) = p.multipliedReportingOverflow(by: f)
                if o { return Int.max }
                p = r
            }
            return p
        }
        func shape(_ i: Int) -> [Int] {
            node.inputs.count > i && tensors.indices.contains(node.inputs[i]) ? tensors[node.inputs[i]].shape : []
        }
        guard let first = node.outputs.first, tensors.indices.contains(first) else { return 0 }
        let outCount = product(tensors[first].shape)
        switch node.operation {
        case .conv2d:
            let f = shape(1)  // [O, H, W, I]
            return f.count == 4 ? product([2, outCount, f[1], f[2], f[3]]) : 0
        case .depthwiseConv2d:
            let f = shape(1)  // [1, H, W, C]
            return f.count == 4 ? product([2, outCount, f[1], f[2]]) : 0
        case .transposeConv2d:
            let f = shape(1), i = shape(0)
            return f.count == 4 && i.count == 4 ? product([2, i[1], i[2], f[0], f[1], f[2], f[3]]) : 0
        case .fullyConnected:
            let w = shape(1)
            return w.count == 2 ? product([2, outCount, w[1]]) : 0
        case .averagePool2d(let p), .maxPool2d(let p):
            return product([outCount, p.filterH, p.filterW])
        case .mean:
            return product(shape(0))
        case .reshape, .concatenation, .pad, .depthToSpace:
            return 0
        default:
            return outCount
        }
    }
}
