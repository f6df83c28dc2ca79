import CAVUtil

/// A failed FFmpeg call: what was being done, on which file, and FFmpeg's own message.
public struct FFmpegError: Error, Sendable, CustomStringConvertible {
    /// FFmpeg's negative error code.
    public let code: Int32
    /// What FrameGraph was doing ("open input", "encode frame" …).
    public let operation: String
    /// The file involved, when there is one.
    public let path: String?
    /// FFmpeg's description of `code`.
    public let message: String

    public init(code: Int32, operation: String, path: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        message = FFmpegError.message(for: code)
    }

    public var description: String {
        if let path { return "\(path): \(operation) failed: \(message)" }
        return "\(operation) failed: \(message)"
    }

    /// FFmpeg's text for an error code (av_strerror).
    public static func message(for code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Throws an ``FFmpegError`` when `code` is negative; returns it otherwise.
@discardableResult
func check(_ code: Int32, _ operation: String, path: String? = nil) throws -> Int32 {
    if code < 0 { throw FFmpegError(code: code, operation: operation, path: path) }
    return code
}

/// FFmpeg's own log: silent (FrameGraph reports errors itself, in one line) unless
/// `FRAMEGRAPH_FFMPEG_LOG=warning|info|debug` is set.
enum FFmpegLog {
    static let configured: Bool = {
        switch getenv("FRAMEGRAPH_FFMPEG_LOG").map({ String(cString: $0) }) {
        case "debug": av_log_set_level(AV_LOG_DEBUG)
        case "info": av_log_set_level(AV_LOG_INFO)
        case "warning": av_log_set_level(AV_LOG_WARNING)
        default: av_log_set_level(AV_LOG_QUIET)
        }
        return true
    }()

    /// SVT-AV1 prints its banner with its own logger; errors only, unless FFmpeg's log was asked for.
    static func quietSVT() {
        if getenv("FRAMEGRAPH_FFMPEG_LOG") == nil { setenv("SVT_LOG", "1", 0) }
    }
}
