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
        pointer = TensorBuffer.allocateZeroed(bytes: max(count, 1) * 4 + 64).assumingMemoryBound(to: Float.self)
        owner = nil
    }

    /// Zeroed memory on a 64-byte boundary, released with `free` (a buffer's own, or an arena's).
    static func allocateZeroed(bytes: Int) -> UnsafeMutableRawPointer {
        var p: UnsafeMutableRawPointer?
        guard posix_memalign(&p, 64, bytes) == 0, let raw = p else {
            fatalError("out of memory allocating \(bytes) bytes of tensor memory")
        }
        memset(raw, 0, bytes)
        return raw
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
