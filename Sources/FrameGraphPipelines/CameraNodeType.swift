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
        options: CameraSettings.OptionSpecs.all
    ) { name, o in
        typealias S = CameraSettings.OptionSpecs
        let settings = CameraSettings(
            path: try o.value(S.path), width: try o.value(S.width), height: try o.value(S.height), fps: try o.value(S.fps),
            format: try o.value(S.format), pixels: try o.value(S.pixels),
            buffers: try o.value(S.buffers), reconnect: try o.value(S.reconnect))
        do {
            try settings.validate()
        } catch {
            throw GraphError.invalidOption(node: name, option: "camera settings", reason: describe(error))
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
            let range = CameraSettings.OptionSpecs.fps.spec
            guard range.problem(with: fps) == nil else {
                throw CameraError.invalidSettings("--camera-fps: \(range.problem(with: fps) ?? "")")
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
