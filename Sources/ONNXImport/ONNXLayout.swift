/// NCHW → NHWC conversion: ONNX 4-D activations are NCHW; the IR's are NHWC. Shapes, axes and
/// constant data are permuted at import, so the graph runs with no transposes.
enum ONNXLayout {
    /// [N, C, H, W] → [N, H, W, C]; other ranks are unchanged.
    static func irShape(_ onnx: [Int]) -> [Int] {
        onnx.count == 4 ? [onnx[0], onnx[2], onnx[3], onnx[1]] : onnx
    }

    /// The IR axis of ONNX axis `axis` (already non-negative) of a tensor of `rank`.
    static func irAxis(_ axis: Int, rank: Int) -> Int {
        guard rank == 4 else { return axis }
        return [0, 3, 1, 2][axis]
    }

    /// Whether a rank-4 tensor's NCHW and NHWC element orders coincide (one channel, or 1×1 spatially),
    /// so that reshaping it to or from another rank needs no transpose.
    static func sameOrder(_ onnx: [Int]) -> Bool {
        onnx.count != 4 || onnx[1] == 1 || onnx[2] * onnx[3] == 1
    }

    /// Transposes `values` of `shape`: output dimension `k` is input dimension `permutation[k]`.
    static func transpose<T>(_ values: [T], shape: [Int], permutation: [Int]) -> [T] {
        let rank = shape.count
        guard rank > 1, values.count == shape.reduce(1, *), !values.isEmpty else { return values }
        var strides = [Int](repeating: 1, count: rank)
        for d in stride(from: rank - 2, through: 0, by: -1) { strides[d] = strides[d + 1] * shape[d + 1] }
        let outShape = permutation.map { shape[$0] }
        let inStrides = permutation.map { strides[$0] }
        var result = values
        var index = [Int](repeating: 0, count: rank)
        var source = 0
        for o in 0..<values.count {
            result[o] = values[source]
            // Advance the output index (row-major) and the matching source offset.
            var d = rank - 1
            while d >= 0 {
                index[d] += 1
                source += inStrides[d]
                if index[d] < outShape[d] { break }
                source -= inStrides[d] * outShape[d]
                index[d] = 0
                d -= 1
            }
        }
        return result
    }

    /// A constant broadcast against an activation of rank `rank`, in the IR's layout: when `rank` is 4
    /// its shape is right-aligned to 4 dimensions and its data permuted NCHW → NHWC.
    static func irConstant(_ values: [Float], shape: [Int], rank: Int) -> (values: [Float], shape: [Int]) {
        guard rank == 4, shape.count <= 4 else { return (values, shape) }
        let full = Array(repeating: 1, count: 4 - shape.count) + shape
        return (transpose(values, shape: full, permutation: [0, 2, 3, 1]), irShape(full))
    }
}
