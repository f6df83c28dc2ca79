import CV4L2
import Foundation

/// The camera's memory-mapped capture buffers: requested with VIDIOC_REQBUFS, mapped with
/// `v4l2_mmap`, unmapped and freed (REQBUFS 0) in `deinit`. Keeps its ``V4L2Device`` open until then.
///
/// ```swift
/// let ring = try MappedBufferRing(device: device, count: 4)
/// try ring.queueAll()
/// let bytes = ring.bytes(of: 2)
/// ```
final class MappedBufferRing {
    let device: V4L2Device
    private var mappings: [(pointer: UnsafeMutableRawPointer, length: UInt32)] = []

    /// Number of buffers the driver granted.
    var count: Int { mappings.count }

    /// Requests `count` buffers (the driver may grant a different number, at least 2) and maps them.
    init(device: V4L2Device, count: UInt32) throws {
        self.device = device
        let granted = try device.requestBuffers(count)
        guard granted >= 2 else {
            _ = try? device.requestBuffers(0)
            throw CameraError.unusableFormat(path: device.path, reason: "VIDIOC_REQBUFS granted \(granted) buffer(s); at least 2 are needed for streaming")
        }
        do {
            for index in 0..<granted {
                let (length, offset) = try device.queryBuffer(index)
                guard let pointer = fg_v4l2_mmap(device.fd, length, offset) else {
                    throw CameraError.from(errno: errno, path: device.path, call: "mmap of buffer \(index)")
                }
                mappings.append((pointer, length))
            }
        } catch {
            unmapAll()
            throw error
        }
    }

    deinit {
        unmapAll()
    }

    private func unmapAll() {
        for m in mappings { _ = fg_v4l2_munmap(m.pointer, m.length) }
        mappings.removeAll()
        _ = try? device.requestBuffers(0)
    }

    /// Hands every buffer to the driver (before STREAMON).
    func queueAll() throws {
        for index in mappings.indices { try device.queue(UInt32(index)) }
    }

    /// The memory of buffer `index` (`bytesused` bytes of it are valid after DQBUF), or nil if the
    /// driver named a buffer that does not exist.
    func bytes(of index: UInt32, count: UInt32) -> UnsafeRawBufferPointer? {
        guard Int(index) < mappings.count else { return nil }
        let m = mappings[Int(index)]
        return UnsafeRawBufferPointer(start: m.pointer, count: Int(min(count, m.length)))
    }
}
