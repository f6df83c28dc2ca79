import Foundation

/// Recycles pixel memory by size, so that in steady state a graph allocates no frame memory.
///
/// A ``PixelBuffer`` taken from the pool gives its memory back when it is released. The pool keeps at
/// most ``maxFreePerSize`` idle blocks per size and frees the rest, so memory stays bounded when sizes
/// change. `allocations` counts the blocks it had to create: tests check that it stops growing.
public final class BufferPool: Sendable {
    /// The pool every node uses unless given another.
    public static let shared = BufferPool()

    /// Idle blocks kept per size.
    public let maxFreePerSize: Int

    /// An idle block; only the pool touches it while it is idle.
    private struct IdleBlock: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private struct State {
        var free: [Int: [IdleBlock]] = [:]
        var allocations = 0
        var reuses = 0
    }
    private let state = Protected(State())

    public init(maxFreePerSize: Int = 16) {
        self.maxFreePerSize = maxFreePerSize
    }

    /// Memory blocks created so far (not counting reuses).
    public var allocations: Int { state.withLock { $0.allocations } }
    /// Requests served from idle blocks.
    public var reuses: Int { state.withLock { $0.reuses } }

    /// A buffer of at least `capacity` bytes (rounded up to 64), reused when one is idle.
    public func buffer(capacity: Int) -> PixelBuffer {
        let size = (max(capacity, 1) + 63) & ~63
        let reused: UnsafeMutableRawPointer? = state.withLock { s in
            if var list = s.free[size], let block = list.popLast() {
                s.free[size] = list
                s.reuses += 1
                return block.pointer
            }
            s.allocations += 1
            return nil
        }
        let bytes = reused ?? BufferPool.allocateAligned(size)
        return PixelBuffer(bytes: bytes, capacity: size, pool: self)
    }

    func recycle(_ bytes: UnsafeMutableRawPointer, capacity: Int) {
        let block = IdleBlock(pointer: bytes)
        let keep: Bool = state.withLock { s in
            var list = s.free[capacity, default: []]
            guard list.count < maxFreePerSize else { return false }
            list.append(block)
            s.free[capacity] = list
            return true
        }
        if !keep { free(bytes) }
    }

    static func allocateAligned(_ size: Int) -> UnsafeMutableRawPointer {
        var pointer: UnsafeMutableRawPointer?
        // 64 extra bytes of slack let SIMD kernels read a little past the last row.
        let status = posix_memalign(&pointer, 64, size + 64)
        guard status == 0, let pointer else {
            fatalError("out of memory allocating \(size) bytes of pixel memory")
        }
        return pointer
    }

    deinit {
        state.withLock { s in
            for (_, list) in s.free { list.forEach { free($0.pointer) } }
            s.free.removeAll()
        }
    }
}
