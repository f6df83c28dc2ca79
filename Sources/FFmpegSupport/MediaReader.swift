import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// Opens a video file (anything FFmpeg demuxes and decodes) and decodes its first video stream into
/// pooled ``Frame``s.
///
/// Damage is reported, not hidden: when reading stops early (a cut file, corrupt data), the frames
/// the decoder still holds are returned first and the next call throws ``MediaReader/Damage`` with
/// the byte offset and the count of frames decoded.
public final class MediaReader {
    /// Reading stopped before the end of the stream the container announced.
    public struct Damage: Error, Sendable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public let byteOffset: Int64
        public let framesDecoded: Int
        public var description: String {
            "\(path): \(reason) at byte \(byteOffset), after \(framesDecoded) decoded frames (those were kept)"
        }
    }

    public let path: String
    /// Decoded picture size and format (FrameGraph's, after conversion).
    public let width: Int
    public let height: Int
    public let outputFormat: PixelFormat
    /// Frame rate the container announces (0 when unknown).
    public let frameRate: Double
    /// Frames the container's index announces (0 when unknown).
    public let announcedFrameCount: Int
    /// Duration in seconds (0 when unknown).
    public let duration: Double

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var decoded: UnsafeMutablePointer<AVFrame>?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let startPTS: Int64
    private let pool: BufferPool
    private let scaler = Scaler(method: .bilinear)
    private var draining = false
    private var finished = false
    private var pendingDamage: Damage?
    private var packetsRead = 0
    /// Frames returned so far.
    public private(set) var framesDecoded = 0
    /// Frames or packets the decoder could not decode (damaged data inside the file), skipped.
    public private(set) var corruptFrames = 0
    /// Byte offset of the first damaged stretch (nil while none was seen).
    public private(set) var firstCorruptOffset: Int64?

    /// Whether the stream announces a constant frame rate (then gaps in timestamps are lost frames).
    public let constantRate: Bool
    private var previousMediaTime: Double?

    /// Byte position of the demuxer in the file.
    private var currentOffset: Int64 { format?.pointee.pb.map { avio_tell($0) } ?? -1 }

    /// Opens `path`. `threads` = 0 lets FFmpeg choose the number of decoding threads.
    public init(path: String, threads: Int = 0, pool: BufferPool = .shared) throws {
        _ = FFmpegLog.configured
        self.path = path
        self.pool = pool
        try FileCheck.regularFile(path, what: "input")
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        // Local files only: the `file:` prefix keeps a name such as `tcp:x.mp4` a file name, and the
        // whitelist stops a playlist or reference file from opening other protocols.
        var openOptions: OpaquePointer?
        av_dict_set(&openOptions, "protocol_whitelist", "file", 0)
        defer { av_dict_free(&openOptions) }
        let openStatus = avformat_open_input(&ctx, "file:" + path, nil, &openOptions)
        if openStatus < 0 {
            throw FFmpegError(code: openStatus, operation: "open input (not a media file FFmpeg can read?)", path: path)
        }
        format = ctx
        do {
            try check(avformat_find_stream_info(ctx, nil), "read stream info", path: path)
            var decoderPointer: UnsafePointer<AVCodec>?
            let index = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, &decoderPointer, 0)
            guard index >= 0, let decoderPointer, let stream = ctx?.pointee.streams[Int(index)] else {
                throw FFmpegError(code: index < 0 ? index : fg_averror(EINVAL), operation: "find a video stream", path: path)
            }
            streamIndex = index
            timeBase = stream.pointee.time_base
            startPTS = stream.pointee.start_time == fg_nopts_value() ? 0 : stream.pointee.start_time
            announcedFrameCount = Int(stream.pointee.nb_frames)
            let rate = stream.pointee.avg_frame_rate.den != 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
            frameRate = rate.den != 0 ? av_q2d(rate) : 0
            let real = stream.pointee.r_frame_rate, average = stream.pointee.avg_frame_rate
            constantRate = real.den != 0 && average.den != 0 && av_cmp_q(real, average) == 0
            let streamDuration = stream.pointee.duration
            if streamDuration != fg_nopts_value() && streamDuration > 0 {
                duration = Double(streamDuration) * av_q2d(timeBase)
            } else if let d = ctx?.pointee.duration, d > 0 {
                duration = Double(d) / Double(AV_TIME_BASE)
            } else {
                duration = 0
            }

            codec = avcodec_alloc_context3(decoderPointer)
            guard let codec else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate decoder", path: path) }
            try check(avcodec_parameters_to_context(codec, stream.pointee.codecpar), "configure decoder", path: path)
            codec.pointee.thread_count = Int32(threads)
            try check(avcodec_open2(codec, decoderPointer, nil), "open decoder", path: path)
            guard codec.pointee.width > 0, codec.pointee.height > 0 else {
                throw FFmpegError(code: fg_averror_invaliddata(), operation: "read the picture size", path: path)
            }
            width = Int(codec.pointee.width)
            height = Int(codec.pointee.height)
            // Formats FrameGraph has are handed out as they are; full-range YUV (JPEG, MJPEG) and RGB-like
            // formats become rgb24 (so the range is converted right), everything else yuv420p.
            let native = codec.pointee.pix_fmt
            let fullRange = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_PAL8, AV_PIX_FMT_RGBA64BE,
                             AV_PIX_FMT_RGB48BE, AV_PIX_FMT_GBRP, AV_PIX_FMT_YA8, AV_PIX_FMT_MONOBLACK].contains(native)
            outputFormat = PixelFormat(av: native) ?? (fullRange ? .rgb24 : .yuv420p)
            packet = av_packet_alloc()
            decoded = av_frame_alloc()
        } catch {
            avcodec_free_context(&codec)
            avformat_close_input(&format)
            throw error
        }
    }

    deinit {
        av_frame_free(&decoded)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
        avformat_close_input(&format)
    }

    /// Seeks to the keyframe at or before `seconds`; frames before `seconds` are then skipped by the caller.
    public func seek(to seconds: Double) throws {
        let ticks = seconds / av_q2d(timeBase)
        guard ticks.isFinite, ticks >= 0, ticks < 1e18 else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "seek to \(seconds) s (out of range)", path: path)
        }
        let target = startPTS &+ Int64(ticks)
        try check(av_seek_frame(format, streamIndex, target, AVSEEK_FLAG_BACKWARD), "seek to \(seconds) s", path: path)
        avcodec_flush_buffers(codec)
        previousMediaTime = nil
        draining = false
        finished = false
        pendingDamage = nil
    }

    /// The next decoded frame, or nil at the end. Throws ``Damage`` once after the last good frame of
    /// a damaged file, and ``FFmpegError`` for decoding failures.
    public func nextFrame() throws -> Frame? {
        guard let codec, let decoded, let packet else { return nil }
        while true {
            let status = avcodec_receive_frame(codec, decoded)
            if status == 0 {
                defer { av_frame_unref(decoded) }
                return try convert(decoded)
            }
            if status == fg_averror_eof() {
                if pendingDamage == nil, corruptFrames > 0, duration > 0, let last = previousMediaTime,
                   last + max(0.5, duration / 10) < duration {
                    // Damaged data and then an early end: the demuxer could not find its way back.
                    pendingDamage = Damage(path: path, reason: String(format: "reading stopped at %.2f s of %.2f s after damaged data", last, duration),
                                           byteOffset: firstCorruptOffset ?? currentOffset, framesDecoded: framesDecoded)
                }
                if let damage = pendingDamage {
                    pendingDamage = nil
                    finished = true
                    throw Damage(path: path, reason: damage.reason, byteOffset: damage.byteOffset, framesDecoded: framesDecoded)
                }
                return nil
            }
            if status == fg_averror_invaliddata() {
                // A damaged frame: skip it and count it; reading goes on (a cut file is reported when
                // reading stops early).
                noteCorrupt()
                continue
            }
            guard status == fg_averror_eagain() else {
                throw FFmpegError(code: status, operation: "decode frame \(framesDecoded)", path: path)
            }
            if draining { return nil }
            try readPacket(codec: codec, packet: packet)
        }
    }

    private func readPacket(codec: UnsafeMutablePointer<AVCodecContext>, packet: UnsafeMutablePointer<AVPacket>) throws {
        while true {
            let status = av_read_frame(format, packet)
            if status < 0 {
                let offset = currentOffset
                if pendingDamage != nil {
                    // Already damaged: keep the first reason.
                } else if status != fg_averror_eof() {
                    pendingDamage = Damage(path: path, reason: "reading stopped (\(FFmpegError.message(for: status)))",
                                           byteOffset: offset, framesDecoded: framesDecoded)
                } else if announcedFrameCount > 0 && packetsRead < announcedFrameCount {
                    pendingDamage = Damage(path: path, reason: "file ends early: \(packetsRead) of \(announcedFrameCount) video packets present",
                                           byteOffset: offset, framesDecoded: framesDecoded)
                }
                draining = true
                _ = avcodec_send_packet(codec, nil)  // flush: the decoder returns what it still holds
                return
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            let sent = avcodec_send_packet(codec, packet)
            if sent < 0 && sent != fg_averror_eagain() {
                if sent == fg_averror_invaliddata() {  // a damaged packet: skip it, count it, keep going
                    noteCorrupt()
                    continue
                }
                throw FFmpegError(code: sent, operation: "decode packet \(packetsRead)", path: path)
            }
            return
        }
    }

    private func noteCorrupt() {
        corruptFrames += 1
        if firstCorruptOffset == nil { firstCorruptOffset = currentOffset }
    }

    private func convert(_ av: UnsafeMutablePointer<AVFrame>) throws -> Frame {
        var frame = Frame.make(outputFormat, width: width, height: height, pool: pool)
        let avFormat = AVPixelFormat(rawValue: av.pointee.format)
        if Int(av.pointee.width) == width, Int(av.pointee.height) == height, PixelFormat(av: avFormat) == outputFormat {
            frame.copyPixels(from: av)
        } else {
            // Other layouts (10-bit, 4:2:2, a size change mid-stream) are converted to the first frame's.
            guard let outAV = outputFormat.avPixelFormat else {
                throw FFmpegError(code: fg_averror(ENOSYS), operation: "convert decoded frame", path: path)
            }
            try scaler.scale(from: (avFormat, Int(av.pointee.width), Int(av.pointee.height)),
                             planes: { av.plane($0).map(UnsafeMutableRawPointer.init) }, strides: { av.stride($0) },
                             to: (outAV, width, height),
                             dst: { $0 < frame.format.planeCount ? frame.base(plane: $0) : nil },
                             dstStrides: { $0 < frame.format.planeCount ? frame.planes[$0].stride : 0 })
        }
        var pts = av.pointee.best_effort_timestamp
        if pts == fg_nopts_value() { pts = av.pointee.pts }
        if pts == fg_nopts_value() {
            frame.mediaTime = frameRate > 0 ? Double(framesDecoded) / frameRate : 0
        } else {
            frame.mediaTime = Double(pts - startPTS) * av_q2d(timeBase)
        }
        // Frames missing between two decoded ones (a damaged stretch the demuxer skipped) are counted
        // as corrupt, for constant-rate streams where the gap is measurable.
        if constantRate, frameRate > 0, let previous = previousMediaTime {
            let missing = Int(((frame.mediaTime - previous) * frameRate).rounded()) - 1
            if missing > 0 && missing < 1_000_000 {
                corruptFrames += missing
                if firstCorruptOffset == nil { firstCorruptOffset = currentOffset }
            }
        }
        previousMediaTime = frame.mediaTime
        frame.sequence = framesDecoded
        framesDecoded += 1
        return frame
    }
}
