import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// Encodes frames to a video file: H.264, H.265, VP9, AV1, FFV1 or ProRes (``VideoCodecChoice``) in
/// MP4, MOV, MKV or WebM (chosen by the file extension), with the input's other streams beside it.
///
/// Timing is the caller's: each frame comes with its timestamp in ``timeBase`` — the input's own
/// time base when an offline run keeps the source's timing (variable frame rate included), or
/// 1/fps when a live run writes one frame per clock tick. The output is tagged with the colour it
/// holds (``ColorDescription``) and, when the source carries it, the rotation players apply.
///
/// The file is written beside its destination under a temporary name and renamed into place by
/// ``finish()``, after the encoder is flushed and the container's index written: the destination
/// only ever holds a complete, playable file (or what was there before). MP4 files get `+faststart`
/// (index first), so even a file cut short later still yields the frames before the cut.
public final class MediaWriter {
    /// Encoder settings with their defaults.
    public struct Settings: Sendable {
        /// Codec name from ``VideoCodecChoice`` (`h264`, `h265`, `vp9`, `av1`, `ffv1`, `prores`), `auto`
        /// (by extension: VP9 for .webm, else H.264), or an FFmpeg encoder name. Default: auto.
        public var codec = "auto"
        /// Quality (lower is better); nil: the codec's default (x264 23, x265 28, VP9 31, AV1 35).
        public var crf: Int?
        /// Target bit rate in bits per second (nil: quality-based).
        public var bitrate: Int?
        /// Speed preset in x264's names, mapped onto each encoder's own. Default: veryfast.
        public var preset = Settings.defaultPreset
        /// Output pixel format (one of ``VideoCodecChoice/pixelFormats``; nil: the codec's default).
        public var pixelFormat: String?
        /// Encoder threads; 0 lets the encoder choose. Default: 0.
        public var threads = 0
        /// x264/x265 tuning (`zerolatency`, `film`, `animation`, `grain`, `stillimage`, `fastdecode`,
        /// `psnr`, `ssim`); nil or `none`: none. (Measured live at 1080p, zerolatency cost more CPU with
        /// one encoder thread, so it is not the live default.)
        public var tune: String?
        /// What `tune` accepts.
        public static let tunes = ["zerolatency", "film", "animation", "grain", "stillimage", "fastdecode", "psnr", "ssim"]
        /// Audio of the source: copy (default), drop, or re-encode to AAC.
        public var audio = "copy"
        /// Live encoding (x264, x265): no B-frames, no look-ahead, and slice threads instead of frame
        /// threads (x264's `zerolatency` tuning unless `tune` names another), so each frame's packet
        /// comes out of the call that sent it: no frames held inside the encoder. Default: false.
        public var lowLatency = false
        /// x264: keep the stream's headers (SPS/PPS) the same for every preset from ``presets`` 0 up
        /// to `veryfast` (CABAC, 8×8 transforms and weighted prediction pinned on), so that
        /// ``MediaWriter/switchPreset(_:)`` can change the preset mid-stream. Default: false.
        public var switchablePreset = false
        /// The preset name that lets a live run choose (``MediaWriter/switchPreset(_:)``); offline it
        /// means ``defaultPreset``.
        public static let autoPreset = "auto"
        /// The default x264-style preset.
        public static let defaultPreset = "veryfast"
        /// x264's speed presets, fastest first.
        public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
        /// What `audio` accepts.
        public static let audioModes = ["copy", "drop", "aac"]
        public init(codec: String = "auto", crf: Int? = nil, bitrate: Int? = nil, preset: String = Settings.defaultPreset,
                    pixelFormat: String? = nil, threads: Int = 0, audio: String = "copy") {
            self.codec = codec
            self.crf = crf
            self.bitrate = bitrate
            self.preset = preset
            self.pixelFormat = pixelFormat
            self.threads = threads
            self.audio = audio
        }
    }

    /// How timestamps are counted.
    public enum Timing: Sendable {
        /// Frame `n` at `n / fps` seconds (live runs, and sources that are not files).
        case constantRate(Double)
        /// The input's time base and average rate: timestamps are the input's.
        case source(timeBase: (numerator: Int32, denominator: Int32), frameRate: Double)
    }

    public let path: String
    public let width: Int
    public let height: Int
    /// Seconds per timestamp tick of ``write(_:pts:)``.
    public let timeBase: (numerator: Int32, denominator: Int32)
    /// The colour the output holds and is tagged with.
    public let color: ColorDescription
    /// The encoder used (`libx264` …) and the codec (`h264` …).
    public let encoderName: String
    /// Lines about streams dropped or re-encoded (one each).
    public var notes: [String] { (companions?.notes ?? []) + laterNotes }
    /// Lines about streams that stopped during the run (an error copying them; the video goes on).
    public private(set) var laterNotes: [String] = []
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var picture: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var companions: CompanionStreams?
    /// What the encoder was opened with, to open it again with another preset.
    private var opening: Opening?
    /// The preset the encoder runs at now (x264's names).
    public private(set) var preset: String
    private let scaler = Scaler(method: .bilinear)
    private let pictureFormat: AVPixelFormat
    private var finished = false
    /// The temporary file the container is written to until ``finish()``.
    private let output: OutputFile
    /// Frames handed to the encoder.
    public private(set) var framesWritten = 0
    /// Video packets written to the file (behind ``framesWritten`` by the frames the encoder holds).
    public private(set) var packetsWritten = 0
    private var lastPTS: Int64?
    private var lastDuration: Int64 = 1
    /// Durations of frames in the encoder, by timestamp (packets carry them into the container).
    private var durations: [Int64: Int64] = [:]

    /// Creates the file and opens the encoder for `width`×`height` frames (frames of another size
    /// are scaled). `origin`, when given, is the input whose other streams go along (``Settings/audio``).
    public init(path: String, width: Int, height: Int, timing: Timing, color: ColorDescription = .unspecified, rotation: Int = 0,
                settings: Settings = Settings(), origin: MediaOrigin? = nil) throws {
        _ = FFmpegLog.configured
        self.path = path
        self.width = width
        self.height = height
        self.color = color.resolved(height: min(width, height) >= 720 ? 720 : height)
        let rate: AVRational
        switch timing {
        case .constantRate(let fps):
            guard fps.isFinite, fps >= 0.1, fps <= 1000 else {
                throw FFmpegError(code: fg_averror(EINVAL), operation: "encode at \(fps) frames per second (0.1 … 1000)", path: path)
            }
            rate = av_d2q(fps, 100_000)
            timeBase = (rate.den, rate.num)
        case .source(let base, let fps):
            guard base.numerator > 0, base.denominator > 0 else {
                throw FFmpegError(code: fg_averror(EINVAL), operation: "encode with time base \(base.numerator)/\(base.denominator)", path: path)
            }
            timeBase = base
            rate = fps.isFinite && fps > 0 && fps <= 1000 ? av_d2q(fps, 100_000) : AVRational(num: 0, den: 1)
        }
        let plan: Plan
        do { plan = try MediaWriter.plan(settings, path: path) } catch {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "\(error.option): \(error.reason)", path: path)
        }
        let choice = (codec: plan.codec, encoder: plan.encoder), pixelName = plan.pixelName, avPixel = plan.pixelFormat
        encoderName = choice.encoder
        pictureFormat = avPixel
        let startPreset = settings.preset == Settings.autoPreset ? Settings.defaultPreset : settings.preset
        preset = startPreset
        if choice.encoder == "libsvtav1" { FFmpegLog.quietSVT() }
        output = try OutputFile(destination: path)
        let temporary = output.temporaryPath
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        // The container from the destination's extension (the temporary name hides it).
        let muxerName = plan.muxer
        try check(avformat_alloc_output_context2(&ctx, nil, muxerName, temporary), "set up the \(muxerName) container", path: path)
        format = ctx
        do {
            guard let encoder = avcodec_find_encoder_by_name(choice.encoder), let ctx else {
                throw FFmpegError(code: fg_averror(ENOSYS), operation: "find encoder '\(choice.encoder)'", path: path)
            }
            var tuning = choice.codec?.qualityOptions(crf: settings.crf, bitrate: settings.bitrate, encoder: choice.encoder) ?? []
            if choice.encoder == "libx265" { tuning.append(("x265-params", "log-level=none")) }
            let x26x = choice.encoder == "libx264" || choice.encoder == "libx265"
            if let tune = settings.tune, tune != "none", x26x {
                tuning.append(("tune", tune))
            } else if settings.lowLatency && x26x {
                tuning.append(("tune", "zerolatency"))
            }
            if settings.switchablePreset && choice.encoder == "libx264" { tuning.append(("x264-params", MediaWriter.pinnedHeaders)) }
            if choice.encoder == "prores_ks" { tuning.append(("profile", pixelName.hasPrefix("yuv444") ? "4" : "2")) }
            if choice.encoder == "ffv1" { tuning.append(("level", "3")) }
            let opening = Opening(encoder: encoder, encoderName: choice.encoder, width: width, height: height, pixelFormat: avPixel,
                                  pixelName: pixelName, timeBase: timeBase, rate: rate, threads: settings.threads, color: self.color,
                                  bitrate: settings.bitrate,
                                  globalHeader: ctx.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0, tuning: tuning,
                                  switchable: settings.switchablePreset && settings.lowLatency && settings.tune == nil && choice.encoder == "libx264")
            self.opening = opening
            codec = try opening.open(preset: startPreset, path: path)
            guard let codec else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate encoder", path: path) }
            stream = avformat_new_stream(ctx, nil)
            guard let stream else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "add stream", path: path) }
            try check(avcodec_parameters_from_context(stream.pointee.codecpar, codec), "configure stream", path: path)
            stream.pointee.time_base = codec.pointee.time_base
            if rate.num > 0 { stream.pointee.avg_frame_rate = rate }
            if rotation % 360 != 0 { try check(fg_stream_set_rotation(stream, Double(rotation)), "set the rotation", path: path) }
            if let origin, !origin.isImageSequence {
                let streams = try CompanionStreams(origin: origin, output: ctx, audio: CompanionStreams.AudioMode(rawValue: settings.audio) ?? .copy,
                                                   outputPath: path)
                companions = streams
            }
            if ctx.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
                // Local files only: `file:` keeps any name a file name, the whitelist refuses the rest.
                var ioOptions: OpaquePointer?
                av_dict_set(&ioOptions, "protocol_whitelist", "file", 0)
                defer { av_dict_free(&ioOptions) }
                try check(avio_open2(&ctx.pointee.pb, "file:" + temporary, AVIO_FLAG_WRITE, nil, &ioOptions), "create file", path: path)
            }
            var options: OpaquePointer?
            if muxerName == "mp4" || muxerName == "mov" {
                av_dict_set(&options, "movflags", "+faststart", 0)
            }
            defer { av_dict_free(&options) }
            try check(avformat_write_header(ctx, &options), "write header", path: path)
            picture = av_frame_alloc()
            packet = av_packet_alloc()
            guard let picture else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate frame", path: path) }
            picture.pointee.format = avPixel.rawValue
            picture.pointee.width = Int32(width)
            picture.pointee.height = Int32(height)
            picture.pointee.color_range = codec.pointee.color_range
            picture.pointee.colorspace = codec.pointee.colorspace
            picture.pointee.color_primaries = codec.pointee.color_primaries
            picture.pointee.color_trc = codec.pointee.color_trc
            try check(av_frame_get_buffer(picture, 0), "allocate frame", path: path)
        } catch {
            close()
            output.discard()
            throw error
        }
    }

    /// Opens a constant-rate writer (frame `n` at `n / fps`), as before source timing existed.
    public convenience init(path: String, width: Int, height: Int, fps: Double, settings: Settings = Settings()) throws {
        try self.init(path: path, width: width, height: height, timing: .constantRate(fps), settings: settings)
    }

    deinit {
        if !finished { try? finish() }
        close()
    }

    /// What a file at a path will be made with: worked out from the settings once, by
    /// ``plan(_:path:)``, for the check before the run and for the writer itself.
    struct Plan {
        var codec: VideoCodecChoice?
        var encoder: String
        var muxer: String
        var pixelName: String
        var pixelFormat: AVPixelFormat
    }

    /// A setting that cannot work for the file, as the option and why.
    struct SettingsProblem: Error {
        var option: String
        var reason: String
    }

    /// What is wrong with `settings` for a file at `path`, as (option, reason), or nil: checked before
    /// the first frame so that the pipeline's node and option can be named.
    public static func problem(with settings: Settings, path: String) -> (option: String, reason: String)? {
        do {
            _ = try plan(settings, path: path)
            return nil
        } catch {
            return (error.option, error.reason)
        }
    }

    /// The container, encoder and pixel format for `settings`, or the first setting that cannot work.
    static func plan(_ settings: Settings, path: String) throws(SettingsProblem) -> Plan {
        let container = CompanionStreams.containerName(path)
        guard let muxer = muxerName(forPath: path) else {
            throw SettingsProblem(option: "path", reason: "'.\(container)' is not a video container FFmpeg writes (use .mp4, .mov, .mkv or .webm, or a frames/%05d.png pattern)")
        }
        let choice: (codec: VideoCodecChoice?, encoder: String)
        do { choice = try codecChoice(settings.codec, path: path) } catch let error as FFmpegError {
            throw SettingsProblem(option: "codec", reason: error.operation)
        } catch { throw SettingsProblem(option: "codec", reason: "\(error)") }
        if let c = choice.codec {
            if settings.crf != nil && c.crfRange == nil {
                throw SettingsProblem(option: "crf", reason: "\(c.name) (\(c.summary)) has no quality scale; leave crf out")
            }
            if let crf = settings.crf, let range = c.crfRange, !range.contains(crf) {
                throw SettingsProblem(option: "crf", reason: "\(crf) is outside \(c.name)'s \(range.lowerBound)…\(range.upperBound)")
            }
        }
        let pixelName = settings.pixelFormat ?? choice.codec?.defaultPixelFormat ?? "yuv420p"
        guard let avPixel = VideoCodecChoice.avPixelFormat(pixelName) else {
            throw SettingsProblem(option: "pixel-format", reason: "'\(pixelName)' is not one of \(VideoCodecChoice.pixelFormats.joined(separator: ", "))")
        }
        if let oformat = av_guess_format(muxer, nil, nil), let encoder = avcodec_find_encoder_by_name(choice.encoder) {
            // 1: it holds it, 0: it does not, negative: the muxer does not say (then try).
            if avformat_query_codec(oformat, encoder.pointee.id, fg_compliance_normal()) == 0 {
                let fitting = VideoCodecChoice.available.filter {
                    avformat_query_codec(oformat, avcodec_find_encoder_by_name($0.encoder)?.pointee.id ?? AV_CODEC_ID_NONE, fg_compliance_normal()) == 1
                }
                throw SettingsProblem(option: "codec", reason: "\(choice.codec?.name ?? choice.encoder) cannot go in .\(container) (it holds: \(fitting.map(\.codec.name).joined(separator: ", ")); .mkv holds them all)")
            }
            if let formats = encoder.pointee.pix_fmts {
                var supported: [AVPixelFormat] = []
                var i = 0
                while formats[i] != AV_PIX_FMT_NONE && i < 256 { supported.append(formats[i]); i += 1 }
                if !supported.contains(avPixel) {
                    let names = VideoCodecChoice.pixelFormats.filter { VideoCodecChoice.avPixelFormat($0).map(supported.contains) ?? false }
                    throw SettingsProblem(option: "pixel-format", reason: "\(choice.encoder) cannot encode \(pixelName) (it takes: \(names.joined(separator: ", ")))")
                }
            }
        }
        if CompanionStreams.AudioMode(rawValue: settings.audio) == nil {
            throw SettingsProblem(option: "audio", reason: "'\(settings.audio)': choose copy, drop or aac")
        }
        return Plan(codec: choice.codec, encoder: choice.encoder, muxer: muxer, pixelName: pixelName, pixelFormat: avPixel)
    }

    /// FFmpeg's muxer for each container extension FrameGraph writes.
    static let muxerNames = ["mp4": "mp4", "m4v": "mp4", "mov": "mov", "mkv": "matroska", "webm": "webm"]

    /// The muxer for `path`: the four above, or whatever video container FFmpeg guesses from the
    /// extension (.ts, .avi, …); nil for none, or for a picture format (use a %d pattern).
    static func muxerName(forPath path: String) -> String? {
        let ext = CompanionStreams.containerName(path)
        if let known = muxerNames[ext] { return known }
        guard !ext.isEmpty, !ext.contains("/"), let guessed = av_guess_format(nil, "x." + ext, nil) else { return nil }
        let name = String(cString: guessed.pointee.name)
        return guessed.pointee.video_codec == AV_CODEC_ID_NONE || name.hasPrefix("image2") || name.hasSuffix("_pipe") ? nil : name
    }

    /// The first encoder of `codec` this FFmpeg has, or an error naming the codecs it does have.
    static func encoder(for codec: VideoCodecChoice, path: String) throws -> String {
        guard let encoder = codec.availableEncoder else {
            let list = VideoCodecChoice.available.map { "\($0.codec.name) (\($0.encoder))" }.joined(separator: ", ")
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "encode \(codec.name): this FFmpeg has none of \(codec.encoders.joined(separator: ", ")) (it has: \(list))", path: path)
        }
        return encoder
    }

    /// The encoder for a codec name, or an error naming what this machine has.
    static func codecChoice(_ name: String, path: String) throws -> (codec: VideoCodecChoice?, encoder: String) {
        let available = VideoCodecChoice.available
        let list = available.map { "\($0.codec.name) (\($0.encoder))" }.joined(separator: ", ")
        let codec = name == "auto" ? VideoCodecChoice.automatic(forPath: path) : VideoCodecChoice.named(name)
        if let codec { return (codec, try encoder(for: codec, path: path)) }
        guard let encoder = avcodec_find_encoder_by_name(name), encoder.pointee.type == AVMEDIA_TYPE_VIDEO else {
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "find video codec '\(name)' (choose: \(list))", path: path)
        }
        return (VideoCodecChoice.all.first { $0.encoders.contains(name) }, name)
    }

    private func close() {
        companions = nil
        av_frame_free(&picture)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
        if let format {
            if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&format.pointee.pb) }
            avformat_free_context(format)
        }
        format = nil
    }

    /// Encodes `frame` as output frame number `index` (constant-rate timing: time `index / fps`).
    public func write(_ frame: Frame, index: Int) throws {
        try write(frame, pts: Int64(index))
    }

    /// Encodes `frame` at timestamp `pts` (in ``timeBase``). Timestamps must increase; one that does
    /// not is moved one tick past the previous. Frames of another size or format are converted.
    public func write(_ frame: Frame, pts requested: Int64) throws {
        guard let picture, let codec, let format, !finished else { return }
        // A frame the encoder takes as it is goes in without a copy (the encoder holds a reference to
        // its pixels for as long as it needs them); others are converted into `picture`.
        var wrapped: UnsafeMutablePointer<AVFrame>?
        defer { av_frame_free(&wrapped) }
        if frame.format == .yuv420p && frame.width == width && frame.height == height && pictureFormat == AV_PIX_FMT_YUV420P
            && sameYCbCr(frame.color) {
            if frame.planesAligned64, let reference = frame.wrappedAVFrame(like: picture) {
                wrapped = reference
            } else {
                try check(av_frame_make_writable(picture), "prepare frame", path: path)
                frame.copyPixels(into: picture)
            }
        } else {
            try check(av_frame_make_writable(picture), "prepare frame", path: path)
            guard let inFormat = frame.format.avPixelFormat else {
                throw FFmpegError(code: fg_averror(EINVAL), operation: "encode a \(frame.format) frame (convert it to 8-bit first)", path: path)
            }
            try scaler.scale(from: (inFormat, frame.width, frame.height),
                             planes: { $0 < frame.format.planeCount ? frame.base(plane: $0) : nil },
                             strides: { $0 < frame.format.planeCount ? frame.planes[$0].stride : 0 },
                             to: (pictureFormat, width, height),
                             dst: { picture.plane($0).map(UnsafeMutableRawPointer.init) }, dstStrides: { picture.stride($0) },
                             color: (frame.color, color))
        }
        var pts = requested
        if let last = lastPTS {
            if pts <= last { pts = last + 1 }
            let delta = pts - last
            durations[last] = delta
            lastDuration = delta
        }
        lastPTS = pts
        let sent = wrapped ?? picture
        sent.pointee.pts = pts
        try check(avcodec_send_frame(codec, sent), "encode frame \(framesWritten)", path: path)
        framesWritten += 1
        try drain()
        if let companions {
            let seconds = Double(pts) * Double(timeBase.numerator) / Double(timeBase.denominator)
            do {
                try companions.write(until: seconds, videoShift: seconds - frame.mediaTime, output: format)
            } catch {
                stopCompanions(error, at: seconds)
            }
        }
    }

    /// The other streams failed (damaged audio, a codec error): they stop there, the video goes on.
    private func stopCompanions(_ error: any Error, at seconds: Double) {
        laterNotes.append(String(format: "the other streams stop at %.2f s: ", seconds) + "\(error)")
        companions = nil
    }

    /// Whether a yuv420p frame's values mean what the output's do (else it is converted).
    private func sameYCbCr(_ c: ColorDescription) -> Bool {
        let r = c.resolved(height: height)
        return r.matrix == color.matrix && r.range == color.range
    }

    /// x264 settings that every preset from `ultrafast` to `veryfast` shares once pinned, so their
    /// stream headers (SPS/PPS) are the same: CABAC, 8×8 transforms, simple weighted prediction
    /// (`ultrafast` alone turns them off).
    static let pinnedHeaders = "cabac=1:8x8dct=1:weightp=1"

    /// Changes the encoder's speed preset mid-stream (x264 made with ``Settings/switchablePreset`` and
    /// ``Settings/lowLatency``):
    /// an encoder with `preset` is opened beside the running one; when its stream headers are the
    /// running one's, the old one is flushed into the file and the new one takes over (its first
    /// frame a key frame); otherwise the running one stays. Returns whether the preset changed.
    @discardableResult
    public func switchPreset(_ newPreset: String) throws -> Bool {
        guard let opening, opening.switchable, let old = codec, !finished, newPreset != preset,
              MediaWriter.Settings.presets.contains(newPreset) else { return false }
        var fresh: UnsafeMutablePointer<AVCodecContext>? = try opening.open(preset: newPreset, path: path)
        guard let next = fresh else { return false }
        let same = old.pointee.extradata_size == next.pointee.extradata_size
            && (old.pointee.extradata_size == 0
                || memcmp(old.pointee.extradata, next.pointee.extradata, Int(old.pointee.extradata_size)) == 0)
        guard same else {
            avcodec_free_context(&fresh)
            return false
        }
        _ = avcodec_send_frame(old, nil)
        try drain()
        codec = next
        var retired: UnsafeMutablePointer<AVCodecContext>? = old
        avcodec_free_context(&retired)
        preset = newPreset
        return true
    }

    /// Everything needed to open the encoder (again, with another preset).
    private struct Opening {
        var encoder: UnsafePointer<AVCodec>
        var encoderName: String
        var width: Int
        var height: Int
        var pixelFormat: AVPixelFormat
        var pixelName: String
        var timeBase: (numerator: Int32, denominator: Int32)
        var rate: AVRational
        var threads: Int
        var color: ColorDescription
        var bitrate: Int?
        var globalHeader: Bool
        /// Encoder options other than the preset.
        var tuning: [(String, String)]
        /// x264 with pinned headers and no frames held inside (``Settings/lowLatency``): the preset may change.
        var switchable: Bool

        func open(preset: String, path: String) throws -> UnsafeMutablePointer<AVCodecContext> {
            guard let codec = avcodec_alloc_context3(encoder) else {
                throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate encoder", path: path)
            }
            codec.pointee.width = Int32(width)
            codec.pointee.height = Int32(height)
            codec.pointee.pix_fmt = pixelFormat
            codec.pointee.time_base = AVRational(num: timeBase.numerator, den: timeBase.denominator)
            codec.pointee.framerate = rate
            codec.pointee.thread_count = Int32(threads)
            codec.pointee.color_range = color.avRange
            codec.pointee.colorspace = color.avMatrix
            codec.pointee.color_primaries = color.avPrimaries
            codec.pointee.color_trc = color.avTransfer
            if let bitrate { codec.pointee.bit_rate = Int64(bitrate) }
            if globalHeader { codec.pointee.flags |= fg_codec_flag_global_header() }
            var options: OpaquePointer?
            defer { av_dict_free(&options) }
            for (key, value) in VideoCodecChoice.speedOptions(preset: preset, encoder: encoderName) + tuning {
                av_dict_set(&options, key, value, 0)
            }
            let status = avcodec_open2(codec, encoder, &options)
            if status < 0 {
                var failed: UnsafeMutablePointer<AVCodecContext>? = codec
                avcodec_free_context(&failed)
                try check(status, "open encoder '\(encoderName)' for \(width)x\(height) \(pixelName)", path: path)
            }
            return codec
        }
    }

    private func drain() throws {
        guard let codec, let packet, let stream else { return }
        while true {
            let status = avcodec_receive_packet(codec, packet)
            if status == fg_averror_eagain() || status == fg_averror_eof() { return }
            try check(status, "encode", path: path)
            if packet.pointee.duration <= 0 {
                packet.pointee.duration = durations.removeValue(forKey: packet.pointee.pts) ?? lastDuration
            } else {
                durations.removeValue(forKey: packet.pointee.pts)
            }
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            let written = av_interleaved_write_frame(format, packet)
            try check(written, "write packet", path: path)
            packetsWritten += 1
        }
    }

    /// Flushes the encoder, writes the other streams up to the end of the video, the container's
    /// index, and moves the file into place; with no frame written, removes it instead (the
    /// destination is left as it was). Safe to call more than once.
    public func finish() throws {
        guard !finished, let codec else { return }
        finished = true
        _ = avcodec_send_frame(codec, nil)
        do {
            try drain()
            if let companions, let format, let last = lastPTS {
                let end = Double(last + lastDuration) * Double(timeBase.numerator) / Double(timeBase.denominator)
                do { try companions.finish(until: end, output: format) } catch { stopCompanions(error, at: end) }
            }
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
