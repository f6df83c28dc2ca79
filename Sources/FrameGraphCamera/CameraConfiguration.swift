import Foundation
import FrameGraph

/// What the driver granted when the camera was configured (it may differ from
/// ``CameraSettings``: nearest size, nearest frame rate, fewer buffers).
///
/// ```swift
/// let camera = CameraSource(name: "camera", settings: .init(path: "/dev/video0"))
/// try camera.start(context: context)
/// print(camera.configuration?.summary ?? "")   // "640x480 YUYV → yuv420p at 30 fps, 4 buffers"
/// ```
public struct CameraConfiguration: Sendable, Equatable {
    public var path: String
    /// Card name from VIDIOC_QUERYCAP.
    public var card: String
    public var width: Int
    public var height: Int
    /// The camera's own format, as a fourcc ("YUYV", "MJPG").
    public var fourcc: String
    /// What the source emits.
    public var pixels: PixelFormat
    /// Granted frame rate (0 when the driver does not say).
    public var fps: Double
    /// Whether the driver accepted a frame rate request (V4L2_CAP_TIMEPERFRAME).
    public var rateSettable: Bool
    /// Capture buffers granted.
    public var buffers: Int

    /// One line: size, formats, rate, buffers.
    public var summary: String {
        let rate = fps > 0 ? String(format: "%g fps", fps) : "an unreported frame rate"
        return "\(width)x\(height) \(fourcc) → \(pixels) at \(rate)\(rateSettable ? "" : " (rate fixed by the driver)"), \(buffers) buffers"
    }

    /// The differences from what `settings` asked for, as text (empty when everything was granted).
    public func differences(from settings: CameraSettings) -> [String] {
        var out: [String] = []
        if width != settings.width || height != settings.height {
            out.append("size \(width)x\(height) instead of \(settings.width)x\(settings.height)")
        }
        if fps > 0, abs(fps - settings.fps) > 0.01 { out.append(String(format: "%g fps instead of %g", fps, settings.fps)) }
        if buffers != settings.buffers { out.append("\(buffers) buffers instead of \(settings.buffers)") }
        return out
    }
}
