import Foundation

/// A block of 64-byte-aligned pixel memory. It comes from a ``BufferPool`` and returns to it when the
/// last ``Frame`` that refers to it goes away, so a running graph reuses memory instead of allocating.
///
/// Writing convention: only the node that took the buffer from the pool writes into it, before it
/// passes the frame on; after that every holder only reads. That is what makes sharing it across
/// threads safe, and why it is marked `@unchecked Sendable`.
public final class PixelBuffer: @unchecked Sendable {
    /// Start of the memory.
    public let bytes: UnsafeMutableRawPointer
    /// Usable size in bytes.
    public let capacity: Int
    private let pool: BufferPool?

    init(bytes: UnsafeMutableRawPointer, capacity: Int, pool: BufferPool?) {
        self.bytes = bytes
        self.capacity = capacity
        self.pool = pool
    }

    deinit {
        if let pool {
            pool.recycle(bytes, capacity: capacity)
        } else {
            free(bytes)
        }
    }

    /// Allocates aligned memory outside any pool (freed when the buffer goes away).
    public static func unpooled(capacity: Int) -> PixelBuffer {
        PixelBuffer(bytes: BufferPool.allocateAligned(capacity), capacity: capacity, pool: nil)
    }
}
