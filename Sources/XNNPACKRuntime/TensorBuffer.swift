import Foundation

/// Float32 memory for one tensor during prediction: 64-byte aligned, with the slack past the end that
/// XNNPACK may read (XNN_EXTRA_BYTES), reused for every prediction. A graph's inputs and outputs
/// own theirs; tensors that live only inside a prediction share a ``TensorArena``.
public final class TensorBuffer: @unchecked Sendable {
    public let shape: [Int]
    public let count: Int
    public let pointer: UnsafeMutablePointer<Float>
    /// The arena this buffer lies in (nil: the buffer owns its memory).
    private let owner: TensorArena?

    init(shape: [Int]) {
        self.shape = shape
        count = shape.reduce(1, *)
        var p: UnsafeMutableRawPointer?
        posix_memalign(&p, 64, max(count, 1) * 4 + 64)
        let raw = p ?? UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 4 + 64, alignment: 64)
        memset(raw, 0, max(count, 1) * 4 + 64)
        pointer = raw.assumingMemoryBound(to: Float.self)
        owner = nil
    }

    /// A view of memory in `owner`, which it keeps alive.
    init(shape: [Int], pointer: UnsafeMutablePointer<Float>, owner: TensorArena) {
        self.shape = shape
        count = shape.reduce(1, *)
        self.pointer = pointer
        self.owner = owner
    }

    deinit { if owner == nil { free(pointer) } }

    /// The tensor's elements.
    public var values: UnsafeMutableBufferPointer<Float> { UnsafeMutableBufferPointer(start: pointer, count: count) }
}
