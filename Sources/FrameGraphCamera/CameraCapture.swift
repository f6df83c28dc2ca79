import CV4L2
import Foundation
import FrameGraph

/// One open, configured camera: the device, its mapped buffer ring and the converter. Opening it
/// negotiates size, format and rate; ``startStreaming()`` queues the buffers and starts the stream;
/// ``grabNewest(timeout:frames:)`` gives the newest filled buffer. Everything is released in
/// `deinit` (stream off, unmap, free buffers, close), also after an unplug.
///
/// ```swift
/// let capture = try CameraCapture(settings: CameraSettings(path: "/dev/video0"))
/// try capture.startStreaming()
/// if let grab = try capture.grabNewest(timeout: 0.2, frames: 0) { … capture.requeue(grab.newest.index) }
/// ```
final class CameraCapture {
    let settings: CameraSettings
    let configuration: CameraConfiguration
    let converter: FrameConverter
    private let device: V4L2Device
    private let ring: MappedBufferRing
    private(set) var isStreaming = false

    /// Buffers dequeued together by one ``grabNewest(timeout:frames:)``: the newest (still dequeued,
    /// to be converted and requeued) and the sequence numbers of all of them, oldest first.
    struct Grab {
        var newest: fg_dequeued
        var sequences: [UInt32]
        /// Older ready buffers given back unused (latest-frame semantics).
        var skipped: Int { sequences.count - 1 }
    }

    /// Opens the device and configures it; throws a ``CameraError`` naming what failed.
    init(settings: CameraSettings) throws {
        try settings.validate()
        self.settings = settings
        let path = settings.path
        let device = try V4L2Device(path: path)
        let cap = try device.capabilities()
        guard CameraInfo.isStreamingCapture(cap) else {
            throw CameraError.notACaptureDevice(path: path, reason: "no video capture with streaming I/O (it may be a camera's metadata node; try the next /dev/videoN)")
        }
        let formats = CameraInfo.formats(of: device)
        let chosen = try FormatChoice.choose(settings.format, width: settings.width, height: settings.height, fps: settings.fps,
                                             from: formats, path: path)
        let pix = try device.setFormat(width: UInt32(settings.width), height: UInt32(settings.height),
                                       pixelformat: chosen?.code ?? fg_v4l2_pix_fmt_yuyv())
        let fourcc = V4L2Device.fourcc(pix.pixelformat)
        if let chosen, settings.format != .auto, pix.pixelformat != chosen.code {
            throw CameraError.formatUnavailable(path: path, requested: chosen.fourcc, offered: formats.map(\.fourcc))
        }
        if settings.pixels == .yuv420p && (pix.width % 2 != 0 || pix.height % 2 != 0) {
            throw CameraError.unusableFormat(path: path, reason: "the driver granted \(pix.width)x\(pix.height), an odd size, which yuv420p cannot hold — ask for an even size or pixels=rgb24")
        }
        guard pix.width > 0, pix.height > 0 else {
            throw CameraError.unusableFormat(path: path, reason: "the driver granted an empty frame size")
        }

        // Frame rate: S_PARM when the driver allows it (V4L2_CAP_TIMEPERFRAME), else what G_PARM says.
        var fps = 0.0
        var settable = false
        if let parm = device.captureParameters() {
            if parm.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 {
                let rounded = settings.fps.rounded()
                let (n, d): (UInt32, UInt32) = abs(rounded - settings.fps) < 1e-6 ? (1, UInt32(rounded)) : (1000, UInt32((settings.fps * 1000).rounded()))
                let granted = try device.setFrameInterval(numerator: n, denominator: d)
                settable = true
                if granted.numerator > 0 { fps = Double(granted.denominator) / Double(granted.numerator) }
            } else if parm.timeperframe.numerator > 0 {
                fps = Double(parm.timeperframe.denominator) / Double(parm.timeperframe.numerator)
            }
        }

        let ring = try MappedBufferRing(device: device, count: UInt32(settings.buffers))
        converter = try FrameConverter(device: device, native: pix, pixels: settings.pixels)
        self.device = device
        self.ring = ring
        configuration = CameraConfiguration(path: path, card: V4L2Device.string(cap.card), width: Int(pix.width), height: Int(pix.height),
                                            fourcc: fourcc, pixels: settings.pixels, fps: fps, rateSettable: settable,
                                            buffers: ring.count)
    }

    deinit {
        if isStreaming { device.streamOff() }
    }

    /// Queues every buffer and starts the stream.
    func startStreaming() throws {
        guard !isStreaming else { return }
        try ring.queueAll()
        try device.streamOn()
        isStreaming = true
    }

    /// Stops the stream (buffers stay mapped; the capture is done).
    func stopStreaming() {
        guard isStreaming else { return }
        device.streamOff()
        isStreaming = false
    }

    /// Waits up to `timeout` seconds for a filled buffer, then dequeues every ready one and keeps
    /// the newest: the others go straight back to the driver. Nil when nothing arrived in time.
    /// Throws ``CameraError/disconnected(path:call:errno:frames:)`` when the device went away.
    /// `frames` (frames delivered so far) only goes into error messages.
    func grabNewest(timeout: Double, frames: Int) throws -> Grab? {
        // DQBUF only when poll says a buffer is done (libv4l2 logs every failed DQBUF, EAGAIN included).
        switch try device.wait(timeout: timeout) {
        case .timeout:
            return nil
        case .hangup:
            throw CameraError.disconnected(path: settings.path, call: "poll (POLLHUP)", errno: ENODEV, frames: frames)
        case .error:
            // POLLERR without a frame: DQBUF says why (ENODEV/EIO: gone; EAGAIN: nothing yet).
            guard let buffer = try device.dequeue(frames: frames) else {
                usleep(5_000)  // do not spin on a persistent POLLERR
                return nil
            }
            return try drain(after: buffer, frames: frames)
        case .ready:
            guard let buffer = try device.dequeue(frames: frames) else { return nil }
            return try drain(after: buffer, frames: frames)
        }
    }

    /// Dequeues every other ready buffer, keeping the newest and requeueing the rest.
    private func drain(after first: fg_dequeued, frames: Int) throws -> Grab {
        var newest = first
        var sequences = [first.sequence]
        while try device.wait(timeout: 0) == .ready, let next = try device.dequeue(frames: frames) {
            try device.queue(newest.index, frames: frames)
            newest = next
            sequences.append(next.sequence)
        }
        return Grab(newest: newest, sequences: sequences)
    }

    /// The bytes of a dequeued buffer (nil if the driver named a buffer that does not exist).
    func bytes(of buffer: fg_dequeued) -> UnsafeRawBufferPointer? {
        ring.bytes(of: buffer.index, count: buffer.bytesused)
    }

    /// Gives a dequeued buffer back to the driver.
    func requeue(_ index: UInt32, frames: Int) throws {
        try device.queue(index, frames: frames)
    }
}
