/// Picks the camera's native format to ask for, from what it enumerates and what was requested.
///
/// With ``CameraInputFormat/auto``: YUYV if it offers the requested size at (at least) the requested
/// rate, else MJPEG at that size and rate, else any format at that size, else YUYV, MJPEG, or the
/// first format (the driver then grants its nearest size). With `yuyv` or `mjpeg` that format, or
/// ``CameraError/formatUnavailable(path:requested:offered:)``.
///
/// ```swift
/// let code = try FormatChoice.choose(.auto, width: 1280, height: 720, fps: 30, from: info.formats, path: info.path)
/// ```
public enum FormatChoice {
    static let yuyvCodes: Set<String> = ["YUYV"]
    static let mjpegCodes: Set<String> = ["MJPG", "JPEG"]

    /// The fourcc code to ask for (as a ``CameraInfo/Format``), or nil when the camera enumerates
    /// nothing (then YUYV is asked for and the driver decides).
    public static func choose(_ requested: CameraInputFormat, width: Int, height: Int, fps: Double,
                              from formats: [CameraInfo.Format], path: String) throws -> CameraInfo.Format? {
        switch requested {
        case .yuyv, .mjpeg:
            let codes = requested == .yuyv ? yuyvCodes : mjpegCodes
            guard let f = formats.first(where: { codes.contains($0.fourcc) }) else {
                if formats.isEmpty { return nil }
                throw CameraError.formatUnavailable(path: path, requested: requested == .yuyv ? "YUYV" : "MJPEG",
                                                    offered: formats.map(\.fourcc))
            }
            return f
        case .auto:
            guard !formats.isEmpty else { return nil }
            let ranked = formats.filter { yuyvCodes.contains($0.fourcc) }
                + formats.filter { mjpegCodes.contains($0.fourcc) }
                + formats.filter { !yuyvCodes.contains($0.fourcc) && !mjpegCodes.contains($0.fourcc) }
            func offersSize(_ f: CameraInfo.Format) -> CameraInfo.Size? {
                f.sizes.first { s in s.range != nil || (s.width == width && s.height == height) }
            }
            if let f = ranked.first(where: { offersSize($0)?.offers(fps: fps) ?? false }) { return f }
            if let f = ranked.first(where: { offersSize($0) != nil }) { return f }
            return ranked[0]
        }
    }
}
