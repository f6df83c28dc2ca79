import FrameGraph

/// Bounds for live runs derived from what the run itself measured (node times, frame period), not
/// from the machine's speed: a test that uses them holds on a busy machine too.
public enum ScheduleBounds {
    /// Most frames a drop-while-busy worker can refuse: while job i runs for tᵢ, at most
    /// ⌊tᵢ / period⌋ + 1 frames arrive, so dropped ≤ admitted × (⌊max t / period⌋ + 1).
    public static func maxDroppedBusy(admitted: Int, node: NodeReport, period: Double) -> Int {
        admitted * (Int((node.latency.max / 1000) / period) + 1)
    }

    /// Largest end-to-end latency (ms) the schedule allows: a new frame may wait for the job in
    /// flight at each node and for its own processing there (twice the sum of the nodes' worst
    /// times), then up to two output periods for its tick, plus slack for thread wake-ups.
    public static func maxEndToEndMilliseconds(_ report: RunReport, slack: Double = 100) -> Double {
        let work = report.nodes.reduce(0) { $0 + $1.latency.max }
        return 2 * work + 2 * 1000 / report.fps + slack
    }
}
