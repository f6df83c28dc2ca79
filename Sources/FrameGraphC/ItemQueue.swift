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
final class ItemQueue: @unchecked Sendable {
    /// What ``next(timeout:)`` found.
    enum Next {
        case item(RunItem)
        case end
        case timeout
    }

    let live: Bool
    let capacity: Int
    /// The producers' node names, in the order of their lines in an item's results.
    let producers: [String]
    /// The node whose output the frames are (names the line of frames without producers).
    let outputNode: String
    private let condition = NSCondition()
    private var pending: [Frame] = []
    private var ready: [RunItem] = []
    private var readyStart = 0
    private var stored: [[TimedResults]]
    private var newest: [TimedResults?]
    private var highest: [Int]
    private var producerEnded: [Bool]
    private var closed = false
    private var ended = false
    private var dropped = 0
    private var delivered = 0
    /// Converts an item's frame to RGB when the reader asks for it; nil: results only (items keep
    /// no frame).
    let converter: RGBConverter?

    init(live: Bool, capacity: Int, producers: [String], outputNode: String, converter: RGBConverter?) {
        self.live = live
        self.capacity = max(1, capacity)
        self.producers = producers
        self.outputNode = outputNode
        self.converter = converter
        stored = Array(repeating: [], count: producers.count)
        newest = Array(repeating: nil, count: producers.count)
        highest = Array(repeating: Int.min, count: producers.count)
        producerEnded = Array(repeating: false, count: producers.count)
    }

    private var readyCount: Int { ready.count - readyStart }

    /// A frame from the frame tap.
    func frame(_ frame: Frame) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        if live {
            let lines = newest.enumerated().map { p, r in r ?? TimedResults(index: frame.sequence, time: frame.mediaTime, width: frame.width,
                                                                            height: frame.height, results: Results(producer: producers[p])) }
            push(item(for: frame, lines: lines))
            while readyCount > capacity {
                readyStart += 1
                dropped += 1
            }
            compact()
            condition.broadcast()
            return
        }
        pending.append(frame)
        resolve()
        while readyCount >= capacity && !closed { condition.wait() }
    }

    /// Results from producer number `producer`.
    func results(_ record: TimedResults, producer: Int) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        newest[producer] = record
        highest[producer] = max(highest[producer], record.index)
        if !live {
            stored[producer].append(record)
            resolve()
        }
    }

    /// Producer number `producer` has ended (its frames' results are all in).
    func producerFinished(_ producer: Int) {
        condition.lock()
        defer { condition.unlock() }
        producerEnded[producer] = true
        if !live { resolve() }
    }

    /// The run has ended: what waits is handed out, then ``next(timeout:)`` says `.end`.
    func finish() {
        condition.lock()
        defer { condition.unlock() }
        for p in producerEnded.indices { producerEnded[p] = true }
        if !live { resolve() }
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
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        while readyCount == 0 && !ended {
            if !condition.wait(until: deadline) { break }
        }
        guard readyCount > 0 else { return ended ? .end : .timeout }
        let item = ready[readyStart]
        readyStart += 1
        compact()
        delivered += 1
        condition.broadcast()
        return .item(item)
    }

    /// Items handed to the reader, and items dropped because it was behind (live), so far.
    var counts: (delivered: Int, dropped: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (delivered, dropped)
    }

    /// Offline: moves every pending frame whose results are all in (in order) to the ready items.
    private func resolve() {
        while let frame = pending.first {
            let s = frame.sequence
            guard producers.indices.allSatisfy({ producerEnded[$0] || highest[$0] >= s }) else { return }
            pending.removeFirst()
            var lines: [TimedResults] = []
            for p in producers.indices {
                stored[p].removeAll { $0.index < s }
                let own = stored[p].first { $0.index == s }
                lines.append(own ?? TimedResults(index: s, time: frame.mediaTime, width: frame.width, height: frame.height,
                                                 results: Results(producer: producers[p])))
            }
            push(item(for: frame, lines: lines))
            condition.broadcast()
        }
    }

    private func item(for frame: Frame, lines: [TimedResults]) -> RunItem {
        let records = lines.isEmpty ? [TimedResults(frame: frame, producer: outputNode)] : lines
        let text = records.compactMap { try? ResultsLines.encode($0) }.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
        return RunItem(index: frame.sequence, time: frame.mediaTime, frame: converter == nil ? nil : frame, converter: converter, resultsLines: text)
    }

    private func push(_ item: RunItem) {
        ready.append(item)
    }

    private func compact() {
        if readyStart > 64 && readyStart * 2 > ready.count {
            ready.removeFirst(readyStart)
            readyStart = 0
        }
    }
}
