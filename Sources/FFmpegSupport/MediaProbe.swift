import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// What FrameGraph sees in a media file, without decoding it: the container, every stream (codec,
/// time base, rate, language, title), the video's size, colour tags, rotation and frame count
/// (counted packet by packet), chapters, duration. `framegraph probe FILE` prints it.
public struct MediaProbe: Sendable {
    /// One stream of the file.
    public struct Stream: Sendable {
        public var index: Int
        public var kind: String
        public var codec: String
        public var timeBase: String
        public var startTime: Double?
        public var duration: Double?
        /// Video: size, pixel format, rates, colour, rotation. Audio: rate, channels, sample format.
        public var details: String
        public var language: String?
        public var title: String?
        /// Packets of this stream in the file (counted).
        public var packets: Int
        /// Distinct frame durations seen (video), to tell constant from variable rate.
        public var variableRate: Bool
    }

    public var path: String
    public var container: String
    public var duration: Double?
    public var bitRate: Int64
    public var streams: [Stream] = []
    public var chapters: [(start: Double, end: Double, title: String?)] = []
    public var metadata: [(String, String)] = []
    /// FrameGraph's reading of the main video stream (size after rotation, colour with defaults).
    public var reading: String?

    /// Probes `path` (a local file; read to the end to count packets).
    public init(path: String) throws {
        _ = FFmpegLog.configured
        self.path = path
        try FileCheck.regularFile(path, what: "input")
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        var openOptions: OpaquePointer?
        av_dict_set(&openOptions, "protocol_whitelist", "file", 0)
        defer { av_dict_free(&openOptions) }
        try check(avformat_open_input(&ctx, "file:" + path, nil, &openOptions), "open input (not a media file FFmpeg can read?)", path: path)
        defer { avformat_close_input(&ctx) }
        guard let ctx else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "open input", path: path) }
        try check(avformat_find_stream_info(ctx, nil), "read stream info", path: path)
        container = String(cString: ctx.pointee.iformat.pointee.name)
        duration = ctx.pointee.duration > 0 ? Double(ctx.pointee.duration) / Double(AV_TIME_BASE) : nil
        bitRate = ctx.pointee.bit_rate
        metadata = MediaProbe.entries(ctx.pointee.metadata)
        let count = Int(ctx.pointee.nb_streams)
        var lastPTS = [Int64](repeating: fg_nopts_value(), count: count)
        var gaps = [Set<Int64>](repeating: [], count: count)
        var packets = [Int](repeating: 0, count: count)
        if let packet = av_packet_alloc() {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            defer { av_packet_free(&p) }
            var pts: [Int64] = []
            var ptsOf = [[Int64]](repeating: [], count: count)
            while av_read_frame(ctx, packet) >= 0 {
                let i = Int(packet.pointee.stream_index)
                if i >= 0 && i < count {
                    packets[i] += 1
                    if packet.pointee.pts != fg_nopts_value() && ptsOf[i].count < 200_000 { ptsOf[i].append(packet.pointee.pts) }
                }
                av_packet_unref(packet)
            }
            for i in 0..<count {
                pts = ptsOf[i].sorted()
                for k in 1..<max(1, pts.count) where gaps[i].count < 8 { gaps[i].insert(pts[k] - pts[k - 1]) }
                lastPTS[i] = pts.last ?? fg_nopts_value()
            }
        }
        for i in 0..<count {
            guard let stream = ctx.pointee.streams[i] else { continue }
            let par = stream.pointee.codecpar.pointee
            let tb = stream.pointee.time_base
            var kind = av_get_media_type_string(par.codec_type).map { String(cString: $0) } ?? "unknown"
            var details = ""
            switch par.codec_type {
            case AVMEDIA_TYPE_VIDEO:
                if stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 { kind = "cover picture" }
                let pixel = av_get_pix_fmt_name(AVPixelFormat(rawValue: par.format)).map { String(cString: $0) } ?? "?"
                let avg = stream.pointee.avg_frame_rate, real = stream.pointee.r_frame_rate
                let tagged = ColorDescription(par)
                let rotation = fg_stream_rotation(stream)
                details = "\(par.width)x\(par.height) \(pixel), \(MediaProbe.rate(avg)) fps average, \(MediaProbe.rate(real)) fps base"
                    + "\n      colour: \(tagged)" + (rotation != 0 ? "\n      rotation: \(Int(rotation.rounded()))° clockwise (display matrix)" : "\n      rotation: none")
            case AVMEDIA_TYPE_AUDIO:
                let format = av_get_sample_fmt_name(AVSampleFormat(rawValue: par.format)).map { String(cString: $0) } ?? "?"
                details = "\(par.sample_rate) Hz, \(par.ch_layout.nb_channels) channel\(par.ch_layout.nb_channels == 1 ? "" : "s"), \(format)"
            default: break
            }
            let start = stream.pointee.start_time != fg_nopts_value() ? Double(stream.pointee.start_time) * av_q2d(tb) : nil
            let length = stream.pointee.duration != fg_nopts_value() && stream.pointee.duration > 0 ? Double(stream.pointee.duration) * av_q2d(tb) : nil
            let tags = Dictionary(MediaProbe.entries(stream.pointee.metadata), uniquingKeysWith: { a, _ in a })
            streams.append(Stream(index: i, kind: kind, codec: String(cString: avcodec_get_name(par.codec_id)), timeBase: "\(tb.num)/\(tb.den)",
                                  startTime: start, duration: length, details: details, language: tags["language"], title: tags["title"],
                                  packets: packets[i], variableRate: par.codec_type == AVMEDIA_TYPE_VIDEO && gaps[i].count > 1))
        }
        let chapterCount = Int(ctx.pointee.nb_chapters)
        if chapterCount > 0, let list = ctx.pointee.chapters {
            for c in 0..<min(chapterCount, 1000) {
                guard let chapter = list[c] else { continue }
                let tb = av_q2d(chapter.pointee.time_base)
                let title = Dictionary(MediaProbe.entries(chapter.pointee.metadata), uniquingKeysWith: { a, _ in a })["title"]
                chapters.append((Double(chapter.pointee.start) * tb, Double(chapter.pointee.end) * tb, title))
            }
        }
        if let reader = try? MediaReader(path: path) {
            reading = "\(reader.width)x\(reader.height) \(reader.outputFormat) frames"
                + (reader.appliedRotation != 0 ? " (turned \(reader.appliedRotation)° clockwise, upright)" : "")
                + ", colour as used: \(reader.color)"
        }
    }

    private static func rate(_ r: AVRational) -> String {
        r.den == 0 || r.num == 0 ? "?" : String(format: "%.3f", av_q2d(r)).replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)
    }

    private static func entries(_ dictionary: OpaquePointer?) -> [(String, String)] {
        var out: [(String, String)] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let e = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX), out.count < 100 {
            out.append((String(cString: e.pointee.key), String(cString: e.pointee.value)))
            entry = e
        }
        return out
    }

    /// The report, one screen.
    public var text: String {
        func seconds(_ s: Double?) -> String { s.map { String(format: "%.3f s", $0) } ?? "unknown" }
        var lines = ["\(path): \(container), duration \(seconds(duration))" + (bitRate > 0 ? ", \(bitRate / 1000) kb/s" : "")]
        for (k, v) in metadata where k != "encoder" && k != "major_brand" && k != "minor_version" && k != "compatible_brands" {
            lines.append("  \(k): \(v)")
        }
        for s in streams {
            var head = "  stream \(s.index): \(s.kind) \(s.codec)"
            if let language = s.language { head += " [\(language)]" }
            if let title = s.title { head += " \"\(title)\"" }
            lines.append(head)
            if !s.details.isEmpty { lines.append("      " + s.details) }
            let count = s.kind == "video" ? "\(s.packets) frames" : "\(s.packets) packets"
            lines.append("      time base \(s.timeBase), start \(seconds(s.startTime)), duration \(seconds(s.duration)), \(count)"
                         + (s.kind == "video" ? (s.variableRate ? ", variable frame rate" : ", constant frame rate") : ""))
        }
        for (i, c) in chapters.enumerated() {
            lines.append(String(format: "  chapter %d: %.3f – %.3f s", i, c.start, c.end) + (c.title.map { " \"\($0)\"" } ?? ""))
        }
        if let reading { lines.append("  FrameGraph reads: \(reading)") }
        return lines.joined(separator: "\n")
    }
}
