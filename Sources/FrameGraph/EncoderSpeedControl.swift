/// Steps a live encoder's speed preset by the time it takes per frame: faster when its time
/// approaches its share of the output tick, back when there is room again, with hysteresis in
/// both value and time so that it does not flap; and says when even the fastest preset cannot
/// keep up (OBS's "encoder overloaded").
///
/// The encoder runs on the output clock's thread, so its time per frame is part of every frame's
/// latency and, beyond a tick, makes the output miss ticks. Its share is half the period (16.7 ms
/// at 30 fps). Rules, over the encoder's recent times per frame (wall time: time taken from it by
/// other work on a busy machine counts), after the first ``warmup`` frames:
/// - one step faster when the mean of the last ``fastWindow`` frames is over ``fasterAbove`` of the
///   share (as soon as that many frames were encoded at the current preset);
/// - one step slower (never slower than the ladder's last, where it starts) when the mean of the
///   last ``calmWindow`` frames at the current preset is under ``slowerBelow`` of the share, and at
///   least the calm hold's frames were encoded at it: ``calmWindow`` at first, doubled (up to
///   ``maxCalmHold``) each time a step slower had to be taken back by a step faster — a machine whose
///   load comes and goes does not make the preset flap every few seconds;
/// - overloaded, once per episode, when the fastest preset's recent mean is over ``overloadAbove`` of
///   the whole period; the episode ends when it falls under ``recoveredBelow`` of it.
///
/// ```swift
/// var speed = EncoderSpeedControl(ladder: ["ultrafast", "superfast", "veryfast"], fps: 30)
/// if case .faster(let preset)? = speed.record(cost: 0.019, at: now) { try writer.switchPreset(preset) }
/// ```
public struct EncoderSpeedControl: Sendable {
    /// What a recorded frame made the control decide.
    public enum Step: Sendable, Equatable {
        /// Use this faster preset from now on.
        case faster(String)
        /// Use this slower preset from now on.
        case slower(String)
        /// The fastest preset takes more than the tick allows: frames will be late.
        case overloaded
    }

    /// Presets the control may use, fastest first; it starts at the last.
    public let ladder: [String]
    /// Index in ``ladder`` of the preset in use.
    public private(set) var level: Int
    /// Seconds per frame the encoder may take: ``share`` of the period.
    public let budget: Double
    /// The output period in seconds.
    public let period: Double
    /// Every change: seconds into the run and the preset from then on.
    public private(set) var changes: [(time: Double, preset: String)] = []
    /// Overload episodes (each warned once).
    public private(set) var overloads = 0
    /// Set when the encoder could not change its preset: the control stops stepping.
    public private(set) var pinned = false
    /// Times per frame at the current preset, newest last (at most ``calmWindow``).
    private var recent: [Double] = []
    private var overloaded = false
    /// Frames recorded so far (the first ``warmup`` are not judged).
    private var seen = 0
    /// Frames encoded at the current preset (judged ones).
    private var atLevel = 0
    /// Frames at the current preset needed before a step slower.
    private var calmHold = EncoderSpeedControl.calmWindow
    /// Whether the last change was a step slower (a step faster now takes it back).
    private var lastWasSlower = false

    /// Frames at the start not judged: an encoder's first frames are slow (memory faulted in, caches
    /// cold), not a sign of the machine's load.
    public static let warmup = 30

    /// The encoder's share of the output period.
    public static let share = 0.5
    /// Frames whose mean decides a step faster (half a second at 30 fps).
    public static let fastWindow = 15
    /// Frames whose mean decides a step slower (three seconds at 30 fps).
    public static let calmWindow = 90
    /// Step faster above this fraction of the budget.
    public static let fasterAbove = 0.9
    /// Step slower below this fraction of the budget (a preset one step slower costs 1.3–1.6× as
    /// much, so the step back lands under ``fasterAbove``).
    public static let slowerBelow = 0.45
    /// Overloaded above this fraction of the period at the fastest preset.
    public static let overloadAbove = 0.9
    /// An overload episode ends below this fraction of the period.
    public static let recoveredBelow = 0.6
    /// The longest calm hold, in frames (48 s at 30 fps).
    public static let maxCalmHold = 16 * calmWindow

    /// A control over `ladder` (fastest first, at least one preset), starting at its last, for an
    /// output clock of `fps`.
    public init(ladder: [String], fps: Double) {
        precondition(!ladder.isEmpty, "an empty preset ladder")
        self.ladder = ladder
        level = ladder.count - 1
        period = fps > 0 ? 1 / fps : 1.0 / 30
        budget = Self.share * period
    }

    /// The preset in use.
    public var preset: String { ladder[level] }

    /// Records that a frame took `cost` seconds to encode at run time `time` (seconds into the run);
    /// returns a step when one is due (the control already counts it as taken).
    public mutating func record(cost: Double, at time: Double) -> Step? {
        guard !pinned else { return nil }
        seen += 1
        guard seen > Self.warmup else { return nil }
        recent.append(max(0, cost))
        atLevel += 1
        if recent.count > Self.calmWindow { recent.removeFirst(recent.count - Self.calmWindow) }
        guard recent.count >= Self.fastWindow else { return nil }
        let fast = recent.suffix(Self.fastWindow).reduce(0, +) / Double(Self.fastWindow)
        if level == 0 {
            if overloaded && fast < Self.recoveredBelow * period { overloaded = false }
            if !overloaded && fast > Self.overloadAbove * period {
                overloaded = true
                overloads += 1
                return .overloaded
            }
        }
        if level > 0 && fast > Self.fasterAbove * budget {
            // Taking back a step slower: the next one waits twice as long.
            if lastWasSlower { calmHold = min(Self.maxCalmHold, 2 * calmHold) }
            lastWasSlower = false
            return change(to: level - 1, at: time, step: Step.faster)
        }
        if level < ladder.count - 1 && recent.count >= Self.calmWindow && atLevel >= calmHold
            && recent.reduce(0, +) / Double(recent.count) < Self.slowerBelow * budget {
            lastWasSlower = true
            return change(to: level + 1, at: time, step: Step.slower)
        }
        return nil
    }

    /// Stops stepping (the encoder could not take the last step); the preset stays as it was.
    public mutating func pin(back previous: Int) {
        pinned = true
        level = previous
        if !changes.isEmpty { changes.removeLast() }
    }

    private mutating func change(to newLevel: Int, at time: Double, step: (String) -> Step) -> Step {
        level = newLevel
        recent.removeAll()
        atLevel = 0
        changes.append((time, ladder[newLevel]))
        return step(ladder[newLevel])
    }
}

/// What a live encoder's speed control did during a run (the stats' `encoder`).
public struct EncoderSpeedReport: Codable, Sendable, Equatable {
    /// A change of preset.
    public struct Change: Codable, Sendable, Equatable {
        /// Seconds into the run.
        public var atSeconds: Double
        /// The preset from then on.
        public var preset: String

        public init(atSeconds: Double, preset: String) {
            self.atSeconds = atSeconds
            self.preset = preset
        }
    }
    /// The preset at the start.
    public var startPreset: String
    /// The preset at the end.
    public var preset: String
    /// Whether the preset adapted (`preset=auto` live); false: it was fixed.
    public var adaptive: Bool
    /// Every change of preset.
    public var changes: [Change]
    /// Times even the fastest preset could not keep up (each warned once).
    public var overloaded: Int
    /// Encode time per frame, milliseconds.
    public var encode: LatencySummary

    public init(startPreset: String, preset: String, adaptive: Bool, changes: [Change], overloaded: Int, encode: LatencySummary) {
        self.startPreset = startPreset
        self.preset = preset
        self.adaptive = adaptive
        self.changes = changes
        self.overloaded = overloaded
        self.encode = encode
    }
}
