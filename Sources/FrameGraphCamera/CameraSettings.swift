import FrameGraph

/// Which of the camera's own formats to capture in. Whatever it is, frames leave the camera
/// source as `yuv420p` or `rgb24`, converted by libv4lconvert.
///
/// ```swift
/// let format = CameraInputFormat(name: "MJPG") ?? .auto   // .mjpeg
/// ```
public enum CameraInputFormat: String, Sendable, CaseIterable {
    /// YUYV when it offers the size at the frame rate, else MJPEG, else what the camera has.
    case auto
    /// Uncompressed packed 4:2:2 (`YUYV`).
    case yuyv
    /// Motion-JPEG (`MJPG`, or `JPEG`): what webcams use for large sizes at full rate.
    case mjpeg

    /// Parses `yuyv`, `mjpeg` (also `mjpg`, `jpeg`) and `auto`, case-insensitive.
    public init?(name: String) {
        switch name.lowercased() {
        case "auto": self = .auto
        case "yuyv", "yuy2", "yuyv422": self = .yuyv
        case "mjpeg", "mjpg", "jpeg": self = .mjpeg
        default: return nil
        }
    }
}

/// How to open and configure a camera, with documented defaults. The driver may grant something
/// else (nearest size, nearest rate): ``CameraConfiguration`` says what it granted.
///
/// ```swift
/// var settings = CameraSettings(path: "/dev/video0")
/// settings.width = 1280; settings.height = 720; settings.format = .mjpeg
/// let camera = CameraSource(name: "camera", settings: settings)
/// ```
public struct CameraSettings: Sendable, Equatable {
    /// Device node. Default: /dev/video0.
    public var path: String
    /// Requested frame width. Default: 640.
    public var width: Int
    /// Requested frame height. Default: 480.
    public var height: Int
    /// Requested frame rate. Default: 30.
    public var fps: Double
    /// The camera's own format to capture in. Default: auto.
    public var format: CameraInputFormat
    /// Pixel format of the frames the source emits: yuv420p or rgb24. Default: yuv420p.
    public var pixels: PixelFormat
    /// Capture buffers in the driver's ring (2…32). Default: 4.
    public var buffers: Int
    /// On disconnect, wait for the device to come back instead of ending the run. Default: false.
    public var reconnect: Bool
    /// How often to look for the device while waiting to reconnect, in seconds. Default: 0.5.
    public var reconnectInterval: Double
    /// Seconds without a frame while streaming before the camera counts as stalled (an error, or a
    /// restart with `reconnect`). Default: 5.
    public var stallTimeout: Double

    public init(path: String = OptionSpecs.path.defaultValue, width: Int = OptionSpecs.width.defaultValue,
                height: Int = OptionSpecs.height.defaultValue, fps: Double = OptionSpecs.fps.defaultValue,
                format: CameraInputFormat = OptionSpecs.format.defaultValue,
                pixels: PixelFormat = OptionSpecs.pixels.defaultValue,
                buffers: Int = OptionSpecs.buffers.defaultValue, reconnect: Bool = OptionSpecs.reconnect.defaultValue,
                reconnectInterval: Double = 0.5, stallTimeout: Double = 5) {
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        self.format = format
        self.pixels = pixels
        self.buffers = buffers
        self.reconnect = reconnect
        self.reconnectInterval = reconnectInterval
        self.stallTimeout = stallTimeout
    }

    /// Throws ``CameraError/invalidSettings(_:)`` naming the first value out of range.
    public func validate() throws {
        guard !path.isEmpty else { throw CameraError.invalidSettings("camera: the device path is empty (e.g. /dev/video0)") }
        guard (16...16384).contains(width), (16...16384).contains(height) else {
            throw CameraError.invalidSettings("camera \(path): size \(width)x\(height) is out of range (16…16384 each)")
        }
        guard fps.isFinite, fps > 0, fps <= 1000 else {
            throw CameraError.invalidSettings("camera \(path): frame rate \(fps) is out of range (0 < fps ≤ 1000)")
        }
        guard pixels == .yuv420p || pixels == .rgb24 else {
            throw CameraError.invalidSettings("camera \(path): output pixels must be yuv420p or rgb24, not \(pixels)")
        }
        guard (2...32).contains(buffers) else {
            throw CameraError.invalidSettings("camera \(path): buffers must be in 2…32, got \(buffers)")
        }
    }

    /// Parses "WxH" (e.g. "1280x720").
    public static func parseSize(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        return (w, h)
    }
}

extension CameraSettings {
    /// The options of the `camera` node type, each written once.
    public enum OptionSpecs {
        public static let path = NodeOption.text("path", default: "/dev/video0", "device node (the CLI's --camera replaces it)")
        public static let width = NodeOption.int("width", default: 640, 16...16384, "requested width (the driver grants the nearest)")
        public static let height = NodeOption.int("height", default: 480, 16...16384, "requested height")
        public static let fps = NodeOption.number("fps", default: 30, 0.1...1000, "requested frame rate (the driver grants the nearest)")
        public static let format = NodeOption<CameraInputFormat>.choice(
            "format", default: .auto, "the camera's own format: yuyv, mjpeg, or auto (YUYV if it offers size and rate, else MJPEG)")
        public static let pixels = NodeOption<PixelFormat>.choice("pixels", [("yuv420p", .yuv420p), ("rgb24", .rgb24)], default: "yuv420p", "pixel format of the frames it emits")
        public static let buffers = NodeOption.int("buffers", default: 4, 2...32, "capture buffers in the driver's ring")
        public static let reconnect = NodeOption.flag("reconnect", default: false,
                                                      "when unplugged, wait for the camera to come back (looks every 0.5 s) instead of ending the run")
        public static let all = [path.spec, width.spec, height.spec, fps.spec, format.spec, pixels.spec, buffers.spec, reconnect.spec]
    }
}
