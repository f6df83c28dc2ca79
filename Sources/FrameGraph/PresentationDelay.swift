import Foundation

/// When a live frame is shown: at the first output tick at or after its capture time plus a delay D.
/// A small D shows frames sooner; a D a little above the graph's latency lets every frame make its
/// tick although the work per frame jitters (no repeated tick, no frame replaced before it was shown):
/// latency for smoothness, the trade a video player's jitter buffer makes.
public enum PresentationDelay: Sendable, Equatable, CustomStringConvertible {
    /// A fixed delay in seconds (0: as soon as a frame arrives, at the next tick).
    case fixed(Double)
    /// Starts from the latency the first frame shows; after the first second of frames it settles
    /// once on what those frames showed (lower, when the first frame was slowed by the start-up and
    /// the output clock follows D, by less than a period so no frame is skipped); from then on it
    /// grows (never shrinks) when frames keep missing their tick (two within 300 frames), up to
    /// `maximum` seconds; beyond it frames are dropped late.
    case auto(maximum: Double)

    /// The CLI's default: `auto` up to 250 ms.
    public static let standardAuto = PresentationDelay.auto(maximum: 0.250)

    /// The command line's words (`--latency auto|MS`, `--max-latency MS`): nil text or `auto` is
    /// `auto` up to `maximumMilliseconds` (default 250), else a fixed delay of 0 to 5000 ms; nil when
    /// the text is neither (the caller names the option in its error).
    public static func parse(_ text: String?, maximumMilliseconds: Double? = nil) -> PresentationDelay? {
        let maximum = (maximumMilliseconds ?? standardAuto.maximum * 1000) / 1000
        guard let text, text != "auto" else { return .auto(maximum: maximum) }
        guard let ms = Double(text), ms.isFinite, (0...5000).contains(ms) else { return nil }
        return .fixed(ms / 1000)
    }

    /// The largest delay this setting can reach.
    public var maximum: Double {
        switch self {
        case .fixed(let d): return d
        case .auto(let maximum): return maximum
        }
    }

    public var description: String {
        switch self {
        case .fixed(let d): return String(format: "%.0f ms", d * 1000)
        case .auto(let maximum): return String(format: "auto (up to %.0f ms)", maximum * 1000)
        }
    }
}

/// The delay D of a live run, shared by its clocked sinks: fixed, or adapted upward from the
/// latencies frames show on arrival. Every change is kept (time and value) for the stats and trace.
final class PresentationDelayControl: Sendable {
    /// One change of D.
    struct Change: Sendable {
        var time: Double
        var delay: Double
    }

    private struct State {
        var delay: Double?
        var changes: [Change] = []
        /// Arrival latencies of the recent frames, and which of them were late (latency > D).
        var recent: [(latency: Double, late: Bool)] = []
        /// Whether D has settled on the first second's frames (auto).
        var settled = false
    }

    let setting: PresentationDelay
    private let period: Double
    private let state: Protected<State>
    /// Frames over the current D within the recent window that make auto raise D.
    static let missesToAdapt = 2
    /// The recent window, in frames (10 s at 30 fps): misses that recur within it are a pattern, not
    /// a one-off.
    static let window = 300
    /// Frames after the first that auto D settles on (a second at `fps`).
    let settleFrames: Int
    /// Whether settling may lower D: only when the output clock follows D (its ticks move with it, so
    /// a frame due sooner is shown sooner, not beside the one before it).
    let lowersOnSettling: Bool

    /// `lowersOnSettling`: the output clock follows D (``RunOptions/tickPhaseFollowsDelay``).
    init(_ setting: PresentationDelay, fps: Double, lowersOnSettling: Bool = false) {
        self.setting = setting
        period = 1 / fps
        settleFrames = max(1, Int(fps.rounded()))
        self.lowersOnSettling = lowersOnSettling
        if case .fixed(let d) = setting {
            state = Protected(State(delay: d, changes: [Change(time: 0, delay: d)]))
        } else {
            state = Protected(State())
        }
    }

    /// The current D; nil (auto) until the first frame arrived.
    var current: Double? { state.withLock { $0.delay } }

    /// Every value D took, with the run time it took it at.
    var changes: [Change] { state.withLock { $0.changes } }

    /// Frames a clocked sink may hold: those within D of their tick, plus the one being written.
    var queueBound: Int { Int((setting.maximum / period).rounded(.up)) + 1 }

    /// Notes that a frame arrived `latency` seconds after its capture, at run time `now`; returns
    /// the new D when auto changed it.
    @discardableResult
    func observe(latency: Double, now: Double) -> Double? {
        guard case .auto(let maximum) = setting else { return nil }
        // A margin of a quarter period over what was seen, so the usual jitter fits.
        let margin = period / 4
        return state.withLock { s in
            guard let d = s.delay else {
                let first = min(maximum, latency + margin)
                s.delay = first
                s.changes.append(Change(time: now, delay: first))
                return first
            }
            s.recent.append((latency, latency > d))
            if s.recent.count > Self.window { s.recent.removeFirst(s.recent.count - Self.window) }
            if !s.settled && s.recent.count >= settleFrames {
                // The first second's frames, not the first frame alone (its start-up, a slow first
                // decode or a machine busy for a moment, would set D for the whole run): down to their
                // second-highest latency, by less than a period (a tick moves sooner, none is skipped).
                s.settled = true
                let sorted = s.recent.map(\.latency).sorted(by: >)
                let wanted = min(maximum, sorted[min(1, sorted.count - 1)] + margin)
                let lowered = max(wanted, d - 0.9 * period)
                if lowersOnSettling && s.recent.allSatisfy({ !$0.late }) && lowered < d - 0.0005 {
                    s.delay = lowered
                    s.changes.append(Change(time: now, delay: lowered))
                    s.recent.removeAll()
                    return lowered
                }
            }
            let misses = s.recent.filter(\.late).count
            guard misses >= Self.missesToAdapt, d < maximum else { return nil }
            // To the second-highest latency of the window: every miss but a single spike fits.
            let sorted = s.recent.map(\.latency).sorted(by: >)
            let raised = min(maximum, sorted[min(1, sorted.count - 1)] + margin)
            guard raised > d else { return nil }
            s.delay = raised
            s.changes.append(Change(time: now, delay: raised))
            s.recent.removeAll()  // judge the new D on frames that arrive from now on
            return raised
        }
    }
}
