import Foundation

/// The run-level figures of one stream of a run with several sources (the report's `streams[i]`):
/// the same counters as a one-stream run's report, counted over the nodes that source feeds.
///
/// A stream's `framesOut`, `droppedLate`, `duplicated` and `endToEnd` are those of its own primary
/// sink (its first video output), so each camera of a multi-camera run is judged on its own file.
public struct StreamReport: Codable, Sendable {
    /// The source's ``SourceNode/streamName`` (or its name).
    public var name: String
    public var framesIn: Int
    public var droppedAtSource: Int
    public var droppedCorrupt: Int
    public var droppedRate: Int
    public var admitted: Int
    public var droppedBusy: Int
    public var droppedLate: Int
    public var duplicated: Int
    public var duplicatedBusy: Int
    public var skippedTicks: Int
    public var framesOut: Int
    public var nonFinite: Int
    public var endToEnd: LatencySummary
    /// Live mode: the stream's presentation delay D at the end of the run, in milliseconds (each
    /// stream adapts its own).
    public var presentationDelayMs: Double
    /// The stream's primary sink's end-to-end histogram, for the run's totals.
    var endToEndHistogram = LatencyHistogram()

    enum CodingKeys: String, CodingKey {
        case name, framesIn, droppedAtSource, droppedCorrupt, droppedRate, admitted, droppedBusy, droppedLate, duplicated,
             duplicatedBusy, skippedTicks, framesOut, nonFinite, endToEnd, presentationDelayMs
    }

    /// The figures of `source`'s stream: every node among `nodes` that it reaches and no other
    /// source does, the source included.
    init(source: SourceNode, nodes: [Node], context: RunContext, elapsed: Double) {
        let mine = nodes.filter { node in
            let upstream = node.upstreamSources
            return node === source || (upstream.count == 1 && upstream[0] === source)
        }
        let report = RunReport(nodes: mine, context: context, elapsed: elapsed, perStream: false)
        name = source.streamName ?? source.name
        framesIn = report.framesIn
        droppedAtSource = report.droppedAtSource
        droppedCorrupt = report.droppedCorrupt
        droppedRate = report.droppedRate
        admitted = report.admitted
        droppedBusy = report.droppedBusy
        droppedLate = report.droppedLate
        duplicated = report.duplicated
        duplicatedBusy = report.duplicatedBusy
        skippedTicks = report.skippedTicks
        framesOut = report.framesOut
        nonFinite = report.nonFinite
        endToEnd = report.endToEnd
        presentationDelayMs = context.mode == .live ? ((context.streamPresentation(of: source) ?? context.presentation).current ?? 0) * 1000 : 0
        endToEndHistogram = RunReport.primarySink(among: mine)?.counters.snapshot.endToEnd ?? LatencyHistogram()
    }
}
