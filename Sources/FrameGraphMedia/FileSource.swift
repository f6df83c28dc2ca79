import FFmpegSupport
import FrameGraph

/// Decodes a video file (anything FFmpeg reads) into frames.
///
/// ```swift
/// let source = FileSource(name: "in", path: "clip.mkv", options: .init(start: 2, duration: 5))
/// ```
/// In live mode the runner paces its frames by their timestamps, as if a camera delivered them.
/// Damaged stretches inside a file are skipped and counted (``SourceNode/framesLostToDamage``); a file
/// cut short, or one whose reading stops after damage, ends the input with an error after the last
/// good frame, and everything before still reaches the sinks.
public final class FileSource: SourceNode, @unchecked Sendable {
    /// Options with their defaults.
    public struct Options: Sendable {
        /// Skip to this time in seconds (see ``FileSource/OptionSpecs`` for defaults and ranges).
        public var start: Double
        /// Stop after this many seconds of media (nil: to the end).
        public var duration: Double?
        /// Start again at the end, forever (stop with Ctrl-C or a duration).
        public var loop: Bool
        /// Decoder threads; 0 lets FFmpeg choose.
        public var threads: Int
        /// Turn phone videos upright (default) or carry their rotation to the output.
        public var orientation: MediaReader.Orientation
        /// Frames per second of an image sequence (`frames/%05d.png`).
        public var rate: Double
        public init(start: Double = OptionSpecs.start.defaultValue, duration: Double? = OptionSpecs.duration.defaultValue,
                    loop: Bool = OptionSpecs.loop.defaultValue, threads: Int = OptionSpecs.threads.defaultValue,
                    orientation: MediaReader.Orientation = .upright, rate: Double = OptionSpecs.rate.defaultValue) {
            self.start = start
            self.duration = duration
            self.loop = loop
            self.threads = threads
            self.orientation = orientation
            self.rate = rate
        }
    }

    public var path: String
    public let options: Options
    private var reader: MediaReader?
    /// Media time added to frames after each loop, so timestamps keep increasing.
    private var loopOffset = 0.0
    private var lastMediaTime = 0.0
    private var framesThisPass = 0
    /// Where each pass starts (for the sound of a looping file).
    private let passes = LoopPasses()
    /// Looping: the last frames of a pass, taken out of the decoder at its end so that the next pass
    /// could start at once; returned one a call, each call decoding one packet of the next pass.
    private var passEnd: [Frame] = []
    /// Packets of the next pass still to decode ahead (one a call while ``passEnd`` lasts).
    private var primes = 0
    /// An error met while taking the end of a pass out early, thrown once its frames are returned.
    private var deferredError: (any Error)?

    public init(name: String = "source", path: String, options: Options = Options()) {
        self.path = path
        self.options = options
        super.init(name: name)
    }

    override public var kind: String { "file" }

    override public var expectedSeconds: Double? {
        guard let reader, !options.loop else { return nil }
        let rest = max(0, reader.duration - options.start)
        guard rest > 0 else { return options.duration }
        return options.duration.map { min($0, rest) } ?? rest
    }

    /// Frame rate the file announces (valid after start).
    public var frameRate: Double { reader?.frameRate ?? 0 }

    override public var filesRead: [String] {
        ImageSequence.isPattern(path) ? [ImageSequence.path(path, index: 0), ImageSequence.path(path, index: 1)] : [path]
    }

    override public var mediaOrigin: MediaOrigin? {
        guard let reader else { return nil }
        return MediaOrigin(path: path, timeBase: reader.timeBase, frameRate: reader.frameRate, constantRate: reader.constantRate,
                           videoStart: reader.videoStart, windowStart: options.start, windowDuration: options.duration, loops: options.loop,
                           color: reader.color, rotation: reader.storedRotation - reader.appliedRotation, isImageSequence: reader.isImageSequence,
                           passes: options.loop ? passes : nil)
    }

    /// Largest picture a live run decodes on one thread when `threads` is 0 (auto): full HD. FFmpeg's
    /// frame threads decode in bursts that starve the network's worker on a small machine and add a
    /// frame of latency each (measured: 74 of 901 frames dropped busy at 1080p live with auto
    /// threads, none with one); offline, auto keeps FFmpeg's choice above ``offlineSingleThreadPixels``.
    public static let liveSingleThreadPixels = 1920 * 1088
    /// Largest picture an offline run decodes on one thread when `threads` is 0 (auto): 640×480.
    /// One thread decodes such pictures far faster than a model reads them, and FFmpeg's frame
    /// threads cost CPU to hand frames round (hands.fg offline on a 640×480 clip: 0.9 ms of CPU
    /// per frame less with one, and a higher frame rate; docs/BENCHMARKS.md).
    public static let offlineSingleThreadPixels = 640 * 480

    override public func start(context: RunContext) throws {
        var readerOptions = MediaReader.Options(threads: options.threads, orientation: options.orientation, imageRate: options.rate)
        readerOptions.singleThreadUpToPixels = context.mode == .live ? FileSource.liveSingleThreadPixels : FileSource.offlineSingleThreadPixels
        let reader = try MediaReader(path: path, options: readerOptions)
        if reader.duration > 0 && options.start >= reader.duration {
            throw GraphError.invalidOption(node: name, option: "start",
                                           reason: "\(options.start) s is at or past the end of \(path), which is \(String(format: "%.3f", reader.duration)) s long")
        }
        if options.start > 0 { try reader.seek(to: options.start) }
        self.reader = reader
    }

    override public var framesLostToDamage: Int { reader.map { $0.corruptFrames + $0.missingPictures.count } ?? lostBeforeClose }

    override public var damageNote: String? {
        var notes: [String] = []
        if let missing = reader?.missingPictures ?? missingBeforeClose, !missing.isEmpty {
            notes.append("\(path): \(missing.count) picture\(missing.count == 1 ? "" : "s") missing from the sequence (\(missing.prefix(5).joined(separator: ", "))"
                         + (missing.count > 5 ? ", …" : "") + "); their time is left empty")
        }
        let damaged = framesLostToDamage - (reader?.missingPictures.count ?? missingBeforeClose?.count ?? 0)
        if damaged > 0 {
            notes.append("\(path): \(damaged) damaged frame\(damaged == 1 ? "" : "s") skipped"
                         + ((reader?.firstCorruptOffset ?? firstDamageOffset).map { ", the first near byte \($0)" } ?? "") + "; the rest of the file was read")
        }
        let repairs = reader?.timestampRepairs ?? repairsBeforeClose
        if repairs > 0 {
            notes.append("\(path): \(repairs) frame\(repairs == 1 ? "" : "s") whose time went backwards or stood still were given the time after the frame before")
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    private var missingBeforeClose: [String]?
    private var repairsBeforeClose = 0

    private var lostBeforeClose = 0
    private var firstDamageOffset: Int64?

    override public func finish(context: RunContext) throws {
        lostBeforeClose = reader.map { $0.corruptFrames + $0.missingPictures.count } ?? lostBeforeClose
        firstDamageOffset = reader?.firstCorruptOffset ?? firstDamageOffset
        missingBeforeClose = reader?.missingPictures ?? missingBeforeClose
        repairsBeforeClose = reader?.timestampRepairs ?? repairsBeforeClose
        reader = nil
    }

    override public func outputDescription() throws -> FrameDescription {
        guard let reader else { throw GraphError.nodeFailed(node: name, reason: "not started") }
        return FrameDescription(format: reader.outputFormat, width: reader.width, height: reader.height)
    }

    override public func nextFrame(context: RunContext) throws -> Frame? {
        guard let reader else { return nil }
        if !passEnd.isEmpty {
            try primeNextPass(reader)
            return passEnd.removeFirst()
        }
        if let error = deferredError {
            deferredError = nil
            throw error
        }
        while true {
            if let frame = try reader.nextFrame() {
                if frame.mediaTime < options.start - 1e-6 { continue }  // decoded on the way to the start point
                if let stamped = stamp(frame) {
                    if options.loop && reader.isDraining { takePassEnd(reader) }
                    return stamped
                }
            }
            // End of the file or of the duration window: stop, or start the next pass.
            guard options.loop, framesThisPass > 0 else { return nil }
            try startNextPass(reader)
        }
    }

    /// `frame` with its time in the run (passes one after the other), counted in this pass; nil when
    /// it is past the duration window.
    private func stamp(_ frame: Frame) -> Frame? {
        let t = frame.mediaTime
        if let duration = options.duration, t - options.start >= duration - 1e-6 { return nil }
        var frame = frame
        frame.mediaTime = loopOffset + (t - options.start)
        lastMediaTime = frame.mediaTime
        framesThisPass += 1
        return frame
    }

    /// The next pass starts one pass later: at a constant rate exactly frames / rate (timestamps
    /// rounded to milliseconds would otherwise drift against the output clock, pass by pass).
    private func startNextPass(_ reader: MediaReader) throws {
        if reader.constantRate && reader.frameRate > 0 {
            loopOffset += Double(framesThisPass) / reader.frameRate
        } else {
            loopOffset = lastMediaTime + (reader.frameRate > 0 ? 1 / reader.frameRate : 1.0 / 30)
        }
        framesThisPass = 0
        passes.begin(at: loopOffset)
        try reader.seek(to: options.start)
    }

    /// At the end of a looping file (the decoder draining): the frames it still holds come out now,
    /// the next pass starts, and its first packets are decoded one a call while those frames are
    /// returned — instead of all at the call after the last frame (with B-frames the first picture
    /// of a pass needs three packets: a burst that, with many looping streams at once, made the
    /// last frame of the pass miss its tick).
    private func takePassEnd(_ reader: MediaReader) {
        do {
            while let frame = try reader.nextFrame() {
                if let stamped = stamp(frame) { passEnd.append(stamped) }
            }
            try startNextPass(reader)
            primes = passEnd.count + 1
            try primeNextPass(reader)
        } catch {
            primes = 0
            deferredError = error
        }
    }

    private func primeNextPass(_ reader: MediaReader) throws {
        guard primes > 0 else { return }
        primes -= 1
        try reader.prime()
    }
}

extension FileSource {
    /// The options of the `file` node type, each written once.
    public enum OptionSpecs {
        public static let path = NodeOption<String?>.text("path", required: true, "input file (the CLI's --input replaces it)")
        public static let start = NodeOption.number("start", default: 0, 0...10_000_000, "skip to this time, seconds")
        public static let duration = NodeOption<Double?>.number("duration", optional: 0.001...10_000_000, "stop after this many seconds")
        public static let loop = NodeOption.flag("loop", default: false, "start again at the end")
        public static let threads = NodeOption.int("threads", default: 0, 0...64, "decoder threads (0: 1 up to full HD live, up to 640x480 offline; above, FFmpeg chooses)")
        public static let orientation = NodeOption<MediaReader.Orientation>.choice("orientation", default: .upright,
                                                          "upright: turn phone videos as their rotation says; carry: keep frames as stored, the output carries the rotation")
        public static let rate = NodeOption.number("rate", default: 25, 0.01...1000, "frames per second of an image sequence (frames/%05d.png)")
        public static let all = [path.spec, start.spec, duration.spec, loop.spec, threads.spec, orientation.spec, rate.spec]
    }
}
