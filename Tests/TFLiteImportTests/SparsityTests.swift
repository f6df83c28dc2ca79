@testable import TFLiteImport
import Testing

/// Sparse constants (TFLite's DENSIFY, folded at import), against layouts worked out by hand, and
/// layouts that do not fit their values or shape refused with a reason.
@Suite struct SparsityTests {
    func dense(_ s: TFLiteSparsity, _ values: [Float], _ shape: [Int]) -> [Float]? {
        if case .success(let d) = s.densify(values, shape: shape) { return d }
        return nil
    }

    func reason(_ s: TFLiteSparsity, _ values: [Float], _ shape: [Int]) -> String? {
        if case .failure(let e) = s.densify(values, shape: shape) { return e.reason }
        return nil
    }

    @Test func compressedRowsExpandToTheirColumns() {
        // 3×4: row 0 has columns 1 and 3, row 1 nothing, row 2 column 0.
        let csr = TFLiteSparsity(traversalOrder: [0, 1], blockMap: [],
                                 levels: [.dense(size: 3), .sparse(segments: [0, 2, 2, 3], indices: [1, 3, 0])])
        #expect(dense(csr, [1, 2, 3], [3, 4]) == [0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0])
        // The same matrix stored column-major (traversal order 1, 0).
        let columns = TFLiteSparsity(traversalOrder: [1, 0], blockMap: [],
                                     levels: [.dense(size: 4), .sparse(segments: [0, 1, 2, 2, 3], indices: [2, 0, 0])])
        #expect(dense(columns, [3, 1, 2], [3, 4]) == [0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0])
    }

    @Test func blocksExpandToTheirPlaceInTheirBlockColumn() {
        // 4×4 in 1×2 blocks along dimension 1: row 0 has block 1 (columns 2, 3), row 2 block 0.
        let blocks = TFLiteSparsity(traversalOrder: [0, 1, 2], blockMap: [1],
                                    levels: [.dense(size: 4), .sparse(segments: [0, 1, 1, 2, 2], indices: [1, 0]), .dense(size: 2)])
        #expect(dense(blocks, [1, 2, 3, 4], [4, 4]) == [0, 0, 1, 2, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0])
    }

    @Test func layoutsThatDoNotFitAreRefusedWithAReason() {
        let base: [TFLiteSparsity.Level] = [.dense(size: 3), .sparse(segments: [0, 2, 2, 3], indices: [1, 3, 0])]
        let ok = TFLiteSparsity(traversalOrder: [0, 1], blockMap: [], levels: base)
        #expect(reason(ok, [1, 2], [3, 4])?.contains("more entries than the 2 stored values") == true)
        #expect(reason(ok, [1, 2, 3, 4], [3, 4])?.contains("4 stored values, 3 placed") == true)
        let outOfRange = TFLiteSparsity(traversalOrder: [0, 1], blockMap: [], levels: [.dense(size: 3), .sparse(segments: [0, 2, 2, 3], indices: [1, 9, 0])])
        #expect(reason(outOfRange, [1, 2, 3], [3, 4])?.contains("index 9 outside 0…3") == true)
        let badSegments = TFLiteSparsity(traversalOrder: [0, 1], blockMap: [], levels: [.dense(size: 3), .sparse(segments: [0, 5, 2, 3], indices: [1, 3, 0])])
        #expect(reason(badSegments, [1, 2, 3], [3, 4])?.contains("outside its 3 indices") == true)
        let shortSegments = TFLiteSparsity(traversalOrder: [0, 1], blockMap: [], levels: [.dense(size: 3), .sparse(segments: [0, 2], indices: [1, 3])])
        #expect(reason(shortSegments, [1, 2], [3, 4])?.contains("beyond its 2 boundaries") == true)
        let notPermutation = TFLiteSparsity(traversalOrder: [0, 0], blockMap: [], levels: base)
        #expect(reason(notPermutation, [1, 2, 3], [3, 4])?.contains("not a permutation") == true)
        let wrongDense = TFLiteSparsity(traversalOrder: [0, 1], blockMap: [], levels: [.dense(size: 5), .sparse(segments: [0, 2, 2, 3], indices: [1, 3, 0])])
        #expect(reason(wrongDense, [1, 2, 3], [3, 4])?.contains("dense level 0 has size 5") == true)
        #expect(reason(ok, [1], [1 << 13, 1 << 12])?.contains("larger than") == true)
        let badBlock = TFLiteSparsity(traversalOrder: [0, 1, 2], blockMap: [1], levels: [.dense(size: 4), .sparse(segments: [0, 1, 1, 2, 2], indices: [1, 0]), .dense(size: 3)])
        #expect(reason(badBlock, [1, 2, 3, 4], [4, 4])?.contains("does not divide") == true)
    }
}
