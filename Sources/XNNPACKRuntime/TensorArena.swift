import Foundation

/// One block of memory for the tensors that live only inside a prediction, each placed at an
/// offset that no tensor alive at the same time overlaps (greedy by size, as TFLite's arena
/// planner and XNNPACK's runtime do).
///
/// Why: with a buffer of its own for every tensor, a network's activations add up to many
/// megabytes (EfficientNet-Lite0's own-kernel plan: 18.43 MB), every layer writes to memory last
/// touched a whole prediction earlier, and each cache line it writes is first read back from
/// memory. Shared, the few tensors alive at once stay near the caches (EfficientNet-Lite0: 4.02 MB;
/// `framegraph model bench` prints both), and a layer writes where a layer before it has just read.
final class TensorArena: @unchecked Sendable {
    /// A tensor to place: its bytes and the first and last stage (inclusive) that touch it.
    struct Lifetime: Equatable {
        var tensor: Int
        var bytes: Int
        var first: Int
        var last: Int

        func overlapsInTime(_ other: Lifetime) -> Bool { first <= other.last && other.first <= last }
    }

    /// Where each tensor goes, and the arena's size in bytes.
    struct Layout: Equatable {
        var offsets: [Int: Int]
        var bytes: Int
    }

    /// Every placement starts on a 64-byte boundary and keeps 64 bytes of slack after the tensor
    /// (XNNPACK may read up to XNN_EXTRA_BYTES past the end).
    static let alignment = 64

    /// Tensors past which the greedy search (quadratic in their number) gives way to one place per
    /// tensor: a crafted model of many tiny operations must not make compiling it take minutes.
    static let mostPlannedTensors = 4096

    /// Places `lifetimes`: largest first (ties by tensor), each at the lowest aligned offset where it
    /// overlaps no tensor already placed whose stages overlap its own; past `mostPlannedTensors`
    /// tensors, one after the other.
    static func layout(_ lifetimes: [Lifetime]) -> Layout {
        if lifetimes.count > mostPlannedTensors {
            var offsets: [Int: Int] = [:], total = 0
            for t in lifetimes {
                offsets[t.tensor] = total
                total += paddedSize(t.bytes)
            }
            return Layout(offsets: offsets, bytes: total)
        }
        let order = lifetimes.sorted { ($0.bytes, -$0.tensor) > ($1.bytes, -$1.tensor) }
        var placed: [(lifetime: Lifetime, offset: Int, end: Int)] = []
        var offsets: [Int: Int] = [:], total = 0
        for t in order {
            let size = paddedSize(t.bytes)
            let busy = placed.filter { $0.lifetime.overlapsInTime(t) }.sorted { $0.offset < $1.offset }
            var offset = 0
            for b in busy where b.offset < offset + size {
                offset = max(offset, b.end)
            }
            placed.append((t, offset, offset + size))
            offsets[t.tensor] = offset
            total = max(total, offset + size)
        }
        return Layout(offsets: offsets, bytes: total)
    }

    static func paddedSize(_ bytes: Int) -> Int {
        (max(bytes, 4) + alignment + alignment - 1) / alignment * alignment
    }

    let layout: Layout
    private let base: UnsafeMutableRawPointer

    /// Allocates (zeroed) the memory for `lifetimes`.
    init(_ lifetimes: [Lifetime]) {
        layout = TensorArena.layout(lifetimes)
        base = TensorBuffer.allocateZeroed(bytes: max(layout.bytes, TensorArena.alignment))
    }

    deinit { free(base) }

    /// The buffer of `tensor` (one of the lifetimes given) with `shape`; it keeps the arena alive.
    func buffer(for tensor: Int, shape: [Int]) -> TensorBuffer? {
        guard let offset = layout.offsets[tensor] else { return nil }
        return TensorBuffer(shape: shape, pointer: (base + offset).assumingMemoryBound(to: Float.self), owner: self)
    }
}
