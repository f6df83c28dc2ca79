import CAVCodec
import CAVFormat
import CAVUtil
import FrameGraph

/// The video codecs FrameGraph encodes, by the names people use (`h264`, `h265`, `vp9`, `av1`,
/// `ffv1`, `prores`), with the FFmpeg encoders behind each (first available wins), their quality
/// scale and how x264's preset names map onto each encoder's speed setting. One table: the
/// `encode` node's options, `framegraph nodes` and the errors all read it.
public struct VideoCodecChoice: Sendable {
    /// The name users give (`codec=h265`).
    public let name: String
    /// What it is, for listings.
    public let summary: String
    /// FFmpeg encoders that make it, preferred first.
    public let encoders: [String]
    /// Quality scale (`crf`) and the default used when none is given; nil: no quality knob (lossless
    /// or profile-based).
    public let crfRange: ClosedRange<Int>?
    public let defaultCRF: Int?
    /// Pixel format used when none is given.
    public let defaultPixelFormat: String

    public static let all: [VideoCodecChoice] = [
        VideoCodecChoice(name: "h264", summary: "H.264 / AVC", encoders: ["libx264"], crfRange: 0...51, defaultCRF: 23, defaultPixelFormat: "yuv420p"),
        VideoCodecChoice(name: "h265", summary: "H.265 / HEVC", encoders: ["libx265"], crfRange: 0...51, defaultCRF: 28, defaultPixelFormat: "yuv420p"),
        VideoCodecChoice(name: "vp9", summary: "VP9", encoders: ["libvpx-vp9"], crfRange: 0...63, defaultCRF: 31, defaultPixelFormat: "yuv420p"),
        VideoCodecChoice(name: "av1", summary: "AV1", encoders: ["libsvtav1", "libaom-av1"], crfRange: 0...63, defaultCRF: 35, defaultPixelFormat: "yuv420p"),
        VideoCodecChoice(name: "ffv1", summary: "FFV1 (lossless)", encoders: ["ffv1"], crfRange: nil, defaultCRF: nil, defaultPixelFormat: "yuv420p"),
        VideoCodecChoice(name: "prores", summary: "Apple ProRes 422/4444 (intermediate)", encoders: ["prores_ks"], crfRange: nil, defaultCRF: nil,
                         defaultPixelFormat: "yuv422p10"),
    ]

    /// Every name `codec=` accepts (`auto` picks by the file extension).
    public static let names = ["auto"] + all.map(\.name)

    /// Pixel formats `pixel-format=` accepts (FFmpeg's names; `10` means 10-bit little-endian).
    public static let pixelFormats = ["yuv420p", "yuv422p", "yuv444p", "yuv420p10", "yuv422p10", "yuv444p10"]

    public static func named(_ name: String) -> VideoCodecChoice? { all.first { $0.name == name } }

    /// The codec `auto` means for a file: VP9 for WebM, H.264 otherwise.
    public static func automatic(forPath path: String) -> VideoCodecChoice {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return named(ext == "webm" ? "vp9" : "h264") ?? all[0]
    }

    /// The first of ``encoders`` this machine's FFmpeg has, or nil.
    public var availableEncoder: String? {
        encoders.first { avcodec_find_encoder_by_name($0) != nil }
    }

    /// The codecs this machine's FFmpeg can encode, with the encoder each uses.
    public static var available: [(codec: VideoCodecChoice, encoder: String)] {
        all.compactMap { c in c.availableEncoder.map { (c, $0) } }
    }

    /// FFmpeg's pixel format for one of ``pixelFormats``.
    static func avPixelFormat(_ name: String) -> AVPixelFormat? {
        switch name {
        case "yuv420p": return AV_PIX_FMT_YUV420P
        case "yuv422p": return AV_PIX_FMT_YUV422P
        case "yuv444p": return AV_PIX_FMT_YUV444P
        case "yuv420p10": return AV_PIX_FMT_YUV420P10LE
        case "yuv422p10": return AV_PIX_FMT_YUV422P10LE
        case "yuv444p10": return AV_PIX_FMT_YUV444P10LE
        default: return nil
        }
    }

    /// Encoder options for x264's preset name (`ultrafast` … `veryslow`) on `encoder`.
    static func speedOptions(preset: String, encoder: String) -> [(String, String)] {
        let index = MediaWriter.Settings.presets.firstIndex(of: preset) ?? 2  // veryfast
        switch encoder {
        case "libx264", "libx265": return [("preset", preset)]
        case "libvpx-vp9":
            let cpuUsed = [8, 7, 6, 5, 4, 3, 2, 1, 0][index]
            return [("deadline", index <= 2 ? "realtime" : "good"), ("cpu-used", "\(cpuUsed)"), ("row-mt", "1")]
        case "libsvtav1": return [("preset", "\([12, 11, 10, 9, 8, 6, 4, 3, 2][index])")]
        case "libaom-av1": return [("cpu-used", "\([8, 8, 7, 6, 5, 4, 3, 2, 1][index])"), ("row-mt", "1")]
        default: return []
        }
    }

    /// Encoder options for quality `crf` (nil: the codec's default) or a target `bitrate`.
    func qualityOptions(crf: Int?, bitrate: Int?, encoder: String) -> [(String, String)] {
        guard let defaultCRF else { return [] }
        if bitrate != nil && crf == nil { return [] }
        let value = crf ?? defaultCRF
        switch encoder {
        case "libvpx-vp9", "libaom-av1":
            return bitrate == nil ? [("crf", "\(value)"), ("b", "0")] : [("crf", "\(value)")]
        default: return [("crf", "\(value)")]
        }
    }
}
