import FFmpegSupport
import FrameGraph
import Foundation

/// A live network stream as a graph source: RTSP (over TCP by default), HTTP(S) (MPEG-TS, MJPEG
/// multipart, HLS), SRT, RTP/UDP (with an SDP file) and RTMP, read through libavformat — only when
/// allowed explicitly (`network=allow`; the CLI's `--allow-network`).
///
/// ```swift
/// let cam = StreamSource(name: "cam", options: .init(url: "rtsp://127.0.0.1:8554/cam", allowNetwork: true))
/// cam --> FileSink(name: "out", path: "cam.mp4")
/// let report = try GraphRunner(sources: [cam], options: RunOptions(mode: .live)).run()
/// ```
/// - Live: frames are stamped with their arrival time on the run's clock (``Frame/captureTime``), which
///   feeds the presentation delay; the runner does not pace them. Every blocking call is bounded by
///   the interrupt callback (open, header, each read), so the source's thread never hangs and a stop
///   request ends a wait at once.
/// - Loss: no frame for ``Options/timeout`` seconds is a stall; a failed, ended or unusable connection
///   a drop. With ``Options/reconnect`` (default) the source connects again after a wait that doubles
///   from ``Options/backoff`` up to ``Options/backoffMax``; meanwhile the output keeps its clock
///   (``OnLoss``). Without it the loss ends the input with an error (outputs are finalized).
/// - Not there at start: with ``Options/reconnect`` a stream that cannot connect when the run starts
///   is tried again with the same backoff. With a declared size (``Options/width``×``Options/height``)
///   the run starts at once, the output showing no-signal frames until the first picture (with either
///   ``OnLoss``: there is nothing to repeat yet). Without one, in a run of several streams where the
///   nodes this one feeds are its own, the other streams start at once and this one's chain (its
///   sink too) starts at its first picture (``SourceNode/startsLate``); alone, the run waits for the
///   first connection (its size is the graph's), at most the run's duration.
/// - HLS comes in bursts (a segment at a time): its frames are paced by their own timestamps within
///   each connection, not stamped with their arrival.
/// - Counted: ``ConnectionCounters`` (reconnects, stalls, drops, seconds without signal) in the stats,
///   and the trace marks each loss and each gap.
/// - Credentials from the address or from ``Options/credentialsFile`` never appear in a message.
public final class StreamSource: SourceNode, @unchecked Sendable {
    /// What the output shows while the stream is lost.
    public enum OnLoss: String, Sendable, CaseIterable {
        /// The clocked outputs repeat the last frame (counted as duplicated); before the first
        /// picture, with a declared size, the no-signal frame (nothing to repeat yet).
        case `repeat`
        /// The source sends a dark "no signal" frame at the output rate (counted as `noSignalFrames`).
        case noSignal = "no-signal"
    }

    /// Options with their defaults (see ``StreamSource/OptionSpecs``).
    public struct Options: Sendable {
        /// The stream's address (`rtsp://…`); credentials in it are redacted in every message.
        public var url: String
        /// Must be true: network input is refused unless allowed explicitly.
        public var allowNetwork: Bool
        public var transport: NetworkInput.Transport = .tcp
        /// A file whose first line is `user:password`, put into an address that has none.
        public var credentialsFile: String?
        /// An SDP file for `rtp://`/`udp://` sessions.
        public var sdpFile: String?
        /// Seconds without a frame before the stream counts as stalled.
        public var timeout: Double = OptionSpecs.timeout.defaultValue
        /// Seconds allowed to connect and read the stream's header.
        public var openTimeout: Double = OptionSpecs.openTimeout.defaultValue
        public var reconnect: Bool = OptionSpecs.reconnect.defaultValue
        /// First wait before connecting again, in seconds; doubled after each failed attempt.
        public var backoff: Double = OptionSpecs.backoff.defaultValue
        /// Longest wait between attempts, in seconds.
        public var backoffMax: Double = OptionSpecs.backoffMax.defaultValue
        public var onLoss: OnLoss = .repeat
        /// Decoder threads; 0 lets FFmpeg choose (one up to full HD).
        public var threads: Int = 0
        /// Most MiB accepted between two packets; most MiB read to find the streams.
        public var maxPacketMiB: Int = OptionSpecs.maxPacketMiB.defaultValue
        public var probeMiB: Int = OptionSpecs.probeMiB.defaultValue
        /// Record the stream's own packets (no decode, no encode) to files named by start time in this
        /// path's folder, with its extension (.mkv, .mp4, .mov, .ts); nil: no recording.
        public var recordPath: String?
        /// How the recording is cut and kept (a new file after each reconnect in any case).
        public var recordSegments = SegmentPlan.Options()
        /// The declared picture size (both or neither; even): frames are scaled to it, and the run can
        /// start before the stream connects. Nil: the first connection's size.
        public var width: Int?
        public var height: Int?

        public init(url: String, allowNetwork: Bool) {
            self.url = url
            self.allowNetwork = allowNetwork
        }
    }

    public let options: Options
    private let counters_ = ConnectionCounters()
    private var url: StreamURL?
    private var reader: MediaReader?
    private var output: FrameDescription?
    private var color = ColorDescription.unspecified
    private var firstCaptureTime: Double?
    private var lastMediaTime = -Double.infinity
    /// Run-clock time of the last frame from the stream, and when the signal was lost (nil while connected).
    private var lastFrameAt = 0.0
    private var lostAt: Double?
    private var nextAttempt = 0.0
    private var wait = 0.0
    private var nextNoSignal = 0.0
    private var codecSummary = ""
    private var recorder: PacketRecorder?
    private var recording: Protected<SegmentPlan>?
    /// Frames come in bursts (HLS): paced by their timestamps (``pacedByMediaTime``).
    private var bursty = false
    /// This connection's first frame: its media time on the source's clock and its own timestamp.
    private var connectionOrigin: (media: Double, pts: Double)?
    /// Connected once at least (the first connection after a failed start is not a "re"connect).
    private var everConnected = false
    /// A picture from the stream was sent on (before it, `repeat` has nothing to repeat).
    private var sentPicture = false
    /// Started without a connection and without a declared size (``SourceNode/startsLate``).
    private var startedLate = false

    public init(name: String = "stream", options: Options) {
        self.options = options
        super.init(name: name)
    }

    override public var kind: String { "stream" }
    /// Frames arrive in real time: the runner does not pace them — except HLS, whose segments come
    /// whole: its frames are paced by their timestamps (set at start).
    override public var pacedByMediaTime: Bool { bursty }
    override public var connection: ConnectionCounters? { counters_ }
    override public var filesRead: [String] { [options.credentialsFile, options.sdpFile].compactMap { $0 } }
    /// The address with credentials redacted (valid after start; the option as given, redacted, before).
    public var redactedURL: String { url?.redacted ?? StreamURL.redact(options.url) }

    /// The error for a network address given without the opt-in: one line, naming how to allow it.
    public static func refusal(node: String, url: String) -> GraphError {
        .invalidOption(node: node, option: "url", reason: "\(StreamURL.redact(url)) is a network stream; FrameGraph reads local files only "
                       + "unless allowed: add --allow-network (or network=allow to the node in the pipeline file)")
    }

    override public func start(context: RunContext) throws {
        guard options.allowNetwork else { throw Self.refusal(node: name, url: options.url) }
        var credentials: String?
        if let file = options.credentialsFile {
            let data = try FileCheck.read(file, what: "credentials file", maxBytes: 4096)
            credentials = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        }
        let url: StreamURL
        do {
            url = try StreamURL(options.url, credentials: credentials)
        } catch let invalid as StreamURL.Invalid {
            throw GraphError.invalidOption(node: name, option: "url", reason: invalid.description)
        }
        self.url = url
        if let path = options.recordPath {
            let plan = Protected(try SegmentPlan(path: path, options: options.recordSegments))
            let segments = options.recordSegments
            let node = name
            recording = plan
            recorder = PacketRecorder(plan: .init(
                nextPath: { date in plan.withLock { $0.nextPath(startingAt: date) } },
                isDue: { packets, seconds in segments.isSegmented && plan.withLock { $0.isComplete(frames: packets, seconds: seconds, fps: nil) } },
                finished: { path, start, end, packets in
                    do {
                        let removed = try plan.withLock { try $0.finished(path: path, start: start, end: end, frames: packets) }
                        for file in removed {  // routine: marked in the trace, not warned
                            context.tracer?.instant("\(node): retention deleted \(file)", lane: Lane.current, at: context.clock.now(), sequence: -1)
                        }
                    } catch {
                        context.warn("\(node): the recording's index could not be written: \(describe(error))")
                    }
                }))
        }
        counters_.update { $0 = ConnectionCounters.Snapshot() }
        lastFrameAt = context.clock.now()
        lostAt = nil
        firstCaptureTime = nil
        connectionOrigin = nil
        everConnected = false
        sentPicture = false
        startedLate = false
        bursty = url.redacted.lowercased().split(separator: "?").first?.hasSuffix(".m3u8") ?? false
        let declared = declaredOutput
        output = declared
        let reader: MediaReader
        do {
            reader = try connect(url: url, context: context, size: declared.map { ($0.width, $0.height) }, format: declared?.format)
        } catch let error where options.reconnect && Self.isConnectionFailure(error) {
            if declared != nil {
                // The declared size lets the run start without the stream: lost from the first tick.
                startLost(error, context: context)
                return
            }
            if mayStartLate {
                // One camera of several: the others start now, this one's chain at its first picture.
                startedLate = true
                startLost(error, context: context)
                return
            }
            reader = try connectBeforeTheRun(url: url, context: context, first: error)
        }
        connected(reader, context: context)
    }

    /// The output a declared size gives (yuv420p), or nil.
    private var declaredOutput: FrameDescription? {
        guard let width = options.width, let height = options.height else { return nil }
        return FrameDescription(format: .yuv420p, width: width, height: height)
    }

    /// Failures of the network or of the data (tried again); anything else (a missing SDP file) is not.
    static func isConnectionFailure(_ error: any Error) -> Bool { error is StreamLost || error is FFmpegError }

    /// The first connection made: the output's description and colour, the summary line.
    private func connected(_ reader: MediaReader, context: RunContext) {
        self.reader = reader
        if output == nil { output = FrameDescription(format: reader.outputFormat, width: reader.width, height: reader.height) }
        color = reader.color
        bursty = bursty || reader.formatName == "hls"
        codecSummary = "\(reader.formatName)/\(reader.codecName) \(reader.width)×\(reader.height)" + (reader.frameRate > 0 ? String(format: " %.3g fps", reader.frameRate) : "")
        everConnected = true
    }

    /// Not connected at start, with a declared size: the run starts lost (the first connection is
    /// tried at once, then with the backoff).
    private func startLost(_ error: any Error, context: RunContext) {
        let line = StreamURL.redact((error as? StreamLost)?.description ?? "\(redactedURL): \(describe(error))")
        counters_.update { $0.failedAttempts += 1; $0.lastLoss = line }
        reader = nil
        lostAt = nil  // the gap starts with the run (``whileLost`` notes it)
        wait = options.backoff
        nextAttempt = StreamInterruptClock.now() + wait
        nextNoSignal = 0
        let starts = startedLate ? "; its chain starts at its first picture" : ""
        context.status(of: self, "stream '\(name)' cannot connect yet: \(line); trying again with backoff up to \(String(format: "%g", options.backoffMax)) s\(starts) "
                     + "(--reconnect=false ends the run instead)")
    }

    /// Started without a connection and without a declared size, in a run of several streams: the
    /// runner starts the nodes this stream feeds at its first picture.
    override public var startsLate: Bool { startedLate }

    /// Not connected at start and no declared size: the graph needs the stream's size, so the run
    /// waits for the first connection, trying again with the backoff — until it connects, the run is
    /// stopped (Ctrl-C), or the run's duration has passed (then the last failure, one line).
    private func connectBeforeTheRun(url: StreamURL, context: RunContext, first: any Error) throws -> MediaReader {
        let began = StreamInterruptClock.now()
        var wait = options.backoff
        var last = first
        let line = StreamURL.redact((first as? StreamLost)?.description ?? "\(redactedURL): \(describe(first))")
        context.status(of: self, "stream '\(name)' cannot connect yet: \(line); the run starts at its first connection (give width= and height= to start without it; --reconnect=false ends the run instead)")
        while true {
            counters_.update { $0.failedAttempts += 1 }
            let until = StreamInterruptClock.now() + wait
            while StreamInterruptClock.now() < until && !context.isStopRequested { usleep(20_000) }
            if context.isStopRequested { throw StreamLost(url: redactedURL, kind: .drop, reason: "stopped before the stream connected") }
            if let limit = context.options.duration, StreamInterruptClock.now() - began >= limit {
                let reason = StreamURL.redact((last as? StreamLost)?.reason ?? describe(last))
                throw StreamLost(url: redactedURL, kind: .drop, reason: "no connection within the run's duration (\(String(format: "%g", limit)) s); last: \(reason)")
            }
            do {
                return try connect(url: url, context: context, size: nil, format: nil)
            } catch let error where Self.isConnectionFailure(error) {
                last = error
                wait = min(options.backoffMax, max(options.backoff, wait * 2))
            }
        }
    }

    /// The recording's finished files (stream copy), oldest first.
    public var recordedSegments: [SegmentPlan.Entry] { recording?.withLock { $0.entries } ?? [] }

    override public var filesWritten: [String] {
        guard let path = options.recordPath else { return [] }
        return [((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("index.jsonl")]
    }

    /// What the stream is (container/codec size rate), after start.
    public var summary: String { codecSummary }

    override public func finish(context: RunContext) throws {
        if let lostAt {
            let gap = max(0, context.clock.now() - lostAt)
            counters_.update { $0.secondsWithoutSignal += gap }
            self.lostAt = nil
        }
        reader = nil
        try closeRecording(context: context)
        if let failure = recorder?.failure { context.warn("\(name): the recording stopped: \(failure)") }
    }

    private func closeRecording(context: RunContext) throws {
        do {
            try recorder?.close()
        } catch {
            context.warn("\(name): the recording's last file could not be finished: \(describe(error))")
        }
    }

    override public func outputDescription() throws -> FrameDescription {
        guard let output else { throw GraphError.nodeFailed(node: name, reason: "stream not started") }
        return output
    }

    override public func nextFrame(context: RunContext) throws -> Frame? {
        while !context.isStopRequested {
            guard let reader else {
                if let frame = try whileLost(context: context) { return frame }
                continue
            }
            let decoded: Frame?
            do {
                decoded = try reader.nextFrame()
            } catch {
                try lose(error, context: context)
                continue
            }
            guard var frame = decoded else {
                if context.isStopRequested { return nil }
                try lose(StreamLost(url: redactedURL, kind: .drop, reason: "the server ended the stream"), context: context)
                continue
            }
            let now = context.clock.now()
            if let lostAt {
                // The first picture after a loss: the gap is over.
                counters_.update { $0.secondsWithoutSignal += max(0, now - lostAt) }
                context.tracer?.span("no signal", category: kind, lane: .current, start: lostAt, end: now, sequence: reader.framesDecoded)
                self.lostAt = nil
            }
            lastFrameAt = now
            sentPicture = true
            let resized = reader.resizedFrames
            counters_.update { $0.resizedFrames = max($0.resizedFrames, resized) }
            return stamp(&frame, at: now, pts: bursty ? frame.mediaTime : nil)
        }
        return nil
    }

    /// Most seconds a bursty stream's timestamps may run ahead of (or behind) their arrival before
    /// its pacing starts again from the arrival (HLS players buffer about three segments).
    static let burstLead = 30.0

    /// Arrival time as capture time; media time from the first frame, always increasing. With `pts`
    /// (a bursty stream's own timestamp): media time from this connection's first frame by timestamp.
    private func stamp(_ frame: inout Frame, at now: Double, pts: Double? = nil) -> Frame {
        let first = firstCaptureTime ?? now
        firstCaptureTime = first
        frame.captureTime = now
        var media = now - first
        if let pts {
            var origin = connectionOrigin ?? (media: media, pts: pts)
            // A timestamp jump (a discontinuity, a wrap, a hostile playlist) starts the pacing again
            // from this frame's arrival: the runner sleeps until a frame is due, never for long.
            if abs(origin.media + (pts - origin.pts) - media) > Self.burstLead { origin = (media: media, pts: pts) }
            connectionOrigin = origin
            media = origin.media + (pts - origin.pts)
        }
        frame.mediaTime = max(media, lastMediaTime + 1e-6)
        lastMediaTime = frame.mediaTime
        return frame
    }

    /// Notes a loss (counters, trace, one line) and closes the connection; without reconnect, throws.
    private func lose(_ error: any Error, context: RunContext) throws {
        let lost = error as? StreamLost
        let line = StreamURL.redact(lost?.description ?? "\(redactedURL): \(describe(error))")
        reader = nil
        connectionOrigin = nil
        try closeRecording(context: context)  // the next connection starts a new file
        let now = context.clock.now()
        counters_.update {
            if lost?.kind == .stall { $0.stalls += 1 } else { $0.drops += 1 }
            $0.lastLoss = line
        }
        context.tracer?.instant("stream lost (\(lost?.kind.rawValue ?? "drop"))", lane: .current, at: now, sequence: counters_.snapshot.stalls + counters_.snapshot.drops)
        guard options.reconnect else {
            throw GraphError.nodeFailed(node: name, reason: "lost the stream (\(line)); --reconnect=false ends the run")
        }
        lostAt = lastFrameAt
        wait = options.backoff
        nextAttempt = StreamInterruptClock.now() + wait
        nextNoSignal = now
        context.status(of: self, "stream '\(name)' lost: \(line); connecting again in \(String(format: "%g", wait)) s")
    }

    /// While lost: a "no signal" frame when one is due, or an attempt to connect when it is time;
    /// otherwise a short sleep. Returns a frame to send, or nil to look again.
    private func whileLost(context: RunContext) throws -> Frame? {
        context.stopIfPastDuration()  // a live duration ends the run while the stream is away too
        if context.isStopRequested { return nil }
        let now = context.clock.now()
        if !everConnected && lostAt == nil {
            lostAt = now  // lost since the run began (a declared size, no connection yet)
            nextNoSignal = now
        }
        // Before the first picture `repeat` has nothing to repeat: no-signal frames keep the clock.
        if options.onLoss == .noSignal || !sentPicture, let output, now >= nextNoSignal {
            nextNoSignal = max(nextNoSignal + 1 / context.fps, now)
            var frame = Self.noSignalFrame(output)
            frame.color = color
            counters_.update { $0.noSignalFrames += 1 }
            return stamp(&frame, at: now)
        }
        let real = StreamInterruptClock.now()
        guard real >= nextAttempt, let url else {
            let until = min(nextAttempt - real, (options.onLoss == .noSignal || !sentPicture) && output != nil ? max(0, nextNoSignal - now) : 0.05)
            usleep(UInt32(max(0.001, min(0.05, until)) * 1_000_000))
            return nil
        }
        do {
            let reader = try connect(url: url, context: context, size: output.map { ($0.width, $0.height) }, format: output?.format)
            let again = everConnected
            connected(reader, context: context)
            if again { counters_.update { $0.reconnects += 1 } }
            wait = options.backoff
            context.status(of: self, again ? "stream '\(name)' is back (\(url.redacted))" : "stream '\(name)' connected (\(url.redacted))")
        } catch {
            if context.isStopRequested { return nil }
            wait = min(options.backoffMax, max(options.backoff, wait * 2))
            nextAttempt = StreamInterruptClock.now() + wait
            counters_.update { $0.failedAttempts += 1 }
        }
        return nil
    }

    private func connect(url: StreamURL, context: RunContext, size: (Int, Int)?, format: PixelFormat?) throws -> MediaReader {
        var input = NetworkInput(url: url, transport: options.transport, sdpFile: options.sdpFile, openTimeout: options.openTimeout,
                                 readTimeout: options.timeout, probeBytes: options.probeMiB << 20,
                                 maxPacketBytes: Int64(options.maxPacketMiB) << 20, shouldStop: { [weak context] in context?.isStopRequested ?? true })
        input.outputSize = size.map { (width: $0.0, height: $0.1) }
        input.outputFormat = format
        var readerOptions = MediaReader.Options(threads: options.threads, orientation: .upright, network: input)
        readerOptions.recorder = recorder
        if options.threads == 0 { readerOptions.singleThreadUpToPixels = FileSource.liveSingleThreadPixels }
        return try MediaReader(path: url.redacted, options: readerOptions)
    }

    /// A dark frame with a lighter band across its middle: plainly not a picture from the stream.
    static func noSignalFrame(_ d: FrameDescription) -> Frame {
        let frame = Frame.make(d)
        frame.fillBlack()
        if d.format == .yuv420p || d.format == .nv12 {
            for y in (d.height * 2 / 5)..<(d.height * 3 / 5) { frame.row(y, plane: 0).update(repeating: 80) }
        }
        return frame
    }
}

/// The monotonic clock the reconnect waits use (real time, whatever clock the run has).
enum StreamInterruptClock {
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

extension StreamSource {
    /// The options of the `stream` node type, each written once.
    public enum OptionSpecs {
        public static let url = NodeOption<String?>.text("url", required: true,
                                                          "rtsp://, rtsps://, http(s):// (MPEG-TS, MJPEG, HLS), srt://, udp://, rtp:// (with sdp=), rtmp://")
        public static let network = NodeOption<String>.choice("network", ["deny", "allow"], default: "deny",
                                                              "allow: read the network stream (the CLI's --allow-network); deny refuses it")
        public static let transport = NodeOption<NetworkInput.Transport>.choice("transport", default: .tcp, "RTSP media over tcp (interleaved) or udp")
        public static let credentials = NodeOption<String?>.text("credentials", required: false, "a file whose first line is user:password (never printed)")
        public static let sdp = NodeOption<String?>.text("sdp", required: false, "an SDP file describing an rtp:// or udp:// session")
        public static let timeout = NodeOption.number("timeout", default: 5, 0.1...600, "seconds without a frame before the stream counts as stalled")
        public static let openTimeout = NodeOption.number("open-timeout", default: 10, 0.1...600, "seconds allowed to connect and read the header")
        public static let reconnect = NodeOption.flag("reconnect", default: true, "connect again after a stall or drop (false: the loss ends the run)")
        public static let backoff = NodeOption.number("backoff", default: 0.5, 0.01...600, "first wait before connecting again, seconds (doubles per failed attempt)")
        public static let backoffMax = NodeOption.number("backoff-max", default: 10, 0.01...3600, "longest wait between attempts, seconds")
        public static let onLoss = NodeOption<OnLoss>.choice("on-loss", default: .repeat, "while lost: repeat the last frame (no-signal before the first picture), or send a dark no-signal frame")
        public static let threads = NodeOption.int("threads", default: 0, 0...64, "decoder threads (0: one up to full HD)")
        public static let maxPacketMiB = NodeOption.int("max-packet-mib", default: 64, 1...4096, "most MiB between two packets (larger claimed frames end the connection)")
        public static let probeMiB = NodeOption.int("probe-mib", default: 5, 1...256, "most MiB read to find the streams")
        public static let record = NodeOption<String?>.text("record", required: false,
                                                            "record the stream's own packets, no re-encoding, to files named by start time in this path's folder (cam1/rec.mkv)")
        public static let recordSegment = NodeOption<String?>.text("record-segment", required: false, "cut the recording this often (90s, 10m, 1h), at a keyframe")
        public static let recordSegmentFrames = NodeOption<Int?>.int("record-segment-frames", required: false, 1...100_000_000,
                                                                     "cut the recording after N packets, at the next keyframe")
        public static let keep = NodeOption<String?>.text("keep", required: false, "delete recorded files older than this (24h, 7d), oldest first")
        public static let keepBytes = NodeOption<String?>.text("keep-bytes", required: false, "delete the oldest recorded files while all are larger than this (500M, 20G)")
        public static let width = NodeOption<Int?>.int("width", required: false, 16...8192,
                                                       "declared picture width (even; with height): frames scaled to it, and the run starts before the stream connects")
        public static let height = NodeOption<Int?>.int("height", required: false, 16...8192, "declared picture height (even; with width)")
        public static let all = [url.spec, network.spec, transport.spec, credentials.spec, sdp.spec, timeout.spec, openTimeout.spec, reconnect.spec,
                                 backoff.spec, backoffMax.spec, onLoss.spec, width.spec, height.spec, threads.spec, maxPacketMiB.spec, probeMiB.spec,
                                 record.spec, recordSegment.spec, recordSegmentFrames.spec, keep.spec, keepBytes.spec]
    }
}
