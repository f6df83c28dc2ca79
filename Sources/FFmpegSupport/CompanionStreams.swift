import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// The streams of an input file besides the processed video — audio, subtitles, data — carried into
/// the output beside it, in sync: each packet keeps its timestamp, shifted exactly as the video's
/// frames were (the part of the input that was read, and in live mode the output clock's offset).
/// Chapters and the file's and streams' metadata (language, title) come along.
///
/// Audio is copied unchanged by default, re-encoded when asked (``AudioMode/aac``) or when the output
/// container cannot hold its codec (AAC for MP4/MOV/MKV, Opus for WebM). Subtitle and data streams
/// the container cannot hold are dropped, each with one warning.
final class CompanionStreams {
    /// What happens to audio.
    enum AudioMode: String, Sendable, CaseIterable {
        case copy, drop, aac
    }

    private enum Route {
        case copy(output: UnsafeMutablePointer<AVStream>)
        case transcode(AudioTranscoder)
    }

    private var input: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Input stream index → what to do with its packets.
    private var routes: [Int32: Route] = [:]
    private let origin: MediaOrigin
    private let path: String
    private var ended = false
    /// A packet read past the time asked for, kept for the next call.
    private var holding = false
    /// Seconds added to input media time to get output time (set with the first video frame).
    private var shift: Double?
    /// Looping input: the pass being copied (its start comes from ``MediaOrigin/passes``).
    private var pass = 0
    /// One line per stream that was dropped or re-encoded.
    private(set) var notes: [String] = []
    /// Packets written per kind, for tests and stats.
    private(set) var packetsWritten = 0

    /// Whether any stream is carried.
    var isEmpty: Bool { routes.isEmpty }

    /// Opens `origin`'s file and adds the streams that go along to `output` (before its header).
    init(origin: MediaOrigin, output: UnsafeMutablePointer<AVFormatContext>, audio: AudioMode, outputPath: String) throws {
        self.origin = origin
        path = outputPath
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        var openOptions: OpaquePointer?
        av_dict_set(&openOptions, "protocol_whitelist", "file", 0)
        defer { av_dict_free(&openOptions) }
        try check(avformat_open_input(&ctx, "file:" + origin.path, nil, &openOptions), "open input again for its other streams", path: origin.path)
        input = ctx
        guard let ctx else { return }
        try check(avformat_find_stream_info(ctx, nil), "read stream info", path: origin.path)
        let video = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        let container = CompanionStreams.containerName(outputPath)
        for i in 0..<Int32(ctx.pointee.nb_streams) where i != video {
            guard let stream = ctx.pointee.streams[Int(i)] else { continue }
            let parameters = stream.pointee.codecpar.pointee
            let codecName = String(cString: avcodec_get_name(parameters.codec_id))
            // 1: the container holds this codec, 0: it does not, negative: the muxer does not say.
            let answer = avformat_query_codec(output.pointee.oformat, parameters.codec_id, fg_compliance_normal())
            let fits = parameters.codec_type == AVMEDIA_TYPE_AUDIO ? answer != 0 : answer == 1
            switch parameters.codec_type {
            case AVMEDIA_TYPE_AUDIO:
                if origin.loops && origin.passes == nil {
                    notes.append("audio stream \(i) (\(codecName)) not written: the input loops")
                    continue
                }
                switch audio {
                case .drop: continue
                case .copy where fits:
                    routes[i] = .copy(output: try CompanionStreams.copyStream(stream, into: output, path: outputPath))
                case .copy, .aac:
                    let encoderName = container == "webm" ? "libopus" : "aac"
                    if audio == .copy {
                        notes.append("audio stream \(i): \(codecName) cannot go in .\(container); re-encoded to \(encoderName == "aac" ? "AAC" : "Opus")")
                    } else if container == "webm" {
                        notes.append("audio stream \(i): WebM cannot hold AAC; re-encoded to Opus")
                    }
                    let transcoder = try AudioTranscoder(input: stream, encoderName: encoderName, output: output, path: outputPath)
                    CompanionStreams.copyTags(of: stream, to: transcoder.outputStream)
                    routes[i] = .transcode(transcoder)
                }
            case AVMEDIA_TYPE_SUBTITLE, AVMEDIA_TYPE_DATA, AVMEDIA_TYPE_ATTACHMENT:
                let kind = parameters.codec_type == AVMEDIA_TYPE_SUBTITLE ? "subtitle" : (parameters.codec_type == AVMEDIA_TYPE_DATA ? "data" : "attachment")
                if fits && !origin.loops {
                    routes[i] = .copy(output: try CompanionStreams.copyStream(stream, into: output, path: outputPath))
                } else {
                    notes.append("\(kind) stream \(i) (\(codecName)) dropped: " + (origin.loops ? "the input loops" : ".\(container) cannot hold it"))
                }
            default:
                if stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0 {
                    notes.append("stream \(i) (\(codecName), another video stream) dropped: FrameGraph writes the processed video only")
                }
            }
        }
        if !origin.loops { copyChapters(from: ctx, to: output) }
        av_dict_copy(&output.pointee.metadata, ctx.pointee.metadata, 0)
        let start = origin.videoStart + origin.windowStart
        if origin.windowStart > 0 && !routes.isEmpty {
            let target = Int64(start * Double(AV_TIME_BASE))
            _ = avformat_seek_file(ctx, -1, Int64.min, target, target, 0)
        }
        packet = av_packet_alloc()
        guard packet != nil else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate packet", path: outputPath) }
    }

    deinit {
        av_packet_free(&packet)
        avformat_close_input(&input)
    }

    /// The container's short name by extension (`mp4`, `mkv`, `webm` …).
    static func containerName(_ path: String) -> String {
        path.split(separator: ".").last.map { $0.lowercased() } ?? ""
    }

    private static func copyStream(_ stream: UnsafeMutablePointer<AVStream>, into output: UnsafeMutablePointer<AVFormatContext>,
                                   path: String) throws -> UnsafeMutablePointer<AVStream> {
        guard let out = avformat_new_stream(output, nil) else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "add stream", path: path) }
        try check(avcodec_parameters_copy(out.pointee.codecpar, stream.pointee.codecpar), "copy stream parameters", path: path)
        out.pointee.codecpar.pointee.codec_tag = 0  // let the container choose its own tag
        out.pointee.time_base = stream.pointee.time_base
        copyTags(of: stream, to: out)
        return out
    }

    /// Language, title and the other tags, and the disposition (default, forced, …).
    static func copyTags(of stream: UnsafeMutablePointer<AVStream>, to out: UnsafeMutablePointer<AVStream>) {
        av_dict_copy(&out.pointee.metadata, stream.pointee.metadata, 0)
        out.pointee.disposition = stream.pointee.disposition
    }

    /// Chapters that overlap the part read, moved by the same shift as the video (shift 0: live mode
    /// output times are close enough to media times for chapter marks).
    private func copyChapters(from input: UnsafeMutablePointer<AVFormatContext>, to output: UnsafeMutablePointer<AVFormatContext>) {
        let count = Int(input.pointee.nb_chapters)
        guard count > 0, count < 10_000, let chapters = input.pointee.chapters else { return }
        let begin = origin.videoStart + origin.windowStart
        let end = origin.windowDuration.map { begin + $0 } ?? .infinity
        var kept: [UnsafeMutablePointer<AVChapter>] = []
        for c in 0..<count {
            guard let chapter = chapters[c] else { continue }
            let tb = av_q2d(chapter.pointee.time_base)
            let s = Double(chapter.pointee.start) * tb, e = Double(chapter.pointee.end) * tb
            guard e > begin, s < end else { continue }
            kept.append(chapter)
        }
        guard !kept.isEmpty, let array = av_calloc(kept.count, MemoryLayout<UnsafeMutablePointer<AVChapter>?>.size)?
            .assumingMemoryBound(to: UnsafeMutablePointer<AVChapter>?.self) else { return }
        var written = 0
        for chapter in kept {
            guard let copy = av_mallocz(MemoryLayout<AVChapter>.size)?.assumingMemoryBound(to: AVChapter.self) else { continue }
            let tb = chapter.pointee.time_base
            let offset = Int64(((begin) / av_q2d(tb)).rounded())
            copy.pointee.id = chapter.pointee.id
            copy.pointee.time_base = tb
            copy.pointee.start = max(0, chapter.pointee.start - offset)
            copy.pointee.end = max(copy.pointee.start, chapter.pointee.end - offset)
            av_dict_copy(&copy.pointee.metadata, chapter.pointee.metadata, 0)
            array[written] = copy
            written += 1
        }
        output.pointee.chapters = array
        output.pointee.nb_chapters = UInt32(written)
    }

    /// Writes every packet due up to output time `until` (seconds). `videoShift` — output time minus
    /// media time of the video — fixes the shift on the first call.
    func write(until: Double, videoShift: Double, output: UnsafeMutablePointer<AVFormatContext>) throws {
        if shift == nil { shift = videoShift }
        guard let shift, let input, let packet, !routes.isEmpty else { return }
        let base = origin.videoStart + origin.windowStart
        let windowEnd = origin.windowDuration ?? .infinity
        let passes = origin.loops ? origin.passes : nil
        while !ended {
            if !holding {
                let status = av_read_frame(input, packet)
                if status < 0 {
                    // The end (or damage: the video's reader reports damage; here it only ends the copy).
                    // A looping input starts its next pass once the video has.
                    if passes != nil {
                        if try nextPass(output: output) { continue }
                        return
                    }
                    ended = true
                    break
                }
                holding = true
            }
            let index = packet.pointee.stream_index
            guard let route = routes[index], let stream = input.pointee.streams[Int(index)] else {
                av_packet_unref(packet)
                holding = false
                continue
            }
            let tb = stream.pointee.time_base
            var stamp = packet.pointee.pts != fg_nopts_value() ? packet.pointee.pts : packet.pointee.dts
            if stamp == fg_nopts_value() { stamp = 0 }
            let passStart = passes?.start(of: pass) ?? 0
            var mediaTime = Double(stamp) * av_q2d(tb) - base
            // Past the end of this pass's window, or of the video's pass (audio longer than video):
            // the next pass, once the video has begun it.
            let passEnd = passes?.start(of: pass + 1).map { $0 - passStart } ?? .infinity
            if passes != nil && (mediaTime >= windowEnd || mediaTime >= passEnd) {
                av_packet_unref(packet)
                holding = false
                if try nextPass(output: output) { continue }
                return
            }
            mediaTime += passStart
            if mediaTime + shift > until { return }  // due later: keep it for the next call
            holding = false
            defer { av_packet_unref(packet) }
            let duration = Double(packet.pointee.duration) * av_q2d(tb)
            if mediaTime - passStart >= windowEnd { ended = true; break }
            if origin.windowStart > 0 && mediaTime + max(duration, 0) <= 0 { continue }  // before the part read
            if mediaTime < -1 { continue }
            let offset = Int64(((base - shift - passStart) / av_q2d(tb)).rounded())
            if packet.pointee.pts != fg_nopts_value() { packet.pointee.pts -= offset }
            if packet.pointee.dts != fg_nopts_value() { packet.pointee.dts -= offset }
            switch route {
            case .copy(let out):
                av_packet_rescale_ts(packet, tb, out.pointee.time_base)
                packet.pointee.stream_index = out.pointee.index
                packet.pointee.pos = -1
                try check(av_interleaved_write_frame(output, packet), "write copied packet", path: path)
            case .transcode(let transcoder):
                try transcoder.feed(packet, output: output)
            }
            packetsWritten += 1
        }
    }

    /// A looping input: moves to the next pass when the video has begun it (seeks back to the part
    /// read). False when the video has not got there yet (the copy waits).
    private func nextPass(output: UnsafeMutablePointer<AVFormatContext>) throws -> Bool {
        guard let passes = origin.passes, passes.start(of: pass + 1) != nil, let input else { return false }
        pass += 1
        let target = Int64((origin.videoStart + origin.windowStart) * Double(AV_TIME_BASE))
        _ = avformat_seek_file(input, -1, Int64.min, target, target, 0)
        for route in routes.values {
            if case .transcode(let transcoder) = route { transcoder.restartTiming() }
        }
        return true
    }

    /// Writes what is due up to `end` (the end of the video) and flushes the re-encoders.
    func finish(until end: Double, output: UnsafeMutablePointer<AVFormatContext>) throws {
        if shift != nil { try write(until: end, videoShift: 0, output: output) }
        for route in routes.values {
            if case .transcode(let transcoder) = route { try transcoder.feed(nil, output: output) }
        }
    }
}
