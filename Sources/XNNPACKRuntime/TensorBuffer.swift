import Foundation

/// Float32 memory for one tensor during prediction: 64-byte aligned, with the slack past the end that
/// XNNPACK may read (XNN_EXTRA_BYTES), reused for every prediction.
public final class TensorBuffer: @unchecked Sendable {
    public let shape: [Int]
    public let count: Int
    public let pointer: UnsafeMutablePointer<Float>

    init(shape: [Int]) {
        self.shape = shape
        count = shape.reduce(1, *)
        var p: UnsafeMutableRawPointer?
        posix_memalign(&p, 64, max(count, 1) * 4 + 64)
        let raw = p ?? UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 4 + 64, alignment: 64)
        memset(raw, 0, max(count, 1) * 4 + 64)
        pointer = raw.assumingMemoryBound(to: Float.self)
    }

    deinit { free(pointer) }

    /// The tensor's elements.
    public var values: UnsafeMutableBufferPointer<Float> { UnsafeMutableBufferPointer(start: pointer, count: count) }
}
