import Foundation

/// What can go wrong with a camera. Every message names the device path, and where a system call
/// failed, the V4L2 request (`VIDIOC_DQBUF` …) and the errno text, plus what to do about it.
///
/// ```swift
/// do {
///     let info = try CameraInfo.probe(path: "/dev/video0")
/// } catch let error as CameraError {
///     print(error)   // "no camera at /dev/video0 (No such file or directory) — list cameras with `framegraph devices`"
/// }
/// ```
public enum CameraError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Nothing at the path (no such device node).
    case notFound(path: String)
    /// The device node exists but this user may not open it.
    case permissionDenied(path: String)
    /// Another program holds the camera (`call` is the request that said EBUSY).
    case busy(path: String, call: String)
    /// The path is not a V4L2 video capture device with streaming I/O.
    case notACaptureDevice(path: String, reason: String)
    /// A system call or V4L2 request failed.
    case callFailed(path: String, call: String, errno: Int32)
    /// The camera went away while streaming (unplugged: ENODEV, EIO, or a hang-up on poll).
    case disconnected(path: String, call: String, errno: Int32, frames: Int)
    /// The device does not offer the requested camera format.
    case formatUnavailable(path: String, requested: String, offered: [String])
    /// The driver granted a size FrameGraph cannot use with the requested output pixels.
    case unusableFormat(path: String, reason: String)
    /// After reconnecting, the camera delivers a different size or format than before.
    case formatChanged(path: String, before: String, after: String)
    /// libv4lconvert failed on many frames in a row.
    case conversionFailed(path: String, format: String, reason: String)
    /// The camera streams but delivered no frame for this long.
    case stalled(path: String, seconds: Double)
    /// A camera setting is out of range or malformed.
    case invalidSettings(String)

    /// Whether this error means the device went away (and may come back).
    public var isDisconnect: Bool {
        switch self {
        case .disconnected, .notFound: return true
        case .callFailed(_, _, let e): return CameraError.isDisconnectErrno(e)
        default: return false
        }
    }

    /// errno values that mean the device is gone.
    static func isDisconnectErrno(_ e: Int32) -> Bool { e == ENODEV || e == EIO || e == ENXIO || e == ENOENT }

    /// The C library's text for `code`.
    static func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The error for a failed request, classified by errno (busy, gone, or a plain failure).
    static func from(errno code: Int32, path: String, call: String, frames: Int = 0) -> CameraError {
        switch code {
        case EBUSY: return .busy(path: path, call: call)
        case ENODEV, ENXIO: return .disconnected(path: path, call: call, errno: code, frames: frames)
        default: return .callFailed(path: path, call: call, errno: code)
        }
    }

    public var description: String {
        switch self {
        case .notFound(let path):
            return "no camera at \(path) (No such file or directory) — list cameras with `framegraph devices`"
        case .permissionDenied(let path):
            return "cannot open camera \(path): Permission denied — add your user to the 'video' group (sudo usermod -aG video $USER, then log in again)"
        case .busy(let path, let call):
            return "camera \(path) is busy (\(call): Device or resource busy) — another program is using it; close it (find it with `fuser \(path)`)"
        case .notACaptureDevice(let path, let reason):
            return "\(path) is not a video capture camera: \(reason) — list cameras with `framegraph devices`"
        case .callFailed(let path, let call, let code):
            return "camera \(path): \(call) failed: \(Self.errnoText(code)) (errno \(code))"
        case .disconnected(let path, let call, let code, let frames):
            return "camera \(path) was disconnected after \(frames) frame\(frames == 1 ? "" : "s") (\(call): \(Self.errnoText(code))); "
                + "stopped, outputs finalized — plug it back in and run again, or use --reconnect to wait for it"
        case .formatUnavailable(let path, let requested, let offered):
            return "camera \(path) does not offer \(requested) (it offers: \(offered.isEmpty ? "nothing" : offered.joined(separator: ", "))) — "
                + "leave the camera format out (or use one it offers); see `framegraph devices`"
        case .unusableFormat(let path, let reason):
            return "camera \(path): \(reason)"
        case .formatChanged(let path, let before, let after):
            return "camera \(path) came back with \(after) instead of \(before); the running graph cannot change size — run again"
        case .conversionFailed(let path, let format, let reason):
            return "camera \(path): cannot convert its \(format) frames (libv4lconvert: \(reason)) — try another --camera-format"
        case .stalled(let path, let seconds):
            return "camera \(path) delivered no frame for \(String(format: "%.1f", seconds)) s while streaming — check the cable or another program holding it"
        case .invalidSettings(let message):
            return message
        }
    }
}
