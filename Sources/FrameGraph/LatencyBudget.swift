/// One stage of a frame's way from capture to the encoder, with its latency percentiles: the stats'
/// `stages`, a per-frame latency budget. Stages on parallel paths (the network's and the frame's
/// own) are listed one after the other; they do not add up to the end-to-end figure.
public struct StageLatency: Codable, Sendable, Equatable {
    /// What the stage is: `decode`, `prepare`, `process`, `to output`, `presentation wait`,
    /// `encode`, `end to end`.
    public var stage: String
    /// The node it belongs to (empty for the whole path).
    public var node: String
    public var count: Int
    /// Milliseconds.
    public var p50: Double
    public var p99: Double

    public init(stage: String, node: String, _ h: LatencyHistogram) {
        self.stage = stage
        self.node = node
        count = h.count
        p50 = h.percentile(0.50) * 1000
        p99 = h.percentile(0.99) * 1000
    }

    /// The stages of a run's frames, in the order a frame meets them: each source's decoding, each
    /// filter's preparation (worker nodes) and processing, each composite, then at the primary
    /// sink the arrival (capture → sink), the wait for the frame's tick, the encoding and the whole.
    static func stages(of nodes: [Node], primary: SinkNode?, live: Bool) -> [StageLatency] {
        var stages: [StageLatency] = []
        for node in nodes where !((node as? SinkNode)?.isMonitor ?? false) {
            let s = node.counters.snapshot
            switch node.execution {
            case .source:
                stages.append(StageLatency(stage: "decode", node: node.name, s.latency))
            case .sink:
                guard node === primary else { continue }
                if live {
                    stages.append(StageLatency(stage: "to output", node: node.name, s.arrival))
                    stages.append(StageLatency(stage: "presentation wait", node: node.name, s.presentationWait))
                }
                stages.append(StageLatency(stage: "encode", node: node.name, s.latency))
                stages.append(StageLatency(stage: "end to end", node: node.name, s.endToEnd))
            default:
                if s.prepare.count > 0 { stages.append(StageLatency(stage: "prepare", node: node.name, s.prepare)) }
                stages.append(StageLatency(stage: node.role == .composite ? "composite" : "process", node: node.name, s.latency))
            }
        }
        return stages
    }
}

/// How old the results a composite combined frames with were, in output periods (ticks): 0 is the
/// frame's own result, 3 a result from three frames earlier (the stats' `resultAge`).
public struct ResultAgeSummary: Codable, Sendable, Equatable {
    public var count: Int
    public var p50: Int
    public var p99: Int
    public var max: Int

    /// From counts per age (index: ticks); nil when nothing was counted.
    init?(counts: [Int]) {
        let total = counts.reduce(0, +)
        guard total > 0 else { return nil }
        func percentile(_ f: Double) -> Int {
            let rank = Int((f * Double(total)).rounded(.up))
            var seen = 0
            for (age, n) in counts.enumerated() {
                seen += n
                if seen >= rank { return age }
            }
            return counts.count - 1
        }
        count = total
        p50 = percentile(0.5)
        p99 = percentile(0.99)
        max = counts.lastIndex { $0 > 0 } ?? 0
    }
}
