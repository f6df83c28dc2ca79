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
///
/// Frames carry the stream's colour description (range, matrix, primaries, transfer; BT.709 for HD and
/// BT.601 for SD where the file says nothing) and, with ``Orientation/upright`` (the default), are
/// turned as the file's display matrix asks, so a phone video arrives upright. A path with a `%d`
/// field (`frames/%05d.png`) is read as an image sequence at ``Options/imageRate``.
public final class MediaReader {
    /// What to do with a display matrix (the `rotate` of phone videos).
    public enum Orientation: String, Sendable, CaseIterable {
        /// Turn the frames upright; the output then needs no rotation (default).
        case upright
        /// Leave the frames as stored and let the output carry the rotation for players.
        case carry
    }

    /// How to open a file.
    public struct Options: Sendable {
        /// Decoder threads; 0 lets FFmpeg choose.
        public var threads: Int
        public var orientation: Orientation
        /// Frames per second of an image sequence (ignored for video files).
        public var imageRate: Double
        /// With `threads` 0: decode pictures up to this many pixels on one thread (0: never).
        public var singleThreadUpToPixels = 0
        /// A network stream to read instead of the file at `path` (then `path` is only its name in
        /// messages: give the redacted address).
        public var network: NetworkInput?
        /// Gets every packet of the video stream as read (stream copy recording), before decoding.
        public var recorder: PacketRecorder?
        public init(threads: Int = 0, orientation: Orientation = .upright, imageRate: Double = 25, network: NetworkInput? = nil) {
            self.threads = threads
            self.orientation = orientation
            self.imageRate = imageRate
            self.network = network
        }
    }

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
    /// The video stream's time base (seconds per timestamp tick).
    public let timeBase: (numerator: Int32, denominator: Int32)
    /// The video stream's start time in seconds of the file's clock (frames' `mediaTime` counts from it).
    public let videoStart: Double
    /// The stream's colour tags, with what the file leaves open filled in by convention.
    public let color: ColorDescription
    /// The colour tags exactly as the file has them (for `probe`).
    public let taggedColor: ColorDescription
    /// A photo's EXIF orientation (2…8) when it is turned upright by it; nil otherwise.
    public private(set) var exifOrientation: Int?

    /// Clockwise rotation the file's display matrix asks for (0, 90, 180, 270).
    public let storedRotation: Int
    /// Rotation applied to the frames by this reader (``Orientation/upright``: `storedRotation`, else 0).
    public let appliedRotation: Int
    /// Whether `path` is an image-sequence pattern.
    public let isImageSequence: Bool
    /// Size of the pictures as stored (before any rotation).
    public let storedWidth: Int
    public let storedHeight: Int
    /// The decoder's name and the stored pixel format (for `probe`).
    public let codecName: String
    public let storedPixelFormat: String
    /// The container format's name (`rtsp`, `mpegts`, `mpjpeg`, `hls` …).
    public let formatName: String
    /// Frames that arrived at another picture size than the first and were scaled to it.
    public private(set) var resizedFrames = 0

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var decoded: UnsafeMutablePointer<AVFrame>?
    private let streamIndex: Int32
    private let avTimeBase: AVRational
    private let startPTS: Int64
    /// The pool frames come from, and the decoder's side of it: pooled memory the decoder writes
    /// yuv420p pictures into (no copy per frame).
    let decoderBuffers: DecoderBuffers
    private var pool: BufferPool { decoderBuffers.pool }
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
    /// Pictures missing from an image sequence (holes in its numbering), by file name: skipped, and
    /// their time left empty.
    public private(set) var missingPictures: [String] = []
    /// Frames whose time went backwards or stood still (a broken MPEG-TS): each is given the time
    /// one frame after the one before, so the output's timestamps keep increasing.
    public private(set) var timestampRepairs = 0
    /// An image sequence's picture numbers (every member found), and where reading is in them.
    private var sequenceNumbers: [Int] = []
    private var sequencePosition = 0
    private let sequenceOptions: Options
    /// A network stream's bounds (nil for files), and the callback that enforces them.
    private let network: NetworkInput?
    private let interrupt: StreamInterrupt?
    private let recorder: PacketRecorder?
    /// When the last picture came out of a network stream's decoder (monotonic seconds).
    private var lastPictureAt = 0.0

    /// Whether the stream announces a constant frame rate (then gaps in timestamps are lost frames).
    public let constantRate: Bool
    private var previousMediaTime: Double?
    /// The container's length over all its streams (seconds; 0 when unknown or only estimated from
    /// the bit rate), and its start.
    private var announcedLength = 0.0, announcedStart = 0.0
    /// The latest end, in seconds from the container's start, of any packet of any stream read.
    private var latestPacketEnd = 0.0

    /// Byte position of the demuxer in the file.
    private var currentOffset: Int64 { format?.pointee.pb.map { avio_tell($0) } ?? -1 }

    /// Opens `path`. `threads` = 0 lets FFmpeg choose the number of decoding threads.
    public convenience init(path: String, threads: Int = 0, pool: BufferPool = .shared) throws {
        try self.init(path: path, options: Options(threads: threads), pool: pool)
    }

    /// Opens `path` (a media file, or an image sequence pattern) with `options`.
    public init(path: String, options: Options, pool: BufferPool = .shared) throws {
        _ = FFmpegLog.configured
        self.path = path
        decoderBuffers = DecoderBuffers(pool: pool)
        let sequence = ImageSequence.isPattern(path)
        isImageSequence = sequence
        sequenceOptions = options
        network = options.network
        recorder = options.recorder
        interrupt = options.network.map { n in StreamInterrupt(byteBudget: n.maxPacketBytes, shouldStop: n.shouldStop) }
        var inputFormat: UnsafePointer<AVInputFormat>?
        var openOptions: OpaquePointer?
        var openName = (sequence ? "" : "file:") + path
        var whitelist = "file"
        if let network = options.network, let interrupt {
            openName = network.url.full
            whitelist = network.url.scheme.protocols
            Self.networkOptions(&openOptions, network)
            if let sdp = network.sdpFile {
                try FileCheck.regularFile(sdp, what: "SDP file", maxBytes: 1 << 20)
                openName = "file:" + sdp
                whitelist = "file,rtp,udp"
                inputFormat = UnsafePointer(av_find_input_format("sdp"))
            }
            interrupt.arm(seconds: network.openTimeout)
        } else if sequence {
            guard options.imageRate.isFinite, options.imageRate >= 0.01, options.imageRate <= 1000 else {
                throw FFmpegError(code: fg_averror(EINVAL), operation: "read an image sequence at \(options.imageRate) frames per second (0.01 … 1000)", path: path)
            }
            // Every member is found (and checked to be a regular file) first; reading starts at the
            // lowest number and goes on past holes in the numbering, which are counted.
            sequenceNumbers = try ImageSequence.members(of: path)
            guard let first = sequenceNumbers.first else {
                throw FFmpegError(code: fg_averror(ENOENT), operation: "find a picture (no file is named like \(ImageSequence.path(path, index: 0)))", path: path)
            }
            try FileCheck.regularFile(ImageSequence.path(path, index: first), what: "input")
            inputFormat = UnsafePointer(av_find_input_format("image2"))
            Self.sequenceOptions(&openOptions, rate: options.imageRate, start: first)
        } else {
            try FileCheck.regularFile(path, what: "input")
        }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        // Local files only: the `file:` prefix keeps a name such as `tcp:x.mp4` a file name, and the
        // whitelist stops a playlist or reference file from opening other protocols. A network stream
        // gets its own scheme's protocols only, and the interrupt callback bounds every wait.
        av_dict_set(&openOptions, "protocol_whitelist", whitelist, 0)
        defer { av_dict_free(&openOptions) }
        if let interrupt, let network = options.network {
            ctx = avformat_alloc_context()
            guard let c = ctx else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate a demuxer", path: path) }
            c.pointee.interrupt_callback = interrupt.callback
            c.pointee.probesize = Int64(network.probeBytes)
            c.pointee.max_analyze_duration = Int64(network.analyzeMicroseconds)
            c.pointee.format_probesize = Int32(min(network.probeBytes, 1 << 20))
            // A live stream's rate is not measured (20 frames, most of a second, by default): frames
            // are stamped by their arrival. The stream info is complete once a picture decodes.
            c.pointee.fps_probe_size = 0
        }
        let openStatus = avformat_open_input(&ctx, openName, inputFormat, &openOptions)
        if openStatus < 0 {
            if let network = options.network, let interrupt {
                throw StreamLost(url: path, kind: .drop, reason: Self.reason(openStatus, interrupt: interrupt, network: network, doing: "connect"))
            }
            throw FFmpegError(code: openStatus, operation: "open input (not a media file FFmpeg can read?)", path: path)
        }
        format = ctx
        interrupt?.format = ctx
        formatName = ctx.flatMap { $0.pointee.iformat }.map { String(cString: $0.pointee.name) } ?? "unknown"
        do {
            if let network = options.network, let interrupt {
                interrupt.arm(seconds: network.openTimeout)
                let status = avformat_find_stream_info(ctx, nil)
                if status < 0 { throw StreamLost(url: path, kind: .drop, reason: Self.reason(status, interrupt: interrupt, network: network, doing: "read the stream's header")) }
            } else {
                try check(avformat_find_stream_info(ctx, nil), "read stream info", path: path)
            }
            var decoderPointer: UnsafePointer<AVCodec>?
            let index = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, &decoderPointer, 0)
            guard index >= 0, let decoderPointer, let stream = ctx?.pointee.streams[Int(index)] else {
                throw FFmpegError(code: index < 0 ? index : fg_averror(EINVAL), operation: "find a video stream", path: path)
            }
            streamIndex = index
            let timeBase = stream.pointee.time_base
            avTimeBase = timeBase
            self.timeBase = (timeBase.num, timeBase.den)
            startPTS = stream.pointee.start_time == fg_nopts_value() ? 0 : stream.pointee.start_time
            videoStart = Double(startPTS) * av_q2d(timeBase)
            let stored = Int(fg_stream_rotation(stream).rounded()) % 360
            storedRotation = (stored / 90) * 90 == stored ? stored : ((stored + 45) / 90 * 90) % 360
            appliedRotation = options.orientation == .upright ? storedRotation : 0
            // A JPEG photo: its EXIF orientation (FFmpeg 5 leaves it to the reader).
            let jpeg = String(cString: decoderPointer.pointee.name) == "mjpeg" && stream.pointee.nb_frames <= 1
            exifOrientation = options.orientation == .upright && options.network == nil && jpeg && storedRotation == 0 ? ExifOrientation.read(path: path).flatMap { $0 == 1 ? nil : $0 } : nil
            let parameters = stream.pointee.codecpar.pointee
            taggedColor = ColorDescription(parameters)
            codecName = String(cString: decoderPointer.pointee.name)
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
            if let c = ctx?.pointee, c.duration > 0, c.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE {
                announcedLength = Double(c.duration) / Double(AV_TIME_BASE)
                announcedStart = c.start_time == fg_nopts_value() ? 0 : Double(c.start_time) / Double(AV_TIME_BASE)
            }

            codec = avcodec_alloc_context3(decoderPointer)
            guard let codec else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate decoder", path: path) }
            try check(avcodec_parameters_to_context(codec, stream.pointee.codecpar), "configure decoder", path: path)
            let pixels = Int(codec.pointee.width) * Int(codec.pointee.height)
            if let network = options.network {
                codec.pointee.max_pixels = Int64(network.maxPixels)
                guard pixels <= network.maxPixels else {
                    throw StreamLost(url: path, kind: .drop, reason: "the stream claims \(codec.pointee.width)×\(codec.pointee.height) pictures, over the limit of \(network.maxPixels) pixels")
                }
            }
            codec.pointee.thread_count = Int32(options.threads == 0 && pixels <= options.singleThreadUpToPixels ? 1 : options.threads)
            decoderBuffers.install(on: codec, decoder: decoderPointer)
            try check(avcodec_open2(codec, decoderPointer, nil), "open decoder", path: path)
            guard codec.pointee.width > 0, codec.pointee.height > 0 else {
                throw FFmpegError(code: fg_averror_invaliddata(), operation: "read the picture size", path: path)
            }
            storedWidth = options.network?.outputSize?.width ?? Int(codec.pointee.width)
            storedHeight = options.network?.outputSize?.height ?? Int(codec.pointee.height)
            // Quarter turns: the display matrix's, or a photo's EXIF orientation 5…8.
            let turned = (appliedRotation % 180 != 0) != ((5...8).contains(exifOrientation ?? 0))
            width = turned ? storedHeight : storedWidth
            height = turned ? storedWidth : storedHeight
            // Formats FrameGraph has are handed out as they are (JPEG-style yuvj420p as yuv420p, its
            // full range said by the frames' colour); RGB-like formats become rgb24, everything else
            // yuv420p (full-range 4:2:2 and 4:4:4 keep their range).
            let native = codec.pointee.pix_fmt
            let fullRange = Scaler.isFullRangeFormat(native)
            let rgbLike = [AV_PIX_FMT_PAL8, AV_PIX_FMT_RGBA64BE, AV_PIX_FMT_RGB48BE, AV_PIX_FMT_GBRP, AV_PIX_FMT_YA8, AV_PIX_FMT_MONOBLACK].contains(native)
            storedPixelFormat = av_get_pix_fmt_name(native).map { String(cString: $0) } ?? "unknown"
            var format = PixelFormat(av: native) ?? (native == AV_PIX_FMT_YUVJ420P ? .yuv420p : (rgbLike ? .rgb24 : .yuv420p))
            if appliedRotation != 0 && format == .nv12 { format = .yuv420p }  // turned frames are planar
            if appliedRotation % 180 != 0 && format == .yuv420p && (storedWidth % 2 != 0 || storedHeight % 2 != 0) { format = .rgb24 }
            if exifOrientation != nil { format = .rgb24 }  // turned and mirrored photos: any size, no chroma alignment
            outputFormat = options.network?.outputFormat ?? format
            var resolved = taggedColor.resolved(height: min(storedWidth, storedHeight) >= 720 ? 720 : storedHeight)
            if fullRange && taggedColor.range == .unspecified { resolved.range = .full }
            color = resolved
            packet = av_packet_alloc()
            decoded = av_frame_alloc()
            lastPictureAt = StreamInterrupt.now()
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

    /// Whether the end of the input was read: the frames ``nextFrame()`` still returns were decoded
    /// already (held back by the decoder's reordering), none needs a packet.
    public var isDraining: Bool { draining }

    /// Reads the next video packet and hands it to the decoder without taking a frame out: the
    /// decoding work of a later ``nextFrame()`` done now. A looping source calls it after a seek, once
    /// per call that returns the end of the previous pass, so the first frame of the next one (which
    /// needs as many packets as the decoder reorders, plus one) costs no burst. Call it at most as many
    /// times as frames the decoder held back at the end (more could find it full); nothing once the
    /// end is reached.
    public func prime() throws {
        guard let codec, let packet, !draining, !finished else { return }
        try readPacket(codec: codec, packet: packet)
    }

    /// Seeks to the keyframe at or before `seconds`; frames before `seconds` are then skipped by the caller.
    public func seek(to seconds: Double) throws {
        let ticks = seconds / av_q2d(avTimeBase)
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
                if decoded.pointee.decode_error_flags != 0 || decoded.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 { damageSeen = true }
                return try convert(decoded)
            }
            if status == fg_averror_eof() {
                // Damaged data and then an early end: the demuxer could not find its way back. The
                // sign is the decoder's (a damaged frame or packet) or, as that depends on the
                // decoder's frame threads' timing, the container's own: the packets of every stream
                // end well before the length it announced.
                let videoEndsEarly = damageSeen && duration > 0 && (previousMediaTime.map { $0 + max(0.5, duration / 10) < duration } ?? false)
                let everyStreamEndsEarly = announcedLength > 0 && latestPacketEnd + max(0.5, announcedLength / 10) < announcedLength
                if pendingDamage == nil, videoEndsEarly || everyStreamEndsEarly, let last = previousMediaTime {
                    let duration = duration > 0 ? duration : announcedLength
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
            if status == fg_averror_invaliddata() || (network != nil && status < 0 && status != fg_averror_eagain()) {
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

    /// A network stream's demuxer and protocol options: transport, timeouts (microseconds), buffers.
    private static func networkOptions(_ options: inout OpaquePointer?, _ network: NetworkInput) {
        let micros = String(Int(network.readTimeout * 1_000_000))
        switch network.url.scheme {
        case .rtsp, .rtsps:
            av_dict_set(&options, "rtsp_transport", network.transport.rawValue, 0)
            av_dict_set(&options, "timeout", micros, 0)  // socket I/O (FFmpeg 5+: timeout; stimeout before)
            av_dict_set(&options, "buffer_size", String(1 << 20), 0)
            av_dict_set(&options, "reorder_queue_size", "64", 0)
        case .http, .https:
            av_dict_set(&options, "rw_timeout", micros, 0)
            av_dict_set(&options, "reconnect", "0", 0)  // the source reconnects, with its own backoff
            av_dict_set(&options, "multiple_requests", "0", 0)
        case .srt:
            av_dict_set(&options, "rw_timeout", micros, 0)
            av_dict_set(&options, "connect_timeout", String(Int(network.openTimeout * 1000)), 0)
        case .udp, .rtp:
            av_dict_set(&options, "timeout", micros, 0)
            av_dict_set(&options, "fifo_size", String(7 * 4096), 0)
            av_dict_set(&options, "overrun_nonfatal", "1", 0)
        case .rtmp, .rtmps:
            av_dict_set(&options, "rw_timeout", micros, 0)
        }
        av_dict_set(&options, "max_delay", "500000", 0)
        // Not `nobuffer`: the packets read while finding the streams (the first keyframe among them)
        // are kept and decoded, rather than discarded to wait for the next keyframe (up to a GOP later).
        av_dict_set(&options, "fflags", "discardcorrupt", 0)
    }

    /// One line for a failed network call: what the interrupt stopped, or FFmpeg's own reason.
    private static func reason(_ status: Int32, interrupt: StreamInterrupt, network: NetworkInput, doing: String) -> String {
        switch interrupt.reason {
        case .timeout:
            let seconds = doing == "read" ? network.readTimeout : network.openTimeout
            return "\(doing): nothing usable for \(String(format: "%g", seconds)) s"
        case .tooManyBytes:
            return "\(doing): more than \(network.maxPacketBytes >> 20) MiB without a complete packet (a claimed frame that large is refused)"
        case .stop:
            return "\(doing): stopped"
        case .none:
            if status == fg_averror_eof() { return "\(doing): the server ended the stream" }
            return "\(doing): " + StreamURL.redact(FFmpegError.message(for: status))
        }
    }

    /// The image2 demuxer's options for a sequence at `rate` starting at picture `start`.
    private static func sequenceOptions(_ options: inout OpaquePointer?, rate: Double, start: Int) {
        let q = av_d2q(rate, 100_000)
        av_dict_set(&options, "framerate", "\(q.num)/\(q.den)", 0)
        av_dict_set(&options, "start_number", String(start), 0)
        av_dict_set(&options, "start_number_range", "1", 0)
    }

    /// At the end of a run of consecutive pictures: when the sequence goes on after a hole, the
    /// missing names are noted and reading resumes at the next picture. True when it did.
    private func continueSequence() throws -> Bool {
        guard isImageSequence, sequencePosition < sequenceNumbers.count else { return false }
        let previous = sequencePosition > 0 ? sequenceNumbers[sequencePosition - 1] : sequenceNumbers[0] - 1
        let next = sequenceNumbers[sequencePosition]
        for n in (previous + 1)..<next where missingPictures.count < 100_000 { missingPictures.append(ImageSequence.path(path, index: n)) }
        avformat_close_input(&format)
        var options: OpaquePointer?
        Self.sequenceOptions(&options, rate: sequenceOptions.imageRate, start: next)
        av_dict_set(&options, "protocol_whitelist", "file", 0)
        defer { av_dict_free(&options) }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let status = avformat_open_input(&ctx, path, av_find_input_format("image2"), &options)
        guard status >= 0 else { throw FFmpegError(code: status, operation: "open picture \(ImageSequence.path(path, index: next))", path: path) }
        format = ctx
        return true
    }

    private func readPacket(codec: UnsafeMutablePointer<AVCodecContext>, packet: UnsafeMutablePointer<AVPacket>) throws {
        while true {
            if let network, let interrupt {
                // Data that never decodes (garbage, a stream of another kind) is a stall too.
                if StreamInterrupt.now() - lastPictureAt > network.readTimeout {
                    throw StreamLost(url: path, kind: .stall, reason: "read: no picture for \(String(format: "%g", network.readTimeout)) s (data arrives, none decodes)")
                }
                interrupt.arm(seconds: max(0.01, lastPictureAt + network.readTimeout - StreamInterrupt.now()))
            }
            let status = av_read_frame(format, packet)
            if status < 0, let network, let interrupt {
                // A live stream has no end to drain to: a failed read ends the connection.
                if interrupt.reason == .stop { draining = true; return }
                throw StreamLost(url: path, kind: interrupt.reason == .timeout ? .stall : .drop,
                                 reason: Self.reason(status, interrupt: interrupt, network: network, doing: "read"))
            }
            interrupt?.packetArrived()
            if status == fg_averror_eof(), try continueSequence() { continue }
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
            notePacketEnd(packet.pointee)
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            if let recorder, let format, let stream = format.pointee.streams[Int(streamIndex)] { recorder.record(packet, stream: stream) }
            if isImageSequence, sequencePosition < sequenceNumbers.count {
                // The picture's own number sets its time (1/rate a number): a hole stays a gap in time.
                let number = Int64(sequenceNumbers[sequencePosition] - sequenceNumbers[0])
                sequencePosition += 1
                packet.pointee.pts = startPTS &+ number
                packet.pointee.dts = startPTS &+ number
            }
            if packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 { damageSeen = true }
            let sent = avcodec_send_packet(codec, packet)
            if sent < 0 && sent != fg_averror_eagain() {
                if sent == fg_averror_invaliddata() || (network != nil && sent != fg_averror(ENOMEM)) {  // a damaged packet: skip it, count it, keep going
                    noteCorrupt()
                    continue
                }
                throw FFmpegError(code: sent, operation: "decode packet \(packetsRead)", path: path)
            }
            return
        }
    }

    /// Whether anything said the data is damaged (a decoding error, a packet flagged corrupt): only
    /// then are gaps in the timestamps counted as lost frames (a variable-rate file has gaps by design).
    private var damageSeen = false

    /// Moves ``latestPacketEnd`` to the end of `packet` (of any stream) when later.
    private func notePacketEnd(_ packet: AVPacket) {
        guard let format, packet.stream_index >= 0, UInt32(packet.stream_index) < format.pointee.nb_streams,
              let stream = format.pointee.streams[Int(packet.stream_index)] else { return }
        let time = packet.pts != fg_nopts_value() ? packet.pts : packet.dts
        guard time != fg_nopts_value() else { return }
        let end = Double(time) * av_q2d(stream.pointee.time_base) + Double(max(0, packet.duration)) * av_q2d(stream.pointee.time_base)
        if end.isFinite { latestPacketEnd = max(latestPacketEnd, end - announcedStart) }
    }

    private func noteCorrupt() {
        damageSeen = true
        corruptFrames += 1
        if firstCorruptOffset == nil { firstCorruptOffset = currentOffset }
    }

    /// The colour of a decoded picture: its own tags where it has them, else the stream's.
    private func color(of av: UnsafeMutablePointer<AVFrame>) -> ColorDescription {
        var c = ColorDescription(frame: av).filled(from: color)
        if Scaler.isFullRangeFormat(AVPixelFormat(rawValue: av.pointee.format)) { c.range = .full }
        return c
    }

    private func convert(_ av: UnsafeMutablePointer<AVFrame>) throws -> Frame {
        let storedSize = (width: storedWidth, height: storedHeight)  // as decoded, before any turn
        let avFormat = AVPixelFormat(rawValue: av.pointee.format)
        let sameLayout = PixelFormat(av: avFormat) == outputFormat || (avFormat == AV_PIX_FMT_YUVJ420P && outputFormat == .yuv420p)
        let sameSize = Int(av.pointee.width) == storedSize.width && Int(av.pointee.height) == storedSize.height
        if !sameSize { resizedFrames += 1 }
        let pictureColor = color(of: av)
        var frame: Frame
        if sameSize, sameLayout, outputFormat == .yuv420p,
           let decoded = try decoderBuffers.frame(of: av, width: storedSize.width, height: storedSize.height, path: path) {
            frame = decoded  // decoded into pooled memory: the frame is the picture itself
        } else {
            frame = Frame.make(outputFormat, width: storedSize.width, height: storedSize.height, pool: pool)
            if sameSize && sameLayout {
                frame.copyPixels(from: av)
            } else {
                // Other layouts (10-bit, 4:2:2, a size change mid-stream) are converted to the first frame's.
                guard let outAV = outputFormat.avPixelFormat else {
                    throw FFmpegError(code: fg_averror(ENOSYS), operation: "convert decoded frame", path: path)
                }
                let target = frame
                try scaler.scale(from: (avFormat, Int(av.pointee.width), Int(av.pointee.height)),
                                 planes: { av.plane($0).map(UnsafeMutableRawPointer.init) }, strides: { av.stride($0) },
                                 to: (outAV, storedSize.width, storedSize.height),
                                 dst: { $0 < target.format.planeCount ? target.base(plane: $0) : nil },
                                 dstStrides: { $0 < target.format.planeCount ? target.planes[$0].stride : 0 },
                                 color: (pictureColor, pictureColor))
            }
        }
        frame.color = pictureColor
        if appliedRotation != 0 { frame = frame.rotated(clockwise: appliedRotation, pool: pool) }
        if let exif = exifOrientation { frame = ExifOrientation.apply(exif, to: frame, pool: pool) }
        var pts = av.pointee.best_effort_timestamp
        if pts == fg_nopts_value() { pts = av.pointee.pts }
        if pts == fg_nopts_value() {
            frame.mediaTime = frameRate > 0 ? Double(framesDecoded) / frameRate : 0
        } else {
            frame.mediaTime = Double(pts - startPTS) * av_q2d(avTimeBase)
        }
        // Frames missing between two decoded ones (a damaged stretch the demuxer skipped) are counted
        // as corrupt, for constant-rate streams where the gap is measurable.
        if constantRate, damageSeen, frameRate > 0, let previous = previousMediaTime {
            let missing = Int(((frame.mediaTime - previous) * frameRate).rounded()) - 1
            if missing > 0 && missing < 1_000_000 {
                corruptFrames += missing
                if firstCorruptOffset == nil { firstCorruptOffset = currentOffset }
            }
        }
        if let previous = previousMediaTime, !(frame.mediaTime > previous) {
            // Time went back or stood still (a broken stream): one frame after the previous one.
            frame.mediaTime = previous + (frameRate > 0 ? 1 / frameRate : 1.0 / 30)
            timestampRepairs += 1
        }
        previousMediaTime = frame.mediaTime
        if network != nil { lastPictureAt = StreamInterrupt.now() }
        frame.sequence = framesDecoded
        framesDecoded += 1
        return frame
    }
}
