import CV4L2
import Foundation

/// An open V4L2 device node (through libv4l2), closed in `deinit`. A thin wrapper: one method per
/// request in `Sources/CV4L2/shim.h`, each retrying on EINTR and throwing a ``CameraError`` that
/// names the path and the request.
///
/// ```swift
/// let device = try V4L2Device(path: "/dev/video0")
/// let caps = try device.capabilities()
/// ```
final class V4L2Device {
    let path: String
    /// The descriptor (libv4l2's wrapper around the kernel's; also fine for `poll`).
    let fd: Int32

    /// Opens `path` read/write, non-blocking.
    init(path: String) throws {
        self.path = path
        // Check the node first: libv4l2 prints its own complaints when handed a regular file.
        var st = stat()
        if stat(path, &st) != 0 {
            let e = errno
            throw e == ENOENT || e == ENOTDIR ? CameraError.notFound(path: path)
                : e == EACCES ? CameraError.permissionDenied(path: path)
                : CameraError.callFailed(path: path, call: "stat", errno: e)
        }
        guard st.st_mode & S_IFMT == S_IFCHR else {
            throw CameraError.notACaptureDevice(path: path, reason: "it is not a device node (\(st.st_mode & S_IFMT == S_IFDIR ? "a directory" : "a regular file or other non-device"))")
        }
        if path.withCString({ fg_probe_v4l2($0) }) != 0 {
            let e = errno
            if e == ENOTTY || e == EINVAL {
                throw CameraError.notACaptureDevice(path: path, reason: "VIDIOC_QUERYCAP: \(CameraError.errnoText(e)) (not a V4L2 device)")
            }
            // Other errors (busy, gone, permission) are classified by the real open below.
        }
        let fd = path.withCString { fg_v4l2_open($0) }
        guard fd >= 0 else {
            let e = errno
            switch e {
            case ENOTTY, EINVAL: throw CameraError.notACaptureDevice(path: path, reason: "open: \(CameraError.errnoText(e)) (not a V4L2 device)")
            case ENOENT, ENODEV, ENXIO: throw CameraError.notFound(path: path)
            case EACCES, EPERM: throw CameraError.permissionDenied(path: path)
            case EBUSY: throw CameraError.busy(path: path, call: "open")
            default: throw CameraError.callFailed(path: path, call: "open", errno: e)
            }
        }
        self.fd = fd
    }

    deinit {
        _ = fg_v4l2_close(fd)
    }

    /// Runs `body` (a shim call returning -1/errno on failure), retrying on EINTR; throws otherwise.
    @discardableResult
    func request(_ name: String, frames: Int = 0, _ body: () -> Int32) throws -> Int32 {
        while true {
            let rc = body()
            if rc >= 0 { return rc }
            let e = errno
            if e == EINTR { continue }
            throw CameraError.from(errno: e, path: path, call: name, frames: frames)
        }
    }

    /// Like ``request(_:frames:_:)`` but returns the errno instead of throwing (0 on success).
    func attempt(_ body: () -> Int32) -> Int32 {
        while true {
            if body() >= 0 { return 0 }
            let e = errno
            if e != EINTR { return e }
        }
    }

    // MARK: capabilities and enumeration

    /// VIDIOC_QUERYCAP; throws ``CameraError/notACaptureDevice(path:reason:)`` when it is not V4L2.
    func capabilities() throws -> v4l2_capability {
        var cap = v4l2_capability()
        let e = attempt { fg_vidioc_querycap(fd, &cap) }
        if e == ENOTTY || e == EINVAL {
            throw CameraError.notACaptureDevice(path: path, reason: "VIDIOC_QUERYCAP: \(CameraError.errnoText(e)) (not a V4L2 device)")
        }
        if e != 0 { throw CameraError.from(errno: e, path: path, call: "VIDIOC_QUERYCAP") }
        return cap
    }

    /// The native capture formats (VIDIOC_ENUM_FMT), without libv4lconvert's emulated ones.
    func nativeFormats() -> [v4l2_fmtdesc] {
        var out: [v4l2_fmtdesc] = []
        for index in UInt32(0)..<64 {
            var desc = v4l2_fmtdesc()
            guard attempt({ fg_vidioc_enum_fmt(fd, index, &desc) }) == 0 else { break }
            if desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) == 0 { out.append(desc) }
        }
        return out
    }

    /// VIDIOC_ENUM_FRAMESIZES for `pixelformat`, all indices.
    func frameSizes(_ pixelformat: UInt32) -> [v4l2_frmsizeenum] {
        var out: [v4l2_frmsizeenum] = []
        for index in UInt32(0)..<256 {
            var size = v4l2_frmsizeenum()
            guard attempt({ fg_vidioc_enum_framesizes(fd, pixelformat, index, &size) }) == 0 else { break }
            out.append(size)
            if size.type != V4L2_FRMSIZE_TYPE_DISCRETE.rawValue { break }  // one entry describes the range
        }
        return out
    }

    /// VIDIOC_ENUM_FRAMEINTERVALS for `pixelformat` at `width`×`height`, all indices.
    func frameIntervals(_ pixelformat: UInt32, width: UInt32, height: UInt32) -> [v4l2_frmivalenum] {
        var out: [v4l2_frmivalenum] = []
        for index in UInt32(0)..<256 {
            var ival = v4l2_frmivalenum()
            guard attempt({ fg_vidioc_enum_frameintervals(fd, pixelformat, width, height, index, &ival) }) == 0 else { break }
            out.append(ival)
            if ival.type != V4L2_FRMIVAL_TYPE_DISCRETE.rawValue { break }
        }
        return out
    }

    // MARK: format and rate

    /// VIDIOC_S_FMT: asks for a size and native format; returns what the driver granted.
    func setFormat(width: UInt32, height: UInt32, pixelformat: UInt32) throws -> v4l2_pix_format {
        var pix = v4l2_pix_format()
        pix.width = width
        pix.height = height
        pix.pixelformat = pixelformat
        pix.field = V4L2_FIELD_NONE.rawValue
        try request("VIDIOC_S_FMT") { fg_vidioc_s_fmt(fd, &pix) }
        return pix
    }

    /// VIDIOC_G_FMT.
    func format() throws -> v4l2_pix_format {
        var pix = v4l2_pix_format()
        try request("VIDIOC_G_FMT") { fg_vidioc_g_fmt(fd, &pix) }
        return pix
    }

    /// VIDIOC_G_PARM: capture parameters (time per frame, whether it can be set).
    func captureParameters() -> v4l2_captureparm? {
        var parm = v4l2_captureparm()
        return attempt({ fg_vidioc_g_parm(fd, &parm) }) == 0 ? parm : nil
    }

    /// VIDIOC_S_PARM: asks for `numerator/denominator` seconds per frame; returns the granted interval.
    func setFrameInterval(numerator: UInt32, denominator: UInt32) throws -> (numerator: UInt32, denominator: UInt32) {
        var n = numerator, d = denominator
        try request("VIDIOC_S_PARM") { fg_vidioc_s_parm(fd, &n, &d) }
        return (n, d)
    }

    // MARK: buffers and streaming

    /// VIDIOC_REQBUFS (memory-mapped); returns the granted count (0 frees the buffers).
    func requestBuffers(_ count: UInt32) throws -> UInt32 {
        var n = count
        try request("VIDIOC_REQBUFS") { fg_vidioc_reqbufs(fd, &n) }
        return n
    }

    /// VIDIOC_QUERYBUF: length and mmap offset of buffer `index`.
    func queryBuffer(_ index: UInt32) throws -> (length: UInt32, offset: Int64) {
        var length: UInt32 = 0, offset: Int64 = 0
        try request("VIDIOC_QUERYBUF") { fg_vidioc_querybuf(fd, index, &length, &offset) }
        return (length, offset)
    }

    /// VIDIOC_QBUF.
    func queue(_ index: UInt32, frames: Int = 0) throws {
        try request("VIDIOC_QBUF", frames: frames) { fg_vidioc_qbuf(fd, index) }
    }

    /// VIDIOC_DQBUF without blocking: a filled buffer, or nil when none is ready (EAGAIN).
    func dequeue(frames: Int = 0) throws -> fg_dequeued? {
        var d = fg_dequeued()
        let e = attempt { fg_vidioc_dqbuf(fd, &d) }
        if e == 0 { return d }
        if e == EAGAIN { return nil }
        if CameraError.isDisconnectErrno(e) {
            throw CameraError.disconnected(path: path, call: "VIDIOC_DQBUF", errno: e, frames: frames)
        }
        throw CameraError.from(errno: e, path: path, call: "VIDIOC_DQBUF", frames: frames)
    }

    /// VIDIOC_STREAMON.
    func streamOn() throws {
        try request("VIDIOC_STREAMON") { fg_vidioc_streamon(fd) }
    }

    /// VIDIOC_STREAMOFF (errors ignored: used while tearing down, perhaps after an unplug).
    func streamOff() {
        _ = attempt { fg_vidioc_streamoff(fd) }
    }

    /// What `poll` says about the descriptor within `timeout` seconds.
    enum Readiness { case ready, timeout, hangup, error }

    /// Waits up to `timeout` seconds for a filled buffer (EINTR counts as a timeout: the caller loops).
    func wait(timeout: Double) throws -> Readiness {
        var revents: Int16 = 0
        let rc = fg_poll_in(fd, Int32(max(0, timeout * 1000)), &revents)
        if rc < 0 {
            let e = errno
            if e == EINTR || e == EAGAIN { return .timeout }
            throw CameraError.callFailed(path: path, call: "poll", errno: e)
        }
        if rc == 0 { return .timeout }
        if revents & fg_pollhup() != 0 || revents & fg_pollnval() != 0 { return .hangup }
        if revents & fg_pollin() != 0 { return .ready }
        if revents & fg_pollerr() != 0 { return .error }
        return .timeout
    }

    /// A text field of a V4L2 struct (a fixed-size C char array) as a Swift string.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// A fourcc code as text ("YUYV", "MJPG").
    static func fourcc(_ code: UInt32) -> String {
        let chars = (0..<4).map { UInt8((code >> (8 * UInt32($0))) & 0xFF) }
        return String(decoding: chars, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }
}
