import FFmpegSupport
import Foundation
import FrameGraph

/// Encodes its input to a video file (H.264, H.265, VP9, AV1, FFV1, ProRes in MP4, MOV, MKV or WebM,
/// see ``VideoCodecChoice``), or to an image sequence when the path has a `%d` field
/// (`frames/%05d.png`, `.jpg`).
///
/// ```swift
/// resize --> FileSink(name: "out", path: "o.mp4", settings: .init(codec: "h265", crf: 24))
/// ```
/// **Timing.** Offline, the output keeps the source's timestamps, time base and frame rate (variable
/// frame rate included), so it plays exactly as long as the input; with ``RunOptions/outputRate``
/// (the CLI's `--fps`) it is converted to that constant rate, frames dropped or repeated and counted.
/// Live, one frame is written per output-clock tick. When several sources reach the sink,
/// ``timingSource`` names the one whose timing, sound and tags the output follows.
///
/// **The rest of the input** (from the timing source): audio copied unchanged by default (or
/// re-encoded, or dropped: ``MediaWriter/Settings/audio``), subtitles and data where the container
/// holds them, chapters and metadata; the colour tags; the rotation, when the source carries it.
///
/// The file is written under a temporary name beside `path` and finalized and renamed into place in
/// ``finish(context:)``, which the runner always calls, also after Ctrl-C or an error upstream: what
/// was written so far plays, and `path` never holds a half-written file.
///
/// **Continuous recording.** With ``segments`` (`segment=10m` or `segment-frames=N`) the output is a
/// series of complete files in `path`'s folder, each named by its start time
/// (`cam1/2026-12-03T10-00-00.mp4`), each renamed into place when it ends, listed in the folder's
/// `index.jsonl`, and deleted oldest first past `keep=24h` / `keep-bytes=` (see ``SegmentPlan``).
/// Segments carry the video only.
public final class FileSink: SinkNode, @unchecked Sendable {
    public var path: String
    public let settings: MediaWriter.Settings
    /// The source whose timing and streams the output follows (nil: the only one upstream).
    public let timingSource: String?
    /// JPEG quality of an image sequence, 2 (best) … 31.
    public let jpegQuality: Int
    private var writer: MediaWriter?
    private var images: ImageWriter?
    private var origin: MediaOrigin?
    private var rateConverter: RateConverter?
    /// Live with `preset=auto` (x264): steps the preset by the encoder's time per frame.
    private var speed: EncoderSpeedControl?
    /// The preset the encoder started at, and its time per frame (live).
    private var startPreset: String?
    private var encodeTimes = LatencyHistogram()
    /// How the output is cut into segments (not cut by default).
    public let segments: SegmentPlan.Options
    private var plan: SegmentPlan?
    /// The segment being written: its path, start, frames, where its timestamps start and its last frame's.
    private var segment: (path: String, start: Date, frames: Int, firstIndex: Int, firstMedia: Double, lastMedia: Double)?
    /// The segments this run finished and retention has not deleted, for readers on other threads.
    private let liveSegments = Protected<(list: [FinishedSegment], count: Int)>(([], 0))
    private var timing: MediaWriter.Timing = .constantRate(30)
    private var liveFPS: Double?

    public init(name: String = "output", path: String, settings: MediaWriter.Settings = .init(), timingSource: String? = nil,
                jpegQuality: Int = OptionSpecs.quality.defaultValue, segments: SegmentPlan.Options = .init()) {
        self.path = path
        self.settings = settings
        self.timingSource = timingSource
        self.jpegQuality = jpegQuality
        self.segments = segments
        super.init(name: name)
    }

    /// Segments finished so far, and deleted by retention (continuous recording).
    public var segmentsWritten: [SegmentPlan.Entry] { plan?.entries ?? [] }

    /// One segment this run has finished: its file in the segments' folder, its media length, and its
    /// place in the run's series (0, 1, 2 … — the HLS media sequence number).
    public struct FinishedSegment: Sendable, Equatable {
        public var file: String
        public var seconds: Double
        public var sequence: Int
    }

    /// The segments this run has finished and retention has not deleted, oldest first (continuous
    /// recording; safe from any thread while the run goes: what a live HLS playlist lists).
    public var finishedSegments: [FinishedSegment] { liveSegments.withLock { $0.list } }

    /// The folder the segments are written to (continuous recording).
    public var segmentFolder: String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    override public var kind: String { "encode" }

    /// Encoder threads of a live run whose `threads` is 0 (auto), for a picture of `pixels`: 1 up to
    /// `liveSingleThreadPixels`, 2 up to full HD, else the encoder's own choice (0). Steady threads
    /// rather than x264's automatic 3 + lookahead, which encode in bursts that starve the network's
    /// worker on a small machine (see ``FileSource/liveSingleThreadPixels``). One x264 `veryfast`
    /// thread took 25–31 ms a 1080p frame on the 2-vCPU VM, most of a 33 ms tick: frames queued
    /// before it (end-to-end p99 120–350 ms) and, on a slow hour, came late at the output clock. Two
    /// threads kept the p99 at 60–96 ms for about the same CPU (docs/BENCHMARKS.md, fifth session).
    public static func liveThreads(pixels: Int) -> Int {
        pixels <= liveSingleThreadPixels ? 1 : pixels <= FileSource.liveSingleThreadPixels ? 2 : 0
    }

    /// Largest picture a live run encodes on one thread (1280×800: x264 `veryfast` about 15 ms a
    /// frame there on the VM, under half a tick).
    public static let liveSingleThreadPixels = 1280 * 800

    private var isImageSequence: Bool { ImageSequence.isPattern(path) }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let input = inputs.first else { return nil }
        try requireEightBit(input, hint: "add a 'convert' node")
        if segments.isSegmented && isImageSequence {
            throw GraphError.invalidOption(node: name, option: "segment", reason: "an image sequence is not cut into segments; give a video file's name (cam1/rec.mp4)")
        }
        if isImageSequence {
            try ImageSequenceOutput.checkPattern(path, node: name)
            guard ImageWriter.Kind(path: path) != nil else {
                throw GraphError.invalidOption(node: name, option: "path", reason: "'\(path)': an image sequence ends in .png, .jpg or .jpeg")
            }
        } else {
            if let problem = MediaWriter.problem(with: settings, path: path) {
                throw GraphError.invalidOption(node: name, option: problem.option, reason: problem.reason)
            }
            let pixel = settings.pixelFormat ?? "yuv420p"
            let halfWidth = pixel.hasPrefix("yuv420") || pixel.hasPrefix("yuv422"), halfHeight = pixel.hasPrefix("yuv420")
            guard (!halfWidth || input.width % 2 == 0) && (!halfHeight || input.height % 2 == 0) else {
                throw GraphError.mismatch(node: name, port: "in", field: "size", expected: "even width\(halfHeight ? " and height" : "") for \(pixel)",
                                          got: "\(input.width)x\(input.height)")
            }
        }
        origin = try chooseOrigin()
        return nil
    }

    /// The file whose timing and streams the output follows.
    private func chooseOrigin() throws -> MediaOrigin? {
        let sources = upstreamSources
        if let wanted = timingSource {
            guard let source = sources.first(where: { $0.name == wanted }) else {
                throw GraphError.invalidOption(node: name, option: "timing", reason: "no source '\(wanted)' reaches this node (sources upstream: \(sources.map(\.name).joined(separator: ", ")))")
            }
            return source.mediaOrigin
        }
        guard sources.count > 1 else { return sources.first?.mediaOrigin }
        let files = sources.filter { $0.mediaOrigin != nil }
        if files.isEmpty { return nil }
        throw GraphError.invalidOption(node: name, option: "timing", reason: "\(sources.count) sources reach this node (\(sources.map(\.name).joined(separator: ", "))): say which one sets the output's timing and sound with timing=NAME")
    }

    override public var filesWritten: [String] {
        if segments.isSegmented { return [((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("index.jsonl")] }
        return isImageSequence ? ImageSequenceOutput.filesWritten(path) : [path]
    }

    override public func start(context: RunContext) throws {
        guard let input = inputs.first else { return }
        if isImageSequence {
            images = ImageWriter()
            return
        }
        let timing: MediaWriter.Timing
        if context.mode == .live {
            timing = .constantRate(context.fps)
        } else if let rate = context.options.outputRate {
            timing = .constantRate(rate)
            rateConverter = RateConverter(rate: rate, sourceRate: origin?.frameRate ?? 0)
        } else if let origin {
            timing = .source(timeBase: origin.timeBase, frameRate: origin.frameRate)
        } else {
            timing = .constantRate(context.fps)
        }
        self.timing = timing
        if segments.isSegmented {
            // Segments open at their first frame (named by its time); the video only.
            plan = try SegmentPlan(path: path, options: segments)
            liveFPS = context.mode == .live ? context.fps : (context.options.outputRate ?? nil)
            rateConverter = nil
            return
        }
        writer = try makeWriter(path: path, origin: origin, context: context)
    }

    private func makeWriter(path: String, origin: MediaOrigin?, context: RunContext) throws -> MediaWriter {
        guard let input = inputs.first else { throw GraphError.nodeFailed(node: name, reason: "no input") }
        var settings = settings
        speed = nil
        encodeTimes = LatencyHistogram()
        if context.mode == .live {
            if settings.threads == 0 { settings.threads = Self.liveThreads(pixels: input.width * input.height) }
            settings.lowLatency = true
            if settings.preset == MediaWriter.Settings.autoPreset && settings.tune == nil {
                settings.switchablePreset = true
                let ladder = Self.autoLadder(streams: context.streams, cores: ProcessInfo.processInfo.activeProcessorCount)
                settings.preset = ladder.last ?? MediaWriter.Settings.defaultPreset
                speed = EncoderSpeedControl(ladder: ladder, fps: context.fps)
            }
        }
        if origin == nil && segments.isSegmented { settings.audio = "drop" }
        let writer = try MediaWriter(path: path, width: input.width, height: input.height, timing: timing,
                                     color: self.origin?.color ?? .unspecified, rotation: self.origin?.rotation ?? 0, settings: settings, origin: origin)
        for note in writer.notes { context.warn("\(name): \(note)") }
        if writer.encoderName != "libx264" { speed = nil }
        startPreset = writer.preset
        return writer
    }

    /// Continuous recording: ends the segment when it is complete, opens the next at its first frame.
    private func consumeSegmented(_ frame: Frame, index: Int, context: RunContext) throws {
        guard var plan else { return }
        if let s = segment, plan.isComplete(frames: s.frames, seconds: frame.mediaTime - s.firstMedia, fps: liveFPS) {
            try closeSegment(context: context)
            plan = self.plan ?? plan
        }
        if segment == nil {
            let start = Date()
            let path = plan.nextPath(startingAt: start)
            writer = try makeWriter(path: path, origin: nil, context: context)
            segment = (path, start, 0, index, frame.mediaTime, frame.mediaTime)
        }
        guard let writer, var s = segment else { return }
        if liveFPS != nil || origin == nil {
            try writer.write(frame, pts: Int64(index - s.firstIndex))
        } else {
            let tb = Double(writer.timeBase.numerator) / Double(writer.timeBase.denominator)
            try writer.write(frame, pts: Int64(((frame.mediaTime - s.firstMedia) / tb).rounded()))
        }
        s.frames += 1
        s.lastMedia = frame.mediaTime
        segment = s
    }

    /// Finishes the segment being written (renamed into place), notes it in the index, applies retention.
    private func closeSegment(context: RunContext) throws {
        guard let s = segment, var plan else { return }
        segment = nil
        let writer = self.writer
        self.writer = nil
        try writer?.finish()
        let removed = try plan.finished(path: s.path, start: s.start, end: Date(), frames: s.frames)
        self.plan = plan
        // Its media length: a tick a frame live (or at --fps), else from its first frame to past its last.
        let frameSeconds = liveFPS.map { 1 / $0 } ?? origin.map { $0.frameRate > 0 ? 1 / $0.frameRate : 1 / 30 } ?? 1 / 30
        let seconds = liveFPS != nil ? Double(s.frames) * frameSeconds : max(0, s.lastMedia - s.firstMedia) + frameSeconds
        liveSegments.withLock {
            $0.list.append(FinishedSegment(file: (s.path as NSString).lastPathComponent, seconds: seconds, sequence: $0.count))
            $0.count += 1
            $0.list.removeAll { removed.contains($0.file) }
        }
        // Retention is routine (a week-long run deletes a segment a minute): marked in the trace, not warned.
        for file in removed { context.tracer?.instant("\(name): retention deleted \(file)", lane: Lane.current, at: context.clock.now(), sequence: -1) }
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        if plan != nil { return try consumeSegmented(frame, index: index, context: context) }
        if let images {
            _ = try ImageSequenceOutput.write(frame, index: index, pattern: path, node: name, writer: images, quality: jpegQuality,
                                              context: context)
            return
        }
        guard let writer else { return }
        if context.mode == .live {
            let start = context.clock.now()
            try writer.write(frame, pts: Int64(index))
            let end = context.clock.now()
            encodeTimes.record(end - start)
            if speed != nil { try adapt(cost: end - start, at: end, sequence: frame.sequence, writer: writer, context: context) }
        } else if var converter = rateConverter {
            let slots = converter.arrive(frame.mediaTime)
            rateConverter = converter
            if let held = pendingFrame { try write(held, into: slots) }
            pendingFrame = frame
        } else if origin != nil {
            let tb = Double(writer.timeBase.numerator) / Double(writer.timeBase.denominator)
            try writer.write(frame, pts: Int64((frame.mediaTime / tb).rounded()))
        } else {
            try writer.write(frame, pts: Int64(index))
        }
    }

    /// Writes a frame the rate converter held back into its slots; counts it dropped (no slot) or
    /// repeated (several).
    private func write(_ held: Frame, into slots: Range<Int>) throws {
        guard let writer else { return }
        for slot in slots { try writer.write(held, pts: Int64(slot)) }
        if slots.isEmpty { counters.update { $0.droppedRate += 1 } }
        if slots.count > 1 { counters.update { $0.duplicated += slots.count - 1 } }
    }

    /// Feeds the speed control one frame's encode time and takes the step it asks for: a new preset
    /// (marked in the trace), or an "encoder overloaded" warning.
    private func adapt(cost: Double, at time: Double, sequence: Int, writer: MediaWriter, context: RunContext) throws {
        guard var control = speed else { return }
        let previous = control.level
        let step = control.record(cost: cost, at: time - context.startTime)
        switch step {
        case .faster(let preset)?, .slower(let preset)?:
            if try writer.switchPreset(preset) {
                context.tracer?.instant("encoder preset \(preset)", lane: Lane.current, at: time, sequence: sequence)
            } else {
                control.pin(back: previous)
                context.warn("\(name): the encoder cannot change its preset mid-stream here; it stays at \(writer.preset)")
            }
        case .overloaded?:
            context.tracer?.instant("encoder overloaded", lane: Lane.current, at: time, sequence: sequence)
            context.warn(String(format: "%@: encoder overloaded: x264 %@ takes %.1f ms a frame, over the %.1f ms tick; frames will be late (lower the size or the frame rate, or free the CPU)",
                                name, writer.preset, cost * 1000, 1000 / context.fps))
        case nil:
            break
        }
        speed = control
    }

    /// The presets `preset=auto` steps through live, fastest first; it starts at the last.
    public static let autoLadder = ["ultrafast", "superfast", MediaWriter.Settings.defaultPreset]

    /// The ladder of a live run with `streams` streams on `cores` cores: ``autoLadder``, or without
    /// its last step (`superfast` at most) when there are more streams than cores. Each encoder then
    /// has less than a core's share, and x264 `superfast` at 640×480 took 30 % less CPU than
    /// `veryfast` for 24 % more bytes at the same PSNR (docs/BENCHMARKS.md, "Many streams").
    public static func autoLadder(streams: Int, cores: Int) -> [String] {
        streams > max(1, cores) ? Array(autoLadder.dropLast()) : autoLadder
    }

    override public var encoderSpeed: EncoderSpeedReport? {
        guard let startPreset else { return nil }
        let changes = speed?.changes.map { EncoderSpeedReport.Change(atSeconds: $0.time, preset: $0.preset) } ?? []
        return EncoderSpeedReport(startPreset: startPreset, preset: speed?.preset ?? startPreset, adaptive: speed != nil, changes: changes,
                                  overloaded: speed?.overloads ?? 0, encode: LatencySummary(encodeTimes))
    }

    /// Offline with a rate conversion: the frame waiting for its successor to decide its slots.
    private var pendingFrame: Frame?

    override public func finish(context: RunContext) throws {
        defer {
            writer = nil
            images = nil
            pendingFrame = nil
        }
        if plan != nil {
            if segment == nil && plan?.entries.isEmpty != false && !context.hasFailed {
                context.warn("\(name): no frame reached the output; no segment was written")
            }
            try closeSegment(context: context)
            return
        }
        if var converter = rateConverter, let held = pendingFrame {
            try write(held, into: converter.finish())
            rateConverter = converter
        }
        if writer == nil && images == nil && !context.hasFailed {
            // Stopped (or ended) before the first frame reached this sink: there is nothing to play,
            // so no file is made; the stats still say framesOut 0. (After an error, the error says why.)
            context.warn("\(name): no frame reached the output; '\(path)' was not written")
        }
        try writer?.finish()
        for note in writer?.laterNotes ?? [] { context.warn("\(name): \(note)") }
    }
}

extension FileSink {
    /// The options of the `encode` node type, each written once (``MediaWriter/Settings`` holds the
    /// same defaults for programs that use the writer directly).
    public enum OptionSpecs {
        public static let path = NodeOption<String?>.text("path", required: true,
                                                          "output file (.mp4 .mov .mkv .webm), or an image sequence frames/%05d.png|.jpg (the CLI's --output replaces it)")
        public static let codec = NodeOption.choice("codec", VideoCodecChoice.names, default: "auto",
                                                    "video codec (auto: vp9 for .webm, else h264); `framegraph nodes` lists this machine's")
        public static let crf = NodeOption<Int?>.int("crf", required: false, 0...63, "quality, lower is better (default: the codec's: h264 23, h265 28, vp9 31, av1 35)")
        public static let bitrate = NodeOption<Int?>.int("bitrate", required: false, 10_000...2_000_000_000, "target bits per second instead of a quality")
        public static let preset = NodeOption.choice("preset", [MediaWriter.Settings.autoPreset] + MediaWriter.Settings.presets,
                                                     default: MediaWriter.Settings.autoPreset,
                                                     "speed preset, x264's names, mapped onto each encoder's (auto: veryfast, live superfast with more streams than cores; live x264 steps to superfast or ultrafast when encoding nears half the tick, and back)")
        public static let pixelFormat = NodeOption<String?>.choice("pixel-format", [("auto", nil)] + VideoCodecChoice.pixelFormats.map { ($0, $0) }, default: "auto",
                                                          "output pixel format (auto: yuv420p; prores yuv422p10)")
        public static let threads = NodeOption.int("threads", default: 0, 0...64, "encoder threads (0: the encoder chooses offline; live 1 up to 1280x800, 2 up to full HD)")
        public static let audio = NodeOption.choice("audio", MediaWriter.Settings.audioModes, default: "copy",
                                                    "the source's audio: copy unchanged, drop, or re-encode to aac (the CLI's --audio)")
        public static let timing = NodeOption<String?>.text("timing", required: false,
                                                            "the source whose timing, sound and tags the output follows (needed when several reach it)")
        public static let quality = NodeOption.int("quality", default: 3, 2...31, "JPEG quality of an image sequence (2 best … 31)")
        public static let tune = NodeOption<String?>.choice("tune", [("none", nil)] + MediaWriter.Settings.tunes.map { ($0, $0) }, default: "none",
                                                   "x264/x265 tuning (zerolatency: no look-ahead or B-frames, steadier per-frame time, larger files)")
        public static let segment = NodeOption<String?>.text("segment", required: false,
                                                             "cut the recording into segments this long (90s, 10m, 1h), each a playable file named by its start time in path's folder")
        public static let segmentFrames = NodeOption<Int?>.int("segment-frames", required: false, 1...100_000_000, "cut the recording every N frames")
        public static let keep = NodeOption<String?>.text("keep", required: false, "with segments: delete those older than this (24h, 7d), oldest first")
        public static let keepBytes = NodeOption<String?>.text("keep-bytes", required: false, "with segments: delete the oldest while all are larger than this (500M, 20G)")
        public static let all = [path.spec, codec.spec, crf.spec, bitrate.spec, preset.spec, pixelFormat.spec, threads.spec, audio.spec,
                                 timing.spec, quality.spec, tune.spec, segment.spec, segmentFrames.spec, keep.spec, keepBytes.spec]
    }
}
