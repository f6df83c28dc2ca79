import Foundation
import NeuralGraph

/// Chooses, for one graph on this CPU, between FrameGraph's own kernels and XNNPACK's by timing
/// both compiled plans, alternated, and keeping the faster: which one wins depends on the core
/// (on AVX2 cores without AVX-512 the own kernels run the shipped models in about half XNNPACK's
/// time; on a Zen 4 core with AVX-512 they win on MediaPipe's models and lose on EfficientNet-Lite0,
/// see docs/BENCHMARKS.md) and on the network, so no fixed rule is right everywhere.
///
/// A decision is kept for the process, keyed by the graph's structure (operations and shapes, not
/// weights) and thread count: a second predictor of the same model makes the same choice without
/// timing again, so two labelers of one model give the same values.
enum KernelTuning {
    /// What the tuner chose and the two times it chose by.
    struct Decision: Sendable, Equatable {
        /// Whether the own kernels won.
        let own: Bool
        /// Milliseconds per prediction of each plan: the lower quartile of its timed runs (the
        /// host's noise only ever adds time, so the lower runs say more about the plan).
        let ownMilliseconds: Double
        let xnnpackMilliseconds: Double
    }

    /// Decisions made in this process, by ``key(of:threads:)``.
    private static let decisions = DecisionTable()

    /// Alternated rounds at most, and the time after which no new round starts (once at least
    /// `minimumRounds` are done): small models get more rounds, large ones at least four. Before
    /// them, warm-up runs of both plans, alternated, for at least `warmupSeconds` and 3 runs each
    /// (first runs touch fresh pages and caches, and the core's clock rises).
    static let maximumRounds = 15
    static let minimumRounds = 4
    static let budgetSeconds = 0.25
    static let warmupSeconds = 0.03
    /// Timed runs in each plan's turn of a round, after its untimed one.
    static let timedRunsPerTurn = 2

    /// The graph's structure as a string: every node's operation, input and output shapes, and the
    /// thread count.
    static func key(of graph: NeuralGraph, threads: Int) -> String {
        var key = "threads \(threads);"
        for node in graph.nodes {
            key += node.operation.name
            for t in node.inputs where t >= 0 { key += " \(graph.tensors[t].shape)" }
            key += " →"
            for t in node.outputs { key += " \(graph.tensors[t].shape)" }
            key += ";"
        }
        return key
    }

    /// The decision already made in this process for `key`, if any.
    static func known(_ key: String) -> Decision? { decisions.get(key) }

    /// Times `own` and `xnnpack` (plans of the same graph) alternated on the same pseudo-random
    /// inputs, records and returns the decision. The plans' input buffers are zeroed afterwards.
    static func decide(key: String, own: CompiledPlan, xnnpack: CompiledPlan) throws -> Decision {
        let plans = [own, xnnpack]
        for plan in plans { fillInputs(plan, seed: 42) }
        func elapsed(since t0: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 }
        let warmupStart = DispatchTime.now().uptimeNanoseconds
        var warmupRuns = 0
        while warmupRuns < 3 || elapsed(since: warmupStart) < warmupSeconds {
            for plan in plans { try plan.run() }
            warmupRuns += 1
        }
        var times: [[Double]] = [[], []]
        let start = DispatchTime.now().uptimeNanoseconds
        for round in 0..<maximumRounds {
            if round >= minimumRounds, elapsed(since: start) > budgetSeconds { break }
            // Alternate which goes first, so neither always runs on caches the other left. Each
            // plan's turn starts with an untimed run: two plans of a large network (EfficientNet-
            // Lite0's weights packed twice, about 38 MB) do not fit in the caches together, and
            // the first run after the other plan's would time the other's evictions.
            for index in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                try plans[index].run()
                for _ in 0..<timedRunsPerTurn {
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    try plans[index].run()
                    times[index].append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                }
            }
        }
        for plan in plans { fillInputs(plan, seed: nil) }
        return decisions.record(key, choose(ownTimes: times[0], xnnpackTimes: times[1]))
    }

    /// The decision the timed runs (milliseconds) give: the plan with the lower lower quartile, the
    /// own kernels on a tie.
    static func choose(ownTimes: [Double], xnnpackTimes: [Double]) -> Decision {
        let own = lowerQuartile(ownTimes), xnnpack = lowerQuartile(xnnpackTimes)
        return Decision(own: own <= xnnpack, ownMilliseconds: own, xnnpackMilliseconds: xnnpack)
    }

    /// Fills the plan's input buffers with pseudo-random values in 0…1 (`seed`), or zeros (nil).
    private static func fillInputs(_ plan: CompiledPlan, seed: UInt64?) {
        var state = seed ?? 0
        for t in plan.graph.inputs {
            guard let buffer = plan.buffers[t] else { continue }
            for k in 0..<buffer.count {
                if seed == nil {
                    buffer.pointer[k] = 0
                } else {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    buffer.pointer[k] = Float(state >> 40) / Float(1 << 24)
                }
            }
        }
    }

    private static func lowerQuartile(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 4]
    }
}

/// The process's tuning decisions, behind a lock.
private final class DecisionTable: @unchecked Sendable {
    private var table: [String: KernelTuning.Decision] = [:]
    private let lock = NSLock()

    func get(_ key: String) -> KernelTuning.Decision? {
        lock.lock()
        defer { lock.unlock() }
        return table[key]
    }

    /// Records `decision` unless another thread recorded one first; returns the one kept.
    func record(_ key: String, _ decision: KernelTuning.Decision) -> KernelTuning.Decision {
        lock.lock()
        defer { lock.unlock() }
        if let earlier = table[key] { return earlier }
        table[key] = decision
        return decision
    }
}
