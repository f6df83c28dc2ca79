import FrameGraph
import TestSupport
import Testing

/// A stand-in for a batched network: one turn of the shared worker takes `turnSeconds` on the run's
/// clock whatever the number of frames in it (as one inference over a batch would), and logs which
/// members it served.
final class ScriptedBatchModel: FilterNode, WorkerSharing, @unchecked Sendable {
    let turnSeconds: Double
    let turns: Protected<[[String]]>
    private(set) var workerGroup: WorkerGroup?

    init(name: String, turnSeconds: Double, turns: Protected<[[String]]>) {
        self.turnSeconds = turnSeconds
        self.turns = turns
        super.init(name: name)
    }

    override var execution: Execution { .worker }

    func join(_ group: WorkerGroup, leader: ScriptedBatchModel) { workerGroup = group }

    func processBatch(_ items: [BatchItem], context: RunContext) throws -> [Frame?] {
        turns.withLock { $0.append(items.map(\.node.name)) }
        context.clock.sleep(for: turnSeconds, lane: Lane.current.id)
        return items.map(\.frame)
    }
}

/// A pattern source whose first frame comes 1 ms into the run: the sources of a run start together,
/// and a first frame due at once is sent without waiting on the clock, in whatever order the threads
/// happen to run; 1 ms in, the virtual clock wakes them one at a time in lane order (s1, s2, …).
final class LaneOrderedSource: SourceNode, @unchecked Sendable {
    private let pattern: PatternSource
    private var first = true

    init(name: String, frames: Int) {
        pattern = PatternSource(name: name, width: 256, height: 16, frameCount: frames)
        super.init(name: name)
    }

    override func start(context: RunContext) throws { try pattern.start(context: context) }
    override func outputDescription() throws -> FrameDescription { try pattern.outputDescription() }

    override func nextFrame(context: RunContext) throws -> Frame? {
        if first {
            first = false
            context.clock.sleep(until: context.startTime + 0.001, lane: Lane.current.id)
        }
        return try pattern.nextFrame(context: context)
    }
}

/// Four streams sharing one worker: per-stream drop-while-busy, round-robin turns, batches — every
/// count derived below and checked exactly on the virtual clock.
@Suite struct SharedWorkerTests {
    struct Outcome {
        var report: RunReport
        var turns: [[String]]
        var sinks: [CollectingSink]
    }

    func run(streams: Int = 4, frames: Int = 60, turnSeconds: Double = 0.050, batch: Int, budget: Int? = nil, mode: RunMode = .live) throws -> Outcome {
        let log = Protected<[[String]]>([])
        let group = WorkerGroup(name: "net", batchLimit: batch)
        var sources: [SourceNode] = []
        var models: [ScriptedBatchModel] = []
        var sinks: [CollectingSink] = []
        for i in 1...streams {
            let source = LaneOrderedSource(name: "s\(i)", frames: frames)
            let model = ScriptedBatchModel(name: "net\(i)", turnSeconds: turnSeconds, turns: log)
            let sink = CollectingSink(name: "out\(i)")
            source --> model --> sink
            sources.append(source)
            models.append(model)
            sinks.append(sink)
        }
        for model in models { model.join(group, leader: models[0]) }
        var options = RunOptions(mode: mode, fps: 30, clock: ManualClock())
        options.tickPhase = 0.5
        options.frameBudget = budget
        let report = try GraphRunner(sources: sources, options: options).run()
        return Outcome(report: report, turns: log.withLock { $0 }, sinks: sinks)
    }

    @Test func batchesOfWaitingStreamsAreFairAndDropPerStream() throws {
        // Frames of all four streams arrive together (frame 0 at 1 ms, frame k at k/30 s; sources wake
        // in lane order s1…s4); a turn takes 50 ms. 1 ms: s1's frame 0 finds the worker idle and runs
        // alone (1 → 51 ms); s2–s4's frames 0 wait. 33 ms: every stream still holds a frame (waiting or
        // running): all four frames 1 drop. 51 ms: the next turn starts after s1 and takes s2, s3, s4
        // together (51 → 101 ms). 67 ms: s1 is free: frame 2 waits; s2–s4 drop theirs. 100 ms: the
        // frames 3 arrive before that turn ends: all drop; the turn after starts at s3 and finds only s1
        // waiting. So turns alternate [s1], [s2 s3 s4] every 50 ms: s1 runs frames 0, 2, 5, 8 …
        // (k ≡ 2 mod 3 after 0) and s2–s4 frames 0, 4, 7, 10 … (k ≡ 1 mod 3 after 0). Of 60 frames: s1
        // runs 1 + 20 = 21, the others 1 + 19 = 20; the rest drop. 41 turns.
        let outcome = try run(batch: 4)
        let streams = try #require(outcome.report.streams)
        #expect(streams.map(\.name) == ["s1", "s2", "s3", "s4"])
        #expect(streams.map(\.framesIn) == [60, 60, 60, 60])
        #expect(streams.map(\.admitted) == [21, 20, 20, 20])
        #expect(streams.map(\.droppedBusy) == [39, 40, 40, 40])
        #expect(outcome.report.admitted == 81)
        #expect(outcome.report.droppedBusy == 159)
        #expect(outcome.turns.count == 41)
        #expect(Array(outcome.turns.prefix(4)) == [["net1"], ["net2", "net3", "net4"], ["net1"], ["net2", "net3", "net4"]])
        #expect(outcome.turns.allSatisfy { $0.count <= 4 && Set($0).count == $0.count })
        // Each stream's output is its own: the run's totals are the sum of the streams'.
        #expect(outcome.report.framesOut == streams.reduce(0) { $0 + $1.framesOut })
        for (sink, stream) in zip(outcome.sinks, streams) { #expect(sink.entries.count == stream.framesOut) }
    }

    @Test func batchOfOneServesStreamsRoundRobin() throws {
        // One frame per 50 ms turn: each turn starts after the previous turn's stream, so the worker
        // serves s1, s2, s3, s4, s1, … in turn (a stream's frame always waits by the time its turn
        // comes: it was freed three turns earlier, 150 ms before). 60 frames last 2 s: turns start at
        // 1, 51, …, 1951 ms and the frames waiting at the end run too — 43 turns, s1–s3 eleven each
        // and s4 ten. No stream starves: the counts differ by at most one.
        let outcome = try run(batch: 1)
        let streams = try #require(outcome.report.streams)
        #expect(streams.map(\.admitted) == [11, 11, 11, 10])
        #expect(streams.map(\.droppedBusy) == [49, 49, 49, 50])
        #expect(outcome.turns.count == 43)
        let order = outcome.turns.map { $0[0] }
        #expect(order == (0..<43).map { "net\($0 % 4 + 1)" })
    }

    @Test func offlineSharedWorkerRunsEveryFrameOfEveryStream() throws {
        // Offline a stream's sender waits for its own frame to finish: nothing drops.
        let outcome = try run(frames: 30, batch: 2, mode: .offline)
        let streams = try #require(outcome.report.streams)
        #expect(streams.map(\.admitted) == [30, 30, 30, 30])
        #expect(streams.map(\.droppedBusy) == [0, 0, 0, 0])
        #expect(streams.map(\.framesOut) == [30, 30, 30, 30])
        #expect(outcome.turns.allSatisfy { $0.count <= 2 })
        #expect(outcome.turns.reduce(0) { $0 + $1.count } == 120)
        for sink in outcome.sinks { #expect(sink.entries.map(\.stamp) == (0..<30).map { Optional($0) }) }
    }
}

extension SharedWorkerTests {
    @Test func aFrameBudgetCapsHeldFramesAndKeepsStreamsFair() throws {
        // A budget of 2 frames for 4 streams: the free places go to the streams admitted longest ago.
        // 1 ms: s1 and s2 are admitted (never admitted before, in lane order), s3 and s4 are over the
        // budget. s1 runs alone (1 → 51 ms), then s2 (51 → 101 ms); meanwhile s1's place is free again
        // but goes to s3 (admitted longer ago: never), and s2's to s4. So the turns serve s1, s2, s3,
        // s4, s1 … one frame each, every 50 ms: 41 turns in the 2 s of frames, s1 eleven, the others ten.
        let outcome = try run(batch: 4, budget: 2)
        let streams = try #require(outcome.report.streams)
        #expect(streams.map(\.admitted) == [11, 10, 10, 10])
        #expect(streams.map(\.droppedBusy) == [49, 50, 50, 50])
        #expect(outcome.turns.count == 41)
        #expect(outcome.turns.map { $0[0] } == (0..<41).map { "net\($0 % 4 + 1)" })
    }
}

extension SharedWorkerTests {
    @Test func streamsAndTheirSharedWorkerAreReleasedAfterTheRun() throws {
        // The shared worker and the members' inboxes point at each other only for the run: once it
        // returns, the nodes and the group die with the builder's last reference.
        func runOnce(mode: RunMode) throws -> [() -> AnyObject?] {
            let group = WorkerGroup(name: "net", batchLimit: 2)
            let log = Protected<[[String]]>([])
            var nodes: [Node] = []
            var sources: [SourceNode] = []
            var models: [ScriptedBatchModel] = []
            for i in 1...3 {
                let source = LaneOrderedSource(name: "s\(i)", frames: 10)
                let model = ScriptedBatchModel(name: "net\(i)", turnSeconds: 0.01, turns: log)
                let sink = NullSink(name: "out\(i)")
                source --> model --> sink
                sources.append(source)
                models.append(model)
                nodes += [source, model, sink]
            }
            for model in models { model.join(group, leader: models[0]) }
            let report = try GraphRunner(sources: sources, options: RunOptions(mode: mode, clock: ManualClock())).run()
            #expect(report.streams?.count == 3)
            let objects: [AnyObject] = nodes.map { $0 as AnyObject } + [group]
            return objects.map { object in { [weak object] in object } }
        }
        for i in 0..<10 {
            for object in try runOnce(mode: i % 2 == 0 ? .live : .offline) { #expect(object() == nil, "outlived its run") }
        }
    }
}
