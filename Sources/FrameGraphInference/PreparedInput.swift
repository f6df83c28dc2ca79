import FrameGraph

/// A network's input, prepared on the thread that delivered the frame (``NetworkNode/prepare(_:context:)``)
/// while the network's worker still ran the previous prediction: the normalised tensor values, in
/// memory borrowed from a ``PreparedInputPool`` and given back when the worker has copied them.
final class PreparedInput: @unchecked Sendable {
    let values: UnsafeMutablePointer<Float>
    let count: Int
    private weak var pool: PreparedInputPool?

    fileprivate init(count: Int, pool: PreparedInputPool) {
        self.count = count
        values = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1))
        self.pool = pool
    }

    deinit { values.deallocate() }

    /// Gives the memory back for the next frame.
    func recycle() { pool?.giveBack(self) }
}

/// A few staging buffers for prepared inputs: one being filled, one waiting for the worker, one
/// being copied (more are never needed with one frame in flight; extras are freed).
final class PreparedInputPool: @unchecked Sendable {
    let count: Int
    private let free = Protected<[PreparedInput]>([])
    private let keep = 3

    init(count: Int) { self.count = count }

    func take() -> PreparedInput {
        free.withLock { $0.popLast() } ?? PreparedInput(count: count, pool: self)
    }

    fileprivate func giveBack(_ input: PreparedInput) {
        free.withLock { if $0.count < keep { $0.append(input) } }
    }
}
