import FrameGraph
import FrameGraphCamera

extension NodeType {
    /// `camera`: a V4L2 camera through libv4l2 (see ``CameraSource``).
    ///
    /// ```
    /// source = camera  path=/dev/video0 width=1280 height=720 fps=30 format=mjpeg reconnect=true
    /// ```
    public static let camera = NodeType(
        name: "camera", role: .source,
        summary: "a V4L2 camera (libv4l2): newest frame only, driver timestamps, yuv420p or rgb24; always live",
        options: [
            OptionSpec("path", .text, default: "/dev/video0", "device node (the CLI's --camera replaces it)"),
            OptionSpec("width", .int, default: "640", "requested width (the driver grants the nearest)"),
            OptionSpec("height", .int, default: "480", "requested height"),
            OptionSpec("fps", .number, default: "30", "requested frame rate (the driver grants the nearest)"),
            OptionSpec("format", .choice(CameraInputFormat.allCases.map(\.rawValue)), default: "auto",
                       "the camera's own format: yuyv, mjpeg, or auto (YUYV if it offers size and rate, else MJPEG)"),
            OptionSpec("pixels", .choice(["yuv420p", "rgb24"]), default: "yuv420p", "pixel format of the frames it emits"),
            OptionSpec("buffers", .int, default: "4", "capture buffers in the driver's ring"),
            OptionSpec("reconnect", .flag, default: "false", "when unplugged, wait for the camera to come back (looks every 0.5 s) instead of ending the run"),
        ]
    ) { name, o in
        let format = try o.choice("format", CameraInputFormat.allCases.map(\.rawValue), default: "auto")
        let settings = CameraSettings(
            path: try o.text("path") ?? "/dev/video0",
            width: try o.int("width", default: 640, range: 16...16384) ?? 640,
            height: try o.int("height", default: 480, range: 16...16384) ?? 480,
            fps: try o.number("fps", default: 30, minimum: 0.1) ?? 30,
            format: CameraInputFormat(rawValue: format) ?? .auto,
            pixels: try o.choice("pixels", ["yuv420p", "rgb24"], default: "yuv420p") == "rgb24" ? .rgb24 : .yuv420p,
            buffers: try o.int("buffers", default: 4, range: 2...32) ?? 4,
            reconnect: try o.flag("reconnect"))
        do {
            try settings.validate()
        } catch {
            throw GraphError.invalidOption(node: name, option: "path", reason: describe(error))
        }
        return CameraSource(name: name, settings: settings)
    }
}

/// The command line's camera options, applied to a pipeline before it is built:
/// `--camera PATH` turns the pipeline's first `file` source into a `camera` source reading PATH;
/// `--camera-size WxH`, `--camera-fps N`, `--camera-format yuyv|mjpeg|auto` and `--reconnect` set
/// the options of every camera source (so they also work on a pipeline that declares one).
///
/// ```swift
/// var document = try Pipeline.parseFile(path: "pipelines/portrait-segment.fg")
/// let camera = CameraCommandLine(path: "/dev/video0", size: "1280x720", fps: "30")
/// let live = try camera.apply(to: &document)   // true: the pipeline now reads the camera
/// ```
public struct CameraCommandLine: Sendable, Equatable {
    public var path: String?
    public var size: String?
    public var fps: String?
    public var format: String?
    public var reconnect: Bool

    public init(path: String? = nil, size: String? = nil, fps: String? = nil, format: String? = nil, reconnect: Bool = false) {
        self.path = path
        self.size = size
        self.fps = fps
        self.format = format
        self.reconnect = reconnect
    }

    /// Whether any camera option was given.
    public var isEmpty: Bool { path == nil && size == nil && fps == nil && format == nil && !reconnect }

    /// Applies the options to `document`; returns whether it has a camera source afterwards. Throws
    /// ``CameraError/invalidSettings(_:)`` with a usage message for malformed values, or when the
    /// options have nothing to apply to.
    @discardableResult
    public func apply(to document: inout PipelineDocument) throws -> Bool {
        if let path {
            guard !path.isEmpty else { throw CameraError.invalidSettings("--camera expects a device path, e.g. /dev/video0") }
            guard let file = document.declarations.first(where: { $0.type == "file" }) else {
                let camera = document.declarations.first { $0.type == "camera" }
                if let camera {
                    _ = document.override(node: camera.name, key: "path", value: path)
                    return try applySettings(to: &document)
                }
                throw CameraError.invalidSettings("--camera: \(document.file) has no 'file' source to replace with the camera")
            }
            _ = document.retype(node: file.name, to: "camera")
            _ = document.override(node: file.name, key: "path", value: path)
        }
        return try applySettings(to: &document)
    }

    private func applySettings(to document: inout PipelineDocument) throws -> Bool {
        let cameras = document.declarations.filter { $0.type == "camera" }.map(\.name)
        guard !cameras.isEmpty else {
            if !isEmpty {
                throw CameraError.invalidSettings("--camera-size, --camera-fps, --camera-format and --reconnect need --camera PATH (or a camera source in the pipeline)")
            }
            return false
        }
        var values: [(String, String)] = []
        if let size {
            guard let s = CameraSettings.parseSize(size) else {
                throw CameraError.invalidSettings("--camera-size expects WIDTHxHEIGHT, e.g. 640x480, got '\(size)'")
            }
            values += [("width", "\(s.width)"), ("height", "\(s.height)")]
        }
        if let fps {
            guard let v = Double(fps), v.isFinite, v > 0 else {
                throw CameraError.invalidSettings("--camera-fps expects a positive number, got '\(fps)'")
            }
            values.append(("fps", fps))
        }
        if let format {
            guard let f = CameraInputFormat(name: format) else {
                throw CameraError.invalidSettings("--camera-format expects yuyv, mjpeg or auto, got '\(format)'")
            }
            values.append(("format", f.rawValue))
        }
        if reconnect { values.append(("reconnect", "true")) }
        for name in cameras {
            for (key, value) in values { _ = document.override(node: name, key: key, value: value) }
        }
        return true
    }
}

extension PipelineDocument {
    /// Whether the pipeline reads a camera (then it can only run live).
    public var hasCameraSource: Bool { declarations.contains { $0.type == "camera" } }
}
