/// What happened to a network source's connection during a run: losses, stalls, reconnects and the
/// time without a picture. Written by the source's thread, read at any time (stats, `--serve`).
///
/// ```swift
/// let counters = ConnectionCounters()
/// counters.update { $0.stalls += 1 }
/// counters.snapshot.reconnects   // 0
/// ```
public final class ConnectionCounters: Sendable {
    /// A consistent copy of the counters (the stats' `connection` object of a source node).
    public struct Snapshot: Codable, Sendable, Equatable {
        /// Times the source connected again after a loss.
        public var reconnects = 0
        /// Losses because no frame came for the stall timeout (a server that stopped sending).
        public var stalls = 0
        /// Losses because the connection failed or ended (refused, reset, end of stream, bad data).
        public var drops = 0
        /// Attempts to connect that failed (each followed by a longer wait, up to the cap).
        public var failedAttempts = 0
        /// Seconds of the run without a picture from the source after its first frame (from the last
        /// frame before a loss to the first frame after it, or to the end of the run).
        public var secondsWithoutSignal = 0.0
        /// Frames the source made up while it had no signal (`on-loss=no-signal`).
        public var noSignalFrames = 0
        /// Frames whose picture size differed from the stream's first and were scaled to it.
        public var resizedFrames = 0
        /// The last loss, as one line (credentials redacted); nil while none happened.
        public var lastLoss: String?

        public init() {}
    }

    private let state = Protected(Snapshot())

    public init() {}

    /// A copy of the current values.
    public var snapshot: Snapshot { state.withLock { $0 } }

    /// Changes the counters under the lock.
    public func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }
}
