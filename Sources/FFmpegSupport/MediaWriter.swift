import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// Encodes frames to a video file: H.264 through libx264 into MP4 or MKV (chosen by the file
/// extension), with timestamps at a fixed frame rate.
///
/// The file is written beside its destination under a temporary name and renamed into place by
/// ``finish()``, after the encoder is flushed and the container's index written: the destination
/// only ever holds a complete, playable file (or what was there before). MP4 files get `+faststart`
/// (index first), so even a file cut short later still yields the frames before the cut.
public final class MediaWriter {
    /// Encoder settings with their defaults.
    public struct Settings: Sendable {
        /// FFmpeg encoder name. Default: libx264.
        public var codec = "libx264"
        /// Constant rate factor (quality; lower is better). Default: 23.
        public var crf = Settings.defaultCRF
        /// x264 speed preset. Default: veryfast.
        public var preset = Settings.defaultPreset
        /// Encoder threads; 0 lets the encoder choose. Default: 0.
        public var threads = 0
        /// The default quality.
        public static let defaultCRF = 23
        /// The default x264 preset.
        public static let defaultPreset = "veryfast"
        /// x264's speed presets, fastest first.
        public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
        public init(codec: String = "libx264", crf: Int = Settings.defaultCRF, preset: String = Settings.defaultPreset, threads: Int = 0) {
            self.codec = codec
            self.crf = crf
            self.preset = preset
            self.threads = threads
        }
    }

    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Double
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var picture: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let scaler = Scaler(method: .bilinear)
    private var finished = false
    /// The temporary file the container is written to until ``finish()``.
    private let output: OutputFile
    /// Frames handed to the encoder.
    public private(set) var framesWritten = 0

    /// Creates the file and opens the encoder for `width`×`height` frames at `fps`.
    public init(path: String, width: Int, height: Int, fps: Double, settings: Settings = Settings()) throws {
        _ = FFmpegLog.configured
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        guard fps.isFinite, fps >= 0.1, fps <= 1000 else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "encode at \(fps) frames per second (0.1 … 1000)", path: path)
        }
        output = try OutputFile(destination: path)
        let temporary = output.temporaryPath
        try check(avformat_alloc_output_context2(&ctx, nil, nil, temporary), "choose a container for this file extension (use .mp4 or .mkv)", path: path)
        format = ctx
        do {
            guard let encoder = avcodec_find_encoder_by_name(settings.codec) else {
                throw FFmpegError(code: fg_averror(ENOSYS), operation: "find encoder '\(settings.codec)'", path: path)
            }
            codec = avcodec_alloc_context3(encoder)
            guard let codec, let ctx else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate encoder", path: path) }
            let rate = av_d2q(fps, 100_000)
            codec.pointee.width = Int32(width)
            codec.pointee.height = Int32(height)
            codec.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            codec.pointee.time_base = av_inv_q(rate)
            codec.pointee.framerate = rate
            codec.pointee.thread_count = Int32(settings.threads)
            if ctx.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
                codec.pointee.flags |= fg_codec_flag_global_header()
            }
            if settings.codec.hasPrefix("libx264") {
                av_opt_set(codec.pointee.priv_data, "preset", settings.preset, 0)
                av_opt_set(codec.pointee.priv_data, "crf", "\(settings.crf)", 0)
            }
            try check(avcodec_open2(codec, encoder, nil), "open encoder '\(settings.codec)' for \(width)x\(height)", path: path)
            stream = avformat_new_stream(ctx, nil)
            guard let stream else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "add stream", path: path) }
            try check(avcodec_parameters_from_context(stream.pointee.codecpar, codec), "configure stream", path: path)
            stream.pointee.time_base = codec.pointee.time_base
            stream.pointee.avg_frame_rate = rate
            if ctx.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
                // Local files only: `file:` keeps any name a file name, the whitelist refuses the rest.
                var ioOptions: OpaquePointer?
                av_dict_set(&ioOptions, "protocol_whitelist", "file", 0)
                defer { av_dict_free(&ioOptions) }
                try check(avio_open2(&ctx.pointee.pb, "file:" + temporary, AVIO_FLAG_WRITE, nil, &ioOptions), "create file", path: path)
            }
            var options: OpaquePointer?
            if path.lowercased().hasSuffix(".mp4") || path.lowercased().hasSuffix(".mov") {
                av_dict_set(&options, "movflags", "+faststart", 0)
            }
            defer { av_dict_free(&options) }
            try check(avformat_write_header(ctx, &options), "write header", path: path)
            picture = av_frame_alloc()
            packet = av_packet_alloc()
            guard let picture else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate frame", path: path) }
            picture.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            picture.pointee.width = Int32(width)
            picture.pointee.height = Int32(height)
            try check(av_frame_get_buffer(picture, 0), "allocate frame", path: path)
        } catch {
            close()
            output.discard()
            throw error
        }
    }

    deinit {
        if !finished { try? finish() }
        close()
    }

    private func close() {
        av_frame_free(&picture)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
        if let format {
            if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&format.pointee.pb) }
            avformat_free_context(format)
        }
        format = nil
    }

    /// Encodes `frame` as output frame number `index` (presentation time `index / fps`). Frames of
    /// another size or format are converted.
    public func write(_ frame: Frame, index: Int) throws {
        guard let picture, let codec, !finished else { return }
        try check(av_frame_make_writable(picture), "prepare frame", path: path)
        if frame.format == .yuv420p && frame.width == width && frame.height == height {
            frame.copyPixels(into: picture)
        } else {
            guard let inFormat = frame.format.avPixelFormat else {
                throw FFmpegError(code: fg_averror(EINVAL), operation: "encode a \(frame.format) frame (convert it to 8-bit first)", path: path)
            }
            try scaler.scale(from: (inFormat, frame.width, frame.height),
                             planes: { $0 < frame.format.planeCount ? frame.base(plane: $0) : nil },
                             strides: { $0 < frame.format.planeCount ? frame.planes[$0].stride : 0 },
                             to: (AV_PIX_FMT_YUV420P, width, height),
                             dst: { picture.plane($0).map(UnsafeMutableRawPointer.init) }, dstStrides: { picture.stride($0) })
        }
        picture.pointee.pts = Int64(index)
        try check(avcodec_send_frame(codec, picture), "encode frame \(index)", path: path)
        framesWritten += 1
        try drain()
    }

    private func drain() throws {
        guard let codec, let packet, let stream else { return }
        while true {
            let status = avcodec_receive_packet(codec, packet)
            if status == fg_averror_eagain() || status == fg_averror_eof() { return }
            try check(status, "encode", path: path)
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            let written = av_interleaved_write_frame(format, packet)
            try check(written, "write packet", path: path)
        }
    }

    /// Flushes the encoder, writes the container's index and moves the file into place; with no frame
    /// written, removes it instead (the destination is left as it was). Safe to call more than once.
    public func finish() throws {
        guard !finished, let codec else { return }
        finished = true
        _ = avcodec_send_frame(codec, nil)
        do {
            try drain()
            try check(av_write_trailer(format), "finalize container", path: path)
        } catch {
            close()
            output.discard()
            throw error
        }
        close()
        guard framesWritten > 0 else {
            output.discard()  // no frame: no file (an empty container plays nothing)
            return
        }
        try output.commit()
    }
}
