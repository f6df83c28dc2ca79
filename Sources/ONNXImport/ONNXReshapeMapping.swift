import NeuralGraph

/// Flatten, Reshape, Squeeze and Unsqueeze: one IR reshape, or an alias when nothing changes.
///
/// A 4-D activation is NHWC in the IR, so a reshape to or from 4-D keeps ONNX's (NCHW) element order
/// only when each 4-D shape involved has one channel or is 1×1 spatially ([N, C, 1, 1] → [N, C] is
/// fine); other reshapes would need a transpose and are refused with that reason. Constants are
/// reshaped at import.
extension ONNXGraphBuilder {
    mutating func mapReshape(_ c: ONNXNodeContext) throws {
        guard let name = c.inputName(0), let input = try value(name) else { throw c.invalid("lacks its input") }
        let shape: [Int]
        switch input {
        case .activation(_, let s): shape = s
        case .constant(let k): shape = k.shape
        case .unavailable: throw UnsupportedOperator("input unavailable")
        }
        let out = try targetShape(c, input: shape)
        guard ShapeArithmetic.elementCount(out) == ShapeArithmetic.elementCount(shape) else {
            throw ModelError.shapeMismatch(operation: c.label, tensor: c.node.outputs[0],
                                           expected: "\(ShapeArithmetic.elementCount(shape) ?? 0) elements (input \(describe(shape)))",
                                           got: describe(out))
        }
        switch input {
        case .constant(var k):
            k.shape = out
            setConstant(c, k)
        case .activation(let t, _):
            if out == shape {
                values[c.node.outputs[0]] = input
                if naturalOrder.contains(name) { naturalOrder.insert(c.node.outputs[0]) }
                return
            }
            // An input in ONNX's own order (after an NCHW → NHWC Transpose) reshapes as it is.
            let natural = naturalOrder.contains(name)
            guard natural || ONNXLayout.sameOrder(shape), ONNXLayout.sameOrder(out) else {
                throw UnsupportedOperator("\(describe(shape)) → \(describe(out)) changes NCHW element order, which the NHWC graph " +
                                          "cannot follow without a transpose (only 4-D shapes with C = 1 or H·W = 1 can be reshaped)")
            }
            try emit(c, .reshape, inputs: [t], shape: out)
        case .unavailable:
            throw UnsupportedOperator("input unavailable")
        }
    }

    /// The output shape of Flatten, Reshape, Squeeze or Unsqueeze for an input of `shape`.
    mutating func targetShape(_ c: ONNXNodeContext, input shape: [Int]) throws -> [Int] {
        let rank = shape.count
        switch c.node.opType {
        case "Flatten":
            let raw = try c.int("axis", 1)
            let axis = raw < 0 ? raw + rank : raw
            guard axis >= 0, axis <= rank else { throw c.invalid("axis \(raw) is outside 0...\(rank)") }
            return [shape[..<axis].reduce(1, *), shape[axis...].reduce(1, *)]
        case "Reshape":
            let requested: [Int]
            if opset < 5 {
                guard let s = c.ints("shape") else { throw c.invalid("lacks its 'shape' attribute") }
                requested = s
            } else {
                guard let s = try requiredConstant(c, 1, "shape").integers else { throw c.invalid("shape is not integers") }
                requested = s
            }
            let allowZero = try c.int("allowzero", 0) != 0
            var out: [Int] = []
            var inferred: Int?
            for (k, d) in requested.enumerated() {
                if d == 0 && !allowZero {
                    guard k < rank else { throw c.invalid("shape \(requested) copies dimension \(k) of a rank-\(rank) input") }
                    out.append(shape[k])
                } else if d == -1 {
                    guard inferred == nil else { throw c.invalid("shape \(requested) has more than one -1") }
                    inferred = k
                    out.append(1)
                } else {
                    guard d >= 0, d < 1 << 40 else { throw c.invalid("shape \(requested) has an invalid dimension \(d)") }
                    out.append(d)
                }
            }
            if let k = inferred {
                guard let total = ShapeArithmetic.elementCount(shape), let known = ShapeArithmetic.elementCount(out),
                      known > 0, total % known == 0 else {
                    throw c.invalid("shape \(requested) does not fit an input of \(describe(shape))")
                }
                out[k] = total / known
            }
            return out
        case "Squeeze":
            let axes = try axesArgument(c, rank: rank) ?? shape.indices.filter { shape[$0] == 1 }
            for a in axes where shape[a] != 1 { throw c.invalid("cannot squeeze axis \(a) of size \(shape[a])") }
            return shape.indices.filter { !axes.contains($0) }.map { shape[$0] }
        default:  // Unsqueeze
            guard let raw = try axesArgument(c, rank: nil) else { throw c.invalid("lacks its axes") }
            let outRank = rank + raw.count
            let axes = Set(raw.map { $0 < 0 ? $0 + outRank : $0 })
            guard axes.count == raw.count, axes.allSatisfy({ $0 >= 0 && $0 < outRank }) else {
                throw c.invalid("axes \(raw) are invalid for a rank-\(outRank) output")
            }
            var rest = shape[...]
            return (0..<outRank).map { axes.contains($0) ? 1 : rest.popFirst() ?? 1 }
        }
    }

    /// Squeeze/Unsqueeze axes: the attribute before opset 13, input 1 from 13; normalised when `rank` is given.
    mutating func axesArgument(_ c: ONNXNodeContext, rank: Int?) throws -> [Int]? {
        let raw: [Int]?
        if opset < 13 {
            raw = c.ints("axes")
        } else {
            raw = try constant(c, 1).map { k throws -> [Int] in
                guard let i = k.integers else { throw c.invalid("axes are not integers") }
                return i
            }
        }
        guard let raw, let rank else { return raw }
        let axes = raw.map { $0 < 0 ? $0 + rank : $0 }
        guard axes.allSatisfy({ $0 >= 0 && $0 < rank }), Set(axes).count == axes.count else {
            throw c.invalid("axes \(raw) are invalid for a rank-\(rank) input")
        }
        return axes
    }
}

extension ONNXGraphBuilder {
    /// Throws unless `name` is in the importer's usual NCHW → NHWC layout (only Transpose, Reshape,
    /// Identity and graph outputs read tensors in ONNX's own NHWC order).
    func requireNCHW(_ name: String) throws {
        guard naturalOrder.contains(name) else { return }
        throw UnsupportedOperator("input '\(name)' is in NHWC order after a Transpose; only Transpose, Reshape and graph outputs can read it")
    }

    /// Transpose: constants are transposed at import; on 4-D activations only the NCHW ↔ NHWC pair
    /// (perm [0, 2, 3, 1] and back [0, 3, 1, 2]) is supported, and it costs nothing: the IR tensor
    /// already holds that order, so the output aliases it.
    mutating func mapTranspose(_ c: ONNXNodeContext) throws {
        guard let name = c.inputName(0), let input = try value(name) else { throw c.invalid("lacks its input") }
        let shape: [Int]
        switch input {
        case .constant(let k): shape = k.shape
        case .activation(_, let s): shape = s
        case .unavailable: throw UnsupportedOperator("input unavailable")
        }
        let perm = c.ints("perm") ?? Array(shape.indices.reversed())
        guard perm.count == shape.count, Set(perm) == Set(shape.indices) else {
            throw c.invalid("perm \(perm) is not a permutation of \(shape.count) axes")
        }
        let out = perm.map { shape[$0] }
        let output = c.node.outputs[0]
        switch input {
        case .constant(let k):
            guard k.count <= Self.maxFoldedElements else { throw UnsupportedOperator("transposing a large constant") }
            let values: ONNXConstant.Values
            switch k.values {
            case .floats(let v): values = .floats(ONNXLayout.transpose(v, shape: shape, permutation: perm))
            case .integers(let v): values = .integers(ONNXLayout.transpose(v, shape: shape, permutation: perm))
            }
            setConstant(c, ONNXConstant(shape: out, values: values))
        case .activation(let t, _):
            let natural = naturalOrder.contains(name)
            if perm == Array(shape.indices) {
                values[output] = input
                if natural { naturalOrder.insert(output) }
            } else if shape.count == 4, !natural, perm == [0, 2, 3, 1] {
                values[output] = .activation(tensor: t, shape: out)
                naturalOrder.insert(output)
            } else if shape.count == 4, natural, perm == [0, 3, 1, 2] {
                values[output] = .activation(tensor: t, shape: out)
            } else {
                throw UnsupportedOperator("perm \(perm) on \(describe(shape)); only NCHW ↔ NHWC is supported")
            }
        case .unavailable:
            throw UnsupportedOperator("input unavailable")
        }
    }

    /// ReduceMean over constant axes (attribute before opset 18, input from 18).
    mutating func mapReduceMean(_ c: ONNXNodeContext) throws {
        let x = try activation(c, 0)
        let rank = x.shape.count
        let raw: [Int]
        if opset < 18 {
            raw = c.ints("axes") ?? Array(0..<rank)
        } else if let k = try constant(c, 1) {
            guard let i = k.integers else { throw c.invalid("axes are not integers") }
            raw = i.isEmpty ? Array(0..<rank) : i
        } else {
            raw = Array(0..<rank)
        }
        let axes = raw.map { $0 < 0 ? $0 + rank : $0 }
        guard axes.allSatisfy({ $0 >= 0 && $0 < rank }), Set(axes).count == axes.count else {
            throw c.invalid("axes \(raw) are invalid for a rank-\(rank) input")
        }
        let keep = try c.int("keepdims", 1) != 0
        let out = keep ? x.shape.indices.map { axes.contains($0) ? 1 : x.shape[$0] }
                       : x.shape.indices.filter { !axes.contains($0) }.map { x.shape[$0] }
        if rank == 4, !keep {
            // Dropping axes keeps NCHW order in NHWC memory unless channels and a spatial axis both remain.
            let kept = Set(0..<4).subtracting(axes)
            guard !(kept.contains(1) && (kept.contains(2) || kept.contains(3))) || ONNXLayout.sameOrder(x.shape) else {
                throw UnsupportedOperator("keepdims=0 over axes \(raw) of \(describe(x.shape)) (would need a transpose)")
            }
        }
        let irAxes = axes.map { ONNXLayout.irAxis($0, rank: rank) }.sorted()
        try emit(c, .mean(axes: irAxes, keepDims: keep), inputs: [x.tensor], shape: out)
    }
}
