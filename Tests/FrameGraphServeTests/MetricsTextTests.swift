import Foundation
import FrameGraph
import FrameGraphServe
import Testing
import TestSupport

/// `/metrics` is the run's report in Prometheus's format: the same counters, histograms whose counts
/// are the report's latency counts, and text that promtool accepts.
@Suite struct MetricsTextTests {
    /// An offline run of pattern → slow worker → null (every frame through).
    static func finishedRun() throws -> (report: RunReport, nodes: [Node]) {
        let source = PatternSource(name: "cam", width: 256, height: 64, frameCount: 12)
        source --> SlowNode(name: "net", delay: 0.002) --> NullSink(name: "out")
        let runner = try GraphRunner(sources: [source], options: RunOptions(mode: .offline))
        let report = try runner.run()
        return (report, runner.nodes)
    }

    @Test func countersAreTheReportsCounters() throws {
        let (report, nodes) = try Self.finishedRun()
        let text = MetricsText.render(report: report, nodes: nodes, finished: true)
        #expect(sampleValue(text, "framegraph_frames_in_total") == Double(report.framesIn))
        #expect(report.framesIn == 12)
        #expect(sampleValue(text, "framegraph_frames_admitted_total") == Double(report.admitted))
        #expect(sampleValue(text, "framegraph_frames_out_total") == Double(report.framesOut))
        #expect(sampleValue(text, "framegraph_frames_dropped_busy_total") == Double(report.droppedBusy))
        #expect(sampleValue(text, "framegraph_run_finished") == 1)
        for n in report.nodes {
            let l = ["node=\"\(n.name)\""]
            #expect(sampleValue(text, "framegraph_node_frames_received_total", labels: l) == Double(n.received), "\(n.name)")
            #expect(sampleValue(text, "framegraph_node_frames_emitted_total", labels: l) == Double(n.emitted), "\(n.name)")
            #expect(sampleValue(text, "framegraph_node_latency_seconds_count", labels: l) == Double(n.latency.count), "\(n.name)")
            #expect(sampleValue(text, "framegraph_node_latency_seconds_bucket", labels: l + ["le=\"+Inf\""]) == Double(n.latency.count))
        }
        // Every node's stream label names the source its frames come from.
        #expect(text.contains("framegraph_node_frames_received_total{node=\"net\",kind=\"slow\",stream=\"cam\"} 12"))
        #expect(sampleValue(text, "framegraph_end_to_end_latency_seconds_count") == Double(report.endToEnd.count))
    }

    @Test func bucketsAreCumulativeAndBoundTheSlowNode() throws {
        let (_, nodes) = try Self.finishedRun()
        let net = try #require(nodes.first { $0.name == "net" })
        let h = net.counters.snapshot.latency
        var previous = 0
        for bound in MetricsText.bucketBounds {
            let c = h.count(atOrBelow: bound)
            #expect(c >= previous)
            previous = c
        }
        // 2 ms per frame: none at or below 1 ms, all at or below 1 s.
        #expect(h.count(atOrBelow: 0.001) == 0)
        #expect(h.count(atOrBelow: 1) == 12)
    }

    @Test func reconnectsAreEachConnectedSourcesOwn() throws {
        var (report, nodes) = try Self.finishedRun()
        #expect(!MetricsText.render(report: report, nodes: nodes, finished: true).contains("framegraph_stream_reconnects_total{"),
                "a pattern source has no connection")
        var counters = ConnectionCounters.Snapshot()
        counters.reconnects = 3
        let camera = try #require(report.nodes.firstIndex { $0.name == "cam" })
        report.nodes[camera].connection = counters
        let text = MetricsText.render(report: report, nodes: nodes, finished: true)
        #expect(sampleValue(text, "framegraph_stream_reconnects_total", labels: [#"stream="cam""#]) == 3, "\(text)")
    }

    @Test func labelValuesAreEscaped() throws {
        let source = PatternSource(name: "a\"b\\c\nd", width: 256, height: 16, frameCount: 1)
        source --> NullSink(name: "out")
        let runner = try GraphRunner(sources: [source], options: RunOptions(mode: .offline))
        let report = try runner.run()
        let text = MetricsText.render(report: report, nodes: runner.nodes, finished: true)
        #expect(text.contains(#"node="a\"b\\c\nd""#))
    }

    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: promtool != nil, "needs promtool (Debian's prometheus package; scripts/install-deps.sh installs it)"))
    func promtoolAcceptsTheText() throws {
        let (report, nodes) = try Self.finishedRun()
        let text = MetricsText.render(report: report, nodes: nodes, finished: true,
                                      extras: .init(server: HTTPServer.Statistics()))
        let file = TestEnvironment.scratch("metrics-promtool").appendingPathComponent("metrics.txt")
        try Data(text.utf8).write(to: file)
        let r = try runCommand("/bin/sh", ["-c", "\(Self.promtool ?? "promtool") check metrics < '\(file.path)'"])
        #expect(r.status == 0, "promtool: \(r.stdout)\(r.stderr)")
    }
}
