import NeuralGraph

/// A sparse constant's layout (TFLite's SparsityParameters: traversal_order (0), block_map (1),
/// dim_metadata (2)), read from the file and checked; ``densify(_:shape:)`` expands its stored
/// values into the dense tensor, as TFLite's DENSIFY does. Every index read from the file is checked
/// before it is used: a crafted model gets a typed error, never a read or write out of bounds.
struct TFLiteSparsity {
    /// One level of the traversal: dense (`size` entries) or compressed (CSR: segments, indices).
    enum Level {
        case dense(size: Int)
        case sparse(segments: [Int], indices: [Int])
    }

    let traversalOrder: [Int]
    let blockMap: [Int]
    let levels: [Level]

    /// Most levels accepted (a 4-D tensor with 4 block dimensions has 8).
    static let maxLevels = 8
    /// Largest dense tensor a sparse constant may expand to (16 M values, 64 MiB).
    static let maxDenseElements = 1 << 24

    init(traversalOrder: [Int], blockMap: [Int], levels: [Level]) {
        self.traversalOrder = traversalOrder
        self.blockMap = blockMap
        self.levels = levels
    }

    /// SparsityParameters at `t`. DimensionMetadata: format (0: 0 dense, 1 CSR), dense_size (1),
    /// array_segments (type 2, value 3) and array_indices (type 4, value 5), each an Int32Vector (1),
    /// Uint16Vector (2) or Uint8Vector (3) whose values are field 0.
    init(_ t: FlatTable) throws(FlatBufferError) {
        traversalOrder = try t.int32s(0)
        blockMap = try t.int32s(1)
        var levels: [Level] = []
        for d in try t.tables(2) {
            let format: UInt8 = try d.scalar(0, default: 0)
            if format == 0 {
                levels.append(.dense(size: Int(try d.scalar(1, default: Int32(0)))))
            } else {
                let segments = try Self.integers(d, type: 2, value: 3)
                let indices = try Self.integers(d, type: 4, value: 5)
                levels.append(.sparse(segments: segments, indices: indices))
            }
        }
        self.levels = levels
    }

    private static func integers(_ d: FlatTable, type: Int, value: Int) throws(FlatBufferError) -> [Int] {
        let (kind, table) = try d.union(type: type, value: value)
        guard let table else { return [] }
        switch kind {
        case 1: return try table.int32s(0)
        case 2: return try table.unsignedIntegers(0, elementSize: 2)
        case 3: return try table.unsignedIntegers(0, elementSize: 1)
        default: return []
        }
    }

    /// The dense float32 tensor of `shape` whose non-zero `values` (in traversal order) this layout
    /// places; nil with a reason when the layout does not fit the shape or the values.
    func densify(_ values: [Float], shape: [Int]) -> Result<[Float], DensifyError> {
        let rank = shape.count
        guard let total = ShapeArithmetic.elementCount(shape), total <= Self.maxDenseElements else {
            return .failure(.init("the dense shape \(shape) is larger than \(Self.maxDenseElements) elements"))
        }
        guard levels.count == traversalOrder.count, levels.count >= rank, levels.count <= Self.maxLevels,
              blockMap.count == levels.count - rank else {
            return .failure(.init("\(levels.count) dimension levels for a rank-\(rank) tensor with \(blockMap.count) block dimensions"))
        }
        guard Set(traversalOrder) == Set(0..<levels.count) else { return .failure(.init("traversal order \(traversalOrder) is not a permutation")) }
        guard blockMap.allSatisfy({ (0..<rank).contains($0) }) else { return .failure(.init("block map \(blockMap) names a dimension outside 0…\(rank - 1)")) }
        // The size of each level: dense levels say it; a sparse level's indices must stay within the
        // dimension (or block) it walks.
        var blockSize = [Int](repeating: 1, count: levels.count - rank)
        for (position, level) in levels.enumerated() where traversalOrder[position] >= rank {
            guard case .dense(let size) = level, size >= 1 else { return .failure(.init("a block dimension must be dense with a size")) }
            blockSize[traversalOrder[position] - rank] = size
        }
        var dimensionLimit = shape
        for (b, d) in blockMap.enumerated() {
            guard blockSize[b] > 0, shape[d] % blockSize[b] == 0 else { return .failure(.init("block size \(blockSize[b]) does not divide dimension \(d) (\(shape[d]))")) }
            dimensionLimit[d] = shape[d] / blockSize[b]
        }
        func limit(_ position: Int) -> Int {
            let dim = traversalOrder[position]
            return dim < rank ? dimensionLimit[dim] : blockSize[dim - rank]
        }
        var dense = [Float](repeating: 0, count: total)
        var strides = [Int](repeating: 1, count: rank)
        if rank > 1 { for d in stride(from: rank - 2, through: 0, by: -1) { strides[d] = strides[d + 1] * shape[d + 1] } }
        var next = 0  // the next stored value
        var indices = [Int](repeating: 0, count: levels.count)
        var failure: DensifyError?

        // Depth-first over the levels (at most maxLevels deep); `parent` is the position in the previous level.
        func walk(_ level: Int, parent: Int) {
            guard failure == nil else { return }
            if level == levels.count {
                var original = [Int](repeating: 0, count: rank)
                for position in 0..<levels.count where traversalOrder[position] < rank { original[traversalOrder[position]] = indices[position] }
                for position in 0..<levels.count where traversalOrder[position] >= rank {
                    let b = traversalOrder[position] - rank
                    original[blockMap[b]] = original[blockMap[b]] * blockSize[b] + indices[position]
                }
                guard next < values.count else { failure = .init("more entries than the \(values.count) stored values"); return }
                var flat = 0
                for d in 0..<rank { flat += original[d] * strides[d] }
                dense[flat] = values[next]
                next += 1
                return
            }
            switch levels[level] {
            case .dense(let size):
                guard size == limit(level) else { failure = .init("dense level \(level) has size \(size), the dimension \(limit(level))"); return }
                for i in 0..<size {
                    indices[level] = i
                    walk(level + 1, parent: parent * size + i)
                }
            case .sparse(let segments, let indexList):
                guard parent + 1 < segments.count else { failure = .init("level \(level): segment \(parent) beyond its \(segments.count) boundaries"); return }
                let start = segments[parent], end = segments[parent + 1]
                guard start >= 0, start <= end, end <= indexList.count else { failure = .init("level \(level): segment \(start)…\(end) outside its \(indexList.count) indices"); return }
                for i in start..<end {
                    let index = indexList[i]
                    guard index >= 0, index < limit(level) else { failure = .init("level \(level): index \(index) outside 0…\(limit(level) - 1)"); return }
                    indices[level] = index
                    walk(level + 1, parent: i)
                    if failure != nil { return }
                }
            }
        }
        walk(0, parent: 0)
        if let failure { return .failure(failure) }
        guard next == values.count else { return .failure(.init("\(values.count) stored values, \(next) placed")) }
        return .success(dense)
    }

    struct DensifyError: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
