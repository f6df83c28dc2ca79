import FrameGraph

/// A network's input, prepared on the thread that delivered the frame (``NetworkNode/prepare(_:context:)``)
/// while the network's worker still ran the previous prediction: the normalised tensor values, in
/// memory from the node's ``BufferPool`` (back to the pool when the worker has copied them and lets
/// go of this).
final class PreparedInput: @unchecked Sendable {
    private let memory: PixelBuffer
    let count: Int
    var values: UnsafeMutablePointer<Float> { memory.bytes.assumingMemoryBound(to: Float.self) }

    init(count: Int, pool: BufferPool) {
        self.count = count
        memory = pool.buffer(capacity: max(count, 1) * MemoryLayout<Float>.stride)
    }
}
