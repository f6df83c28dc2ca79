import Foundation
import FrameGraph

/// A V4L2 camera as a graph source (through libv4l2; YUYV, MJPEG and more converted by
/// libv4lconvert), emitting `yuv420p` (default) or `rgb24` frames.
///
/// ```swift
/// let camera = CameraSource(name: "camera", settings: .init(path: "/dev/video0", width: 640, height: 480, fps: 30))
/// camera --> Resize(name: "small", width: 256, height: 256) --> FileSink(name: "out", path: "live.mp4")
/// let report = try GraphRunner(sources: [camera], options: RunOptions(mode: .live)).run()
/// ```
///
/// - Latest frame: every call dequeues all the buffers the driver has filled and keeps only the
///   newest; the older ones go straight back to the driver. Nothing queues up behind a busy graph.
/// - Counting: frames skipped for a newer one, frames lost at the driver (gaps in
///   `v4l2_buffer.sequence`: no buffer was free) and damaged frames all go to the node's
///   `droppedAtSource` counter, so frames in + droppedAtSource = frames the camera produced.
/// - Time: `captureTime` is the driver's timestamp on CLOCK_MONOTONIC (see ``DriverTimestamp``), so
///   end-to-end latency runs from the moment the frame was captured; `mediaTime` counts from the
///   first frame.
/// - Stopping: waits in slices of 200 ms and returns nil once the run is asked to stop.
/// - Faults: a missing or busy device fails at start with a message naming the path; an unplug
///   while running ends the input with ``CameraError/disconnected(path:call:errno:frames:)`` (the run
///   stops, outputs are finalized), or with ``CameraSettings/reconnect`` waits for the device to come
///   back, looking every ``CameraSettings/reconnectInterval`` seconds.
/// - Streaming starts at the first frame request, not at ``start(context:)``, so frames are not lost
///   while other nodes start (loading a model, say).
public final class CameraSource: SourceNode, @unchecked Sendable {
    /// Counts since the run started.
    public struct Statistics: Sendable, Equatable {
        /// Frames emitted.
        public var frames = 0
        /// Frames the driver produced but had no free buffer for (sequence gaps).
        public var lostAtDriver = 0
        /// Ready frames given back unused because a newer one was ready too.
        public var skippedForNewer = 0
        /// Frames the driver flagged as damaged or that could not be converted.
        public var damaged = 0
        /// All frames dropped before leaving the source (the node's `droppedAtSource`).
        public var droppedAtSource: Int { lostAtDriver + skippedForNewer + damaged }
    }

    public let settings: CameraSettings

    /// What the driver granted (valid after ``start(context:)``).
    public private(set) var configuration: CameraConfiguration?
    /// Counts so far (safe to read from any thread); losses and reconnects are in ``connection``.
    public var statistics: Statistics { stats.withLock { $0 } }

    /// How long one wait for a frame lasts before the stop flag is checked again, in seconds.
    static let waitSlice = 0.2
    /// Damaged frames in a row that end the run.
    static let maxDamagedInARow = 30

    private let stats = Protected(Statistics())
    /// Losses and reconnects, as a network stream's (the stats' `connection`, `/metrics`).
    private let counters_ = ConnectionCounters()
    /// Run-clock time of the last frame before a loss (nil while the camera delivers).
    private var lostAt: Double?
    private var capture: CameraCapture?
    private var output: FrameDescription?
    private var tracker = SequenceTracker()
    private var firstCaptureTime: Double?
    private var lastFrameAt = 0.0
    private var nextReconnectAttempt = 0.0
    private var damagedInARow = 0
    private let realClock = MonotonicClock()

    public init(name: String = "camera", settings: CameraSettings) {
        self.settings = settings
        super.init(name: name)
    }

    override public var kind: String { "camera" }

    /// A camera delivers in real time already: the runner does not pace it.
    override public var pacedByMediaTime: Bool { false }

    override public func start(context: RunContext) throws {
        let capture = try CameraCapture(settings: settings)
        self.capture = capture
        configuration = capture.configuration
        output = capture.converter.description
        tracker = SequenceTracker()
        firstCaptureTime = nil
        damagedInARow = 0
        lostAt = nil
        stats.withLock { $0 = Statistics() }
    }

    override public func finish(context: RunContext) throws {
        capture?.stopStreaming()
        capture = nil
        if let lostAt {
            // Still without the camera at the end: the gap runs to the end.
            counters_.update { $0.secondsWithoutSignal += max(0, realClock.now() - lostAt) }
            self.lostAt = nil
        }
    }

    override public var connection: ConnectionCounters? { counters_ }

    override public var deviceSummary: String? {
        let s = statistics, reconnects = counters_.snapshot.reconnects
        return "camera \(settings.path): \(s.frames) frames, dropped at source \(s.droppedAtSource) (lost at the driver \(s.lostAtDriver), "
            + "skipped for a newer one \(s.skippedForNewer), damaged \(s.damaged))\(reconnects > 0 ? ", reconnected \(reconnects)x" : "")"
    }

    override public var deviceNote: String? {
        guard let configuration else { return nil }
        let differences = configuration.differences(from: settings)
        return "camera \(settings.path): \(configuration.summary)\(differences.isEmpty ? "" : " (granted \(differences.joined(separator: ", ")))")"
    }

    override public func outputDescription() throws -> FrameDescription {
        guard let output else { throw GraphError.nodeFailed(node: name, reason: "camera not started") }
        return output
    }

    override public func nextFrame(context: RunContext) throws -> Frame? {
        while !context.isStopRequested {
            guard let capture else {
                guard try reconnect(context: context) else { return nil }
                continue
            }
            do {
                if let frame = try nextFrame(from: capture, context: context) { return frame }
            } catch let error as CameraError where settings.reconnect && (error.isDisconnect || error.isStall) {
                self.capture = nil  // closes the device, so it can come back
                nextReconnectAttempt = realClock.now() + settings.reconnectInterval
                lostAt = lastFrameAt
                let what = error.isStall ? "camera \(settings.path) stalled" : "camera \(settings.path) was disconnected"
                counters_.update {
                    if error.isStall { $0.stalls += 1 } else { $0.drops += 1 }
                    $0.lastLoss = what
                }
                context.status(of: self, "\(what); waiting for it to come back (looking every \(settings.reconnectInterval) s; Ctrl-C to stop)")
            }
        }
        return nil
    }

    /// One wait slice on an open camera: a frame, or nil (nothing yet, or a damaged frame).
    private func nextFrame(from capture: CameraCapture, context: RunContext) throws -> Frame? {
        let frames = stats.withLock { $0.frames }
        if !capture.isStreaming {
            try capture.startStreaming()
            tracker.restart()
            lastFrameAt = realClock.now()
        }
        guard let grab = try capture.grabNewest(timeout: Self.waitSlice, frames: frames) else {
            let idle = realClock.now() - lastFrameAt
            if idle > settings.stallTimeout { throw CameraError.stalled(path: settings.path, seconds: idle) }
            return nil
        }
        let now = realClock.now()
        lastFrameAt = now
        let lost = grab.sequences.reduce(0) { $0 + tracker.record($1) }
        let buffer = grab.newest
        var frame: Frame?
        var failure: String?
        if buffer.flags & DriverTimestamp.errorFlag != 0 || buffer.bytesused == 0 {
            failure = "the driver flagged the frame as damaged"
        } else if let bytes = capture.bytes(of: buffer) {
            do {
                frame = try capture.converter.convert(bytes)
            } catch {
                failure = error.message
            }
        } else {
            failure = "the driver returned buffer \(buffer.index), which does not exist"
        }
        try capture.requeue(buffer.index, frames: frames)

        let damaged = frame == nil ? 1 : 0
        stats.withLock {
            $0.lostAtDriver += lost
            $0.skippedForNewer += grab.skipped
            $0.damaged += damaged
            if damaged == 0 { $0.frames += 1 }
        }
        let dropped = lost + grab.skipped + damaged
        if dropped > 0 { counters.update { $0.droppedAtSource += dropped } }

        guard var frame else {
            damagedInARow += 1
            if damagedInARow >= Self.maxDamagedInARow {
                throw CameraError.conversionFailed(path: settings.path, format: capture.configuration.fourcc,
                                                   reason: "\(damagedInARow) frames in a row: \(failure ?? "unknown")")
            }
            return nil
        }
        damagedInARow = 0
        // Driver timestamps are on CLOCK_MONOTONIC; a run on another clock (a test's manual clock)
        // gets that clock's time instead.
        let captureTime = context.clock is MonotonicClock
            ? DriverTimestamp.captureTime(flags: buffer.flags, seconds: buffer.timestamp_sec,
                                          microseconds: buffer.timestamp_usec, dequeuedAt: now)
            : context.clock.now()
        let first = firstCaptureTime ?? captureTime
        firstCaptureTime = first
        frame.captureTime = captureTime
        frame.mediaTime = max(0, captureTime - first)
        // libv4lconvert's YUYV/MJPEG conversions use BT.601, limited range, at every size (UVC's
        // default); said explicitly so an HD camera is not taken for BT.709.
        frame.color = .bt601
        return frame
    }

    /// Waits (in short slices, watching the stop flag) until it is time to look for the device,
    /// then tries to open it. True once it is back; false when the run is stopping.
    private func reconnect(context: RunContext) throws -> Bool {
        while !context.isStopRequested {
            let now = realClock.now()
            if now < nextReconnectAttempt {
                usleep(UInt32(min(0.05, nextReconnectAttempt - now) * 1_000_000))
                continue
            }
            nextReconnectAttempt = now + settings.reconnectInterval
            let capture: CameraCapture
            do {
                capture = try CameraCapture(settings: settings)
            } catch let error as CameraError where error.isDisconnect || error.isBusy {
                counters_.update { $0.failedAttempts += 1 }
                continue
            }
            if let output, capture.converter.description != output {
                throw CameraError.formatChanged(path: settings.path, before: output.description,
                                                after: capture.converter.description.description)
            }
            self.capture = capture
            counters_.update {
                $0.reconnects += 1
                if let lostAt { $0.secondsWithoutSignal += max(0, now - lostAt) }
            }
            lostAt = nil
            context.status(of: self, "camera \(settings.path) is back: \(capture.configuration.summary)")
            return true
        }
        return false
    }
}

extension CameraError {
    /// Whether this is a stall (streaming, but no frames).
    var isStall: Bool {
        if case .stalled = self { return true }
        return false
    }

    /// Whether another program holds the device.
    var isBusy: Bool {
        if case .busy = self { return true }
        return false
    }
}
