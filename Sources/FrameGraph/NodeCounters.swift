
/// What happened to the frames that reached one node. Read at any time (the progress line does);
/// written by the runner.
public final class NodeCounters: Sendable {
    /// A consistent copy of the counters.
    public struct Snapshot: Sendable {
        /// Frames that reached the node (for a source: frames it produced).
        public var received = 0
        /// Frames the node worked on (for a worker node: admitted).
        public var processed = 0
        /// Frames the node passed on (for a sink: frames written, duplicates included).
        public var emitted = 0
        /// Frames refused because the node was still busy with an earlier one.
        public var droppedBusy = 0
        /// Frames that could not be used in time: superseded before an output tick, or left unpaired.
        public var droppedLate = 0
        /// Frames a source could not deliver: a camera's frames lost at the driver (gaps in its
        /// sequence numbers), skipped for a newer one (latest-frame semantics), or damaged.
        public var droppedAtSource = 0
        /// Frames a file source lost to damage inside the file (skipped; reading went on).
        public var droppedCorrupt = 0
        /// Predictions whose outputs held NaN or infinite values (replaced by 0; the run went on).
        public var nonFinite = 0
        /// Frames a live source did not send on because the output clock could not show them (a source
        /// faster than the clock: the frame nearest each tick is kept, the rest dropped here, before
        /// any network works on them).
        public var droppedRate = 0
        /// Output ticks that repeated the previous frame because nothing new had arrived.
        public var duplicated = 0
        /// Of ``duplicated``: ticks whose new frame had been captured in time but was still in the
        /// graph (a network busy or slow), rather than not produced yet by the source.
        public var duplicatedBusy = 0
        /// Most frames a clocked sink held at once, waiting for their presentation time.
        public var queuedMax = 0
        /// Output ticks that wrote nothing because nothing new had arrived (skip policy).
        public var skippedTicks = 0
        /// Time spent processing one frame.
        public var latency = LatencyHistogram()
        /// Capture-to-output latency of new frames (sinks only).
        public var endToEnd = LatencyHistogram()
        /// Worker nodes: time preparing a frame's input on the delivering thread, before the worker
        /// runs it (a network's input preparation when it does it there).
        public var prepare = LatencyHistogram()
        /// Clocked sinks: capture to arrival at the sink (the graph's own latency).
        public var arrival = LatencyHistogram()
        /// Clocked sinks: arrival to the tick that writes the frame (the presentation delay's wait).
        public var presentationWait = LatencyHistogram()
        /// Composites pairing by `newest`: how many output periods older than the frame the newest
        /// result it was combined with is (index: ticks, capped at ``NodeCounters/maxAgeTicks``).
        public var resultAgeTicks: [Int] = []
    }

    /// The largest result age counted on its own; older ones count as this.
    public static let maxAgeTicks = 60

    private let state = Protected(Snapshot())

    public init() {}

    /// A copy of the current values.
    public var snapshot: Snapshot { state.withLock { $0 } }

    /// Changes the counters under the lock.
    public func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }
}
