import Foundation
import FrameGraph
import FrameGraphMedia
import FrameGraphResults

/// Pairs a run's output frames with their results and holds them, a few at a time, for the program
/// that reads them (``RunSession``). Frames come from a ``FrameGraphMedia/FrameTap`` (the sink's
/// thread), results from one ``FrameGraph/ResultsTap`` per producer (the producers' threads).
///
/// Offline, every frame waits for the results of the same frame from every producer (or for the
/// producer to end), so an item's results are those the results file has for that frame; when
/// ``capacity`` items wait unread, the frame tap blocks: a slow reader slows the run, nothing is
/// dropped. Live, a frame is paired with the newest results of each producer and never waits; when
/// the reader is behind, the oldest unread item is dropped (``dropped`` counts them).
///
/// Offline with ``batched`` (a run whose frames come from its own sources, not pushed by the
/// program), items are handed over in bursts, so that the reader and the frame tap do not wake
/// each other for every frame: a waiting reader is woken when ``capacity`` items are ready (or the
/// run ends; a wait that times out takes what is there), and a blocked frame tap when the reader
/// has taken the line down to half of it. Each side then works through several items without a
/// context switch (about two wake-ups per `capacity` frames instead of two per frame).
///
/// A run with several streams has one ``Lane`` per stream (its own frame tap and producers, paired
/// as above within the stream) and one line of items for the reader, in the order they are ready;
/// each item names its stream.
final class ItemQueue: @unchecked Sendable {
    /// What ``next(timeout:)`` found.
    enum Next {
        case item(RunItem)
        case end
        case timeout
    }

    /// One stream's frames and results (a one-stream run has one lane, unnamed).
    struct Lane: Sendable {
        /// The stream's name (nil in a one-stream run).
        let stream: String?
        /// The producers' node names, in the order of their lines in an item's results.
        let producers: [String]
        /// The node whose output the frames are (names the line of frames without producers).
        let outputNode: String
        fileprivate var pending: [Frame] = []
        fileprivate var stored: [[TimedResults]]
        fileprivate var newest: [TimedResults?]
        fileprivate var highest: [Int]
        fileprivate var producerEnded: [Bool]

        init(stream: String?, producers: [String], outputNode: String) {
            self.stream = stream
            self.producers = producers
            self.outputNode = outputNode
            stored = Array(repeating: [], count: producers.count)
            newest = Array(repeating: nil, count: producers.count)
            highest = Array(repeating: Int.min, count: producers.count)
            producerEnded = Array(repeating: false, count: producers.count)
        }
    }

    let live: Bool
    let capacity: Int
    /// Offline items handed over in bursts (see above).
    let batched: Bool
    /// A waiting reader is woken when this many items are ready (1: at every item).
    private let wakeReaderAt: Int
    /// A blocked frame tap goes on when no more than this many items are ready.
    private let resumeFramesAt: Int
    private var lanes: [Lane]
    private let condition = NSCondition()
    /// Items not yet taken, oldest first (a few: at most about ``capacity``). A taken item leaves the
    /// array at once, so the queue never keeps a frame the reader has let go of.
    private var ready: [RunItem] = []
    private var closed = false
    private var ended = false
    private var dropped = 0
    private var delivered = 0
    private var readerWakeups = 0
    /// Converts an item's frame to RGB when the reader asks for it; nil: results only (items keep
    /// no frame).
    let converter: RGBConverter?

    /// `lanes`: one per stream, in the streams' order (at least one). `batched` applies offline only.
    init(live: Bool, capacity: Int, lanes: [Lane], converter: RGBConverter?, batched: Bool = false) {
        self.live = live
        self.capacity = max(1, capacity)
        self.batched = batched && !live
        wakeReaderAt = self.batched ? self.capacity : 1
        resumeFramesAt = self.batched ? self.capacity / 2 : self.capacity - 1
        self.lanes = lanes
        self.converter = converter
    }

    private var readyCount: Int { ready.count }

    /// A frame from lane `lane`'s frame tap.
    func frame(_ frame: Frame, lane: Int = 0) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        if live {
            let l = lanes[lane]
            let lines = l.newest.enumerated().map { p, r in r ?? TimedResults(index: frame.sequence, time: frame.mediaTime, width: frame.width,
                                                                              height: frame.height, results: Results(producer: l.producers[p])) }
            push(item(for: frame, lines: lines, lane: lane))
            if readyCount > capacity {
                dropped += readyCount - capacity
                ready.removeFirst(readyCount - capacity)
            }
            condition.broadcast()
            return
        }
        lanes[lane].pending.append(frame)
        resolve(lane)
        if readyCount >= capacity {
            while readyCount > resumeFramesAt && !closed { condition.wait() }
        }
    }

    /// Results from producer number `producer` of lane `lane`.
    func results(_ record: TimedResults, producer: Int, lane: Int = 0) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        lanes[lane].newest[producer] = record
        lanes[lane].highest[producer] = max(lanes[lane].highest[producer], record.index)
        if !live {
            lanes[lane].stored[producer].append(record)
            resolve(lane)
        }
    }

    /// Producer number `producer` of lane `lane` has ended (its frames' results are all in).
    func producerFinished(_ producer: Int, lane: Int = 0) {
        condition.lock()
        defer { condition.unlock() }
        lanes[lane].producerEnded[producer] = true
        if !live { resolve(lane) }
    }

    /// The run has ended: what waits is handed out, then ``next(timeout:)`` says `.end`.
    func finish() {
        condition.lock()
        defer { condition.unlock() }
        for l in lanes.indices {
            for p in lanes[l].producerEnded.indices { lanes[l].producerEnded[p] = true }
            if !live { resolve(l) }
        }
        ended = true
        condition.broadcast()
    }

    /// The reader stops: nothing more is taken, a blocked frame tap goes on (the run is stopping).
    func close() {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
    }

    /// The next item, waiting at most `timeout` seconds for one.
    func next(timeout: Double) -> Next {
        condition.lock()
        defer { condition.unlock() }
        if readyCount == 0 && !ended {
            let deadline = Date(timeIntervalSinceNow: max(0, timeout))
            while readyCount < wakeReaderAt && !ended {
                if !condition.wait(until: deadline) { break }
                readerWakeups += 1
            }
        }
        guard readyCount > 0 else { return ended ? .end : .timeout }
        let item = ready.removeFirst()
        delivered += 1
        if readyCount == resumeFramesAt { condition.broadcast() }  // a frame tap blocked on a full line goes on
        return .item(item)
    }

    /// Items handed to the reader, items dropped because it was behind (live), and the times a
    /// sleeping reader was woken by the engine (not by its own wait running out), so far.
    var counts: (delivered: Int, dropped: Int, readerWakeups: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (delivered, dropped, readerWakeups)
    }

    /// Offline: moves every pending frame of lane `l` whose results are all in (in order) to the
    /// ready items.
    private func resolve(_ l: Int) {
        while let frame = lanes[l].pending.first {
            let s = frame.sequence
            guard lanes[l].producers.indices.allSatisfy({ lanes[l].producerEnded[$0] || lanes[l].highest[$0] >= s }) else { return }
            lanes[l].pending.removeFirst()
            var lines: [TimedResults] = []
            for p in lanes[l].producers.indices {
                lanes[l].stored[p].removeAll { $0.index < s }
                let own = lanes[l].stored[p].first { $0.index == s }
                lines.append(own ?? TimedResults(index: s, time: frame.mediaTime, width: frame.width, height: frame.height,
                                                 results: Results(producer: lanes[l].producers[p])))
            }
            push(item(for: frame, lines: lines, lane: l))
            if readyCount >= wakeReaderAt { condition.broadcast() }
        }
    }

    private func item(for frame: Frame, lines: [TimedResults], lane: Int) -> RunItem {
        let records = lines.isEmpty ? [TimedResults(frame: frame, producer: lanes[lane].outputNode)] : lines
        let text = records.compactMap { try? ResultsLines.encode($0) }.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
        return RunItem(index: frame.sequence, time: frame.mediaTime, stream: lanes[lane].stream, frame: converter == nil ? nil : frame,
                       converter: converter, resultsLines: text)
    }

    private func push(_ item: RunItem) {
        ready.append(item)
    }

}
