import Foundation

/// How a graph runs.
public enum RunMode: String, Sendable, CaseIterable {
    /// Sources are paced in real time (a file behaves like a camera); slow nodes drop frames that arrive
    /// while they are busy; a fixed-rate clock emits one output frame per tick.
    case live
    /// Every frame is processed, nothing is dropped, as fast as the machine allows.
    case offline
}

/// What an output tick does when no new frame has arrived since the previous tick (live mode).
public enum TickPolicy: String, Sendable, CaseIterable {
    /// Write the previous frame again (counted as duplicated): the output keeps its frame rate.
    case reuse
    /// Write nothing for this tick (counted as a skipped tick).
    case skip
}

/// Settings of one run, with documented defaults.
public struct RunOptions: Sendable {
    /// Live or offline. Default: offline.
    public var mode: RunMode = .offline
    /// Output clock rate in frames per second. Default: 30.
    public var fps: Double = 30
    /// Offline: convert the output to this constant frame rate, dropping or repeating frames (counted);
    /// nil keeps the source's own timing, variable frame rate included. The CLI's `--fps` sets it
    /// offline. Default: nil.
    public var outputRate: Double?
    /// Where warnings go (one line each: a stream dropped, a codec re-encoded). Default: standard
    /// error, as "framegraph: warning: …".
    public var warn: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data("framegraph: warning: \(StreamURL.redact(line))\n".utf8))
    }
    /// Where sources' status lines go — a camera or network stream lost, waiting for it, back —
    /// with the source's name and kind (`camera`, `stream`). Default nil: they are warnings
    /// (``warn``). The CLI prints them and publishes them as `--serve` events.
    public var sourceStatus: (@Sendable (_ source: String, _ kind: String, _ line: String) -> Void)?
    /// What an empty tick does. Default: reuse the last frame.
    public var tickPolicy: TickPolicy = .reuse
    /// Where in each frame period the ticker fires, as a fraction of the period (0 ≤ phase < 1).
    /// Default 0.5: half a period of slack for inline work between capture and output.
    public var tickPhase: Double = 0.5
    /// Live: once the presentation delay D is first known, the ticks move to fall D after each slot
    /// of the frame grid (phase = D / period, modulo 1), so that a frame is written the moment it is
    /// due instead of at the next half-period tick (a D just past half a period otherwise costs a
    /// whole tick of latency); when D changes later (auto raising it, or settling lower), the ticks move
    /// with it, so no frame is shown twice or skipped for it. The CLI sets it.
    /// Default: false (the fixed `tickPhase`).
    public var tickPhaseFollowsDelay = false
    /// The time base. Default: the real monotonic clock; tests pass a ``ManualClock``.
    public var clock: any RunClock = MonotonicClock()
    /// Live mode: when a frame is shown (capture time + D, at the next tick). Default: `.fixed(0)`,
    /// as soon as it arrives; the CLI's default is ``PresentationDelay/standardAuto``.
    public var latency: PresentationDelay = .fixed(0)
    /// How much to run (nil: to the end of the input). Live: seconds of clock time after frames start
    /// to flow. Offline: seconds of media time from each source's first frame (a fast machine
    /// processes many seconds of video in one second of clock time). Default: nil.
    public var duration: Double?
    /// After a stop (Ctrl-C, `duration`, an error), the most seconds of clock time to wait for work
    /// in flight (a slow network's frame) before the outputs are finalized without it. Default 5.
    public var stopGrace: Double = 5
    /// Live mode: the nice value (0 … 19) of the threads that run worker filters (networks), above the
    /// output path's 0, so that an overloaded machine takes its time from the network first (admitted
    /// less often, its last result reused) rather than from source → composite → encoder; nil leaves
    /// them at the process's. Default: 5 (about a quarter of a core's share against a busy thread at 0).
    public var networkNice: Int32? = 5
    /// Write a Chrome trace-event file here. Default: none.
    public var traceURL: URL?
    /// Files written by the caller beside the graph's own outputs (the CLI's `--stats`), checked with
    /// them before anything is opened: path → who writes it. Default: none.
    public var otherOutputs: [String: String] = [:]
    /// Files the caller reads beside the graph's own inputs (the pipeline file, the machine config):
    /// path → who reads it; no output may name one. Default: none.
    public var otherInputs: [String: String] = [:]
    /// Most nodes a graph may have (checked by validation; frames pass inline nodes by nested calls,
    /// so a bound keeps the stack bounded). Default: ``RunOptions/maxNodesDefault``.
    public var maxNodes: Int = RunOptions.maxNodesDefault
    /// Live, several streams: the most frames that may wait for or run on shared network workers
    /// (``WorkerGroup``) at once, all streams and groups of the process together; a frame beyond it
    /// is dropped-busy at admission, before any work is done for it. Each stream holds at most one
    /// such frame anyway, so the budget matters when many streams share few cores. Offline ignores it
    /// (a sender waits for its own stream's frame). Default: nil, no cap beyond one per stream.
    public var frameBudget: Int?
    /// The default node limit: far above any real pipeline.
    public static let maxNodesDefault = 1000

    public init(mode: RunMode = .offline, fps: Double = 30, tickPolicy: TickPolicy = .reuse,
                clock: any RunClock = MonotonicClock(), traceURL: URL? = nil) {
        self.mode = mode
        self.fps = fps
        self.tickPolicy = tickPolicy
        self.clock = clock
        self.traceURL = traceURL
    }
}
