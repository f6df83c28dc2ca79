import Foundation
import FrameGraph

/// The run's figures in Prometheus's text exposition format (version 0.0.4), made from the same
/// report the statistics JSON is written from (``RunReport``) and the nodes' own latency histograms:
/// every counter has one source. Names and labels are listed in docs/MONITORING.md.
///
/// ```swift
/// let text = MetricsText.render(report: runner.report(), nodes: runner.nodes, finished: false)
/// ```
public enum MetricsText {
    /// The content type of the exposition.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Upper bounds of the latency histograms' buckets, in seconds (+Inf added).
    public static let bucketBounds: [Double] = [0.001, 0.002, 0.005, 0.01, 0.02, 0.033, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10]

    /// Extra figures the caller knows (the server's own counters).
    public struct Extras: Sendable {
        /// The server's counters, when served.
        public var server: HTTPServer.Statistics?
        public init(server: HTTPServer.Statistics? = nil) {
            self.server = server
        }
    }

    /// The exposition of `report` (its counters) and `nodes` (their histograms, by name).
    public static func render(report: RunReport, nodes: [Node], finished: Bool, extras: Extras = Extras()) -> String {
        var out = Exposition()
        out.family("framegraph_run_info", .gauge, "The run: its mode and output clock rate (value 1).")
        out.sample("framegraph_run_info", ["mode": report.mode, "fps": format(report.fps)], 1)
        out.family("framegraph_run_finished", .gauge, "1 once the run has ended (the figures are final), else 0.")
        out.sample("framegraph_run_finished", [:], finished ? 1 : 0)
        out.family("framegraph_run_failed", .gauge, "1 when the run stopped on an error.")
        out.sample("framegraph_run_failed", [:], report.failure == nil ? 0 : 1)
        out.family("framegraph_elapsed_seconds", .gauge, "Seconds since frames started to flow.")
        out.sample("framegraph_elapsed_seconds", [:], report.elapsedSeconds)
        out.family("framegraph_cpu_seconds_total", .counter, "User + system CPU seconds of the process (start-up included).")
        out.sample("framegraph_cpu_seconds_total", [:], report.cpuSeconds)
        out.family("framegraph_run_cpu_seconds_total", .counter, "User + system CPU seconds of the process since frames started to flow.")
        out.sample("framegraph_run_cpu_seconds_total", [:], report.runCPUSeconds ?? 0)
        out.family("framegraph_output_fps", .gauge, "Output frames per second of elapsed time.")
        out.sample("framegraph_output_fps", [:], report.achievedFps.isFinite ? report.achievedFps : 0)
        out.family("framegraph_presentation_delay_seconds", .gauge, "Live: the presentation delay D now (0 offline).")
        out.sample("framegraph_presentation_delay_seconds", [:], report.presentationDelayMs / 1000)
        out.family("framegraph_presentation_delay_changes_total", .counter, "Live: times D was set or raised.")
        out.sample("framegraph_presentation_delay_changes_total", [:], Double(report.presentationDelayChanges.count))

        let run: [(String, String, Int)] = [
            ("framegraph_frames_in_total", "Frames the sources produced (stats framesIn).", report.framesIn),
            ("framegraph_frames_admitted_total", "Frames the network nodes took (stats admitted).", report.admitted),
            ("framegraph_frames_out_total", "Frames the run's output wrote (stats framesOut).", report.framesOut),
            ("framegraph_frames_dropped_busy_total", "Frames refused by busy nodes (stats droppedBusy).", report.droppedBusy),
            ("framegraph_frames_dropped_late_total", "Frames superseded or unpaired before their tick (stats droppedLate).", report.droppedLate),
            ("framegraph_frames_dropped_rate_total", "Live frames dropped to the clock rate (stats droppedRate).", report.droppedRate),
            ("framegraph_frames_dropped_corrupt_total", "Frames lost to damage inside input files (stats droppedCorrupt).", report.droppedCorrupt),
            ("framegraph_frames_dropped_at_source_total", "Frames a camera could not deliver (stats droppedAtSource).", report.droppedAtSource),
            ("framegraph_frames_repeated_total", "Output ticks that repeated a frame (stats duplicated).", report.duplicated),
            ("framegraph_frames_repeated_busy_total", "Of those, ticks whose new frame was still in the graph (stats duplicatedBusy).", report.duplicatedBusy),
            ("framegraph_ticks_skipped_total", "Output ticks that wrote nothing (stats skippedTicks).", report.skippedTicks),
            ("framegraph_predictions_non_finite_total", "Predictions with NaN or infinite outputs (stats nonFinite).", report.nonFinite),
        ]
        for (name, help, value) in run {
            out.family(name, .counter, help)
            out.sample(name, [:], Double(value))
        }

        let byName = Dictionary(nodes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func labels(_ n: NodeReport) -> [String: String] {
            ["node": n.name, "kind": n.kind, "stream": streams(byName[n.name])]
        }
        let perNode: [(String, String, KeyPath<NodeReport, Int>)] = [
            ("framegraph_node_frames_received_total", "Frames that reached the node (a source: frames it produced).", \.received),
            ("framegraph_node_frames_processed_total", "Frames the node worked on (a network: admitted).", \.processed),
            ("framegraph_node_frames_emitted_total", "Frames the node passed on (a sink: frames written).", \.emitted),
            ("framegraph_node_frames_dropped_busy_total", "Frames refused because the node was busy.", \.droppedBusy),
            ("framegraph_node_frames_dropped_late_total", "Frames superseded or unpaired at the node.", \.droppedLate),
            ("framegraph_node_frames_repeated_total", "Ticks the node repeated a frame on.", \.duplicated),
            ("framegraph_node_ticks_skipped_total", "Ticks the node wrote nothing on.", \.skippedTicks),
            ("framegraph_node_frames_dropped_at_source_total", "Frames the source could not deliver.", \.droppedAtSource),
            ("framegraph_node_frames_dropped_corrupt_total", "Frames the source lost to damage in its file.", \.droppedCorrupt),
            ("framegraph_node_frames_dropped_rate_total", "Frames the live source dropped to the clock rate.", \.droppedRate),
            ("framegraph_node_predictions_non_finite_total", "Predictions with NaN or infinite outputs.", \.nonFinite),
        ]
        for (name, help, path) in perNode {
            out.family(name, .counter, help)
            for n in report.nodes { out.sample(name, labels(n), Double(n[keyPath: path])) }
        }
        out.family("framegraph_node_model_swaps_total", .counter, "Network nodes: model switches during the run (--hot-swap).")
        for n in report.nodes { if let swaps = n.modelSwaps { out.sample("framegraph_node_model_swaps_total", labels(n), Double(swaps)) } }
        out.family("framegraph_node_queued_max", .gauge, "Most frames a clocked sink held at once.")
        for n in report.nodes { out.sample("framegraph_node_queued_max", labels(n), Double(n.queuedMax)) }

        // Histograms from the nodes' own (fixed-memory) histograms: the buckets the report's
        // percentiles are read from.
        out.family("framegraph_node_latency_seconds", .histogram, "Time per frame inside each node.")
        for n in report.nodes {
            guard let node = byName[n.name] else { continue }
            out.histogram("framegraph_node_latency_seconds", labels(n), node.counters.snapshot.latency)
        }
        out.family("framegraph_node_end_to_end_latency_seconds", .histogram, "Capture-to-output latency of new frames at each sink.")
        for n in report.nodes where n.endToEnd != nil {
            guard let node = byName[n.name] else { continue }
            out.histogram("framegraph_node_end_to_end_latency_seconds", labels(n), node.counters.snapshot.endToEnd)
        }
        out.family("framegraph_end_to_end_latency_seconds", .histogram, "Capture-to-output latency of the run's output (stats endToEnd).")
        let primary = RunReport.primarySink(among: nodes)
        out.histogram("framegraph_end_to_end_latency_seconds", [:], primary?.counters.snapshot.endToEnd ?? LatencyHistogram())

        out.family("framegraph_stream_reconnects_total", .counter, "Times a camera or network stream came back after a loss.")
        for n in report.nodes { if let c = n.connection { out.sample("framegraph_stream_reconnects_total", ["stream": n.name], Double(c.reconnects)) } }
        if let s = extras.server {
            out.family("framegraph_serve_clients", .gauge, "Connections to the monitoring server now.")
            out.sample("framegraph_serve_clients", [:], Double(s.clients))
            out.family("framegraph_serve_picture_clients", .gauge, "Connections streaming pictures now.")
            out.sample("framegraph_serve_picture_clients", [:], Double(s.pictureClients))
            let serve: [(String, String, Int)] = [
                ("framegraph_serve_requests_total", "Requests answered.", s.requests),
                ("framegraph_serve_refused_total", "Connections refused: too many clients (503).", s.refused),
                ("framegraph_serve_unauthorized_total", "Requests without the token (401).", s.unauthorized),
                ("framegraph_serve_pictures_sent_total", "Pictures sent to streaming clients.", s.picturesSent),
                ("framegraph_serve_pictures_dropped_total", "Pictures skipped for a client that had not taken the previous one.", s.picturesDropped),
                ("framegraph_serve_events_dropped_total", "Events skipped for a client whose buffer was full.", s.eventsDropped),
            ]
            for (name, help, value) in serve {
                out.family(name, .counter, help)
                out.sample(name, [:], Double(value))
            }
        }
        return out.text
    }

    /// The sources whose frames reach `node`, comma-separated (a source: its own name).
    static func streams(_ node: Node?) -> String {
        guard let node else { return "" }
        if let source = node as? SourceNode { return source.name }
        return node.upstreamSources.map(\.name).joined(separator: ",")
    }

    /// A number as Prometheus reads it.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    enum Kind: String { case counter, gauge, histogram }

    /// Lines being written, family by family.
    struct Exposition {
        var text = ""

        mutating func family(_ name: String, _ kind: Kind, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
        }

        mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
            text += name + Self.labelText(labels) + " " + MetricsText.format(value) + "\n"
        }

        mutating func histogram(_ name: String, _ labels: [String: String], _ h: LatencyHistogram) {
            for bound in MetricsText.bucketBounds {
                var l = labels
                l["le"] = MetricsText.format(bound)
                sample(name + "_bucket", l, Double(h.count(atOrBelow: bound)))
            }
            var l = labels
            l["le"] = "+Inf"
            sample(name + "_bucket", l, Double(h.count))
            sample(name + "_sum", labels, h.sum)
            sample(name + "_count", labels, Double(h.count))
        }

        static func labelText(_ labels: [String: String]) -> String {
            guard !labels.isEmpty else { return "" }
            let order = ["node", "kind", "stream", "mode", "fps", "le"]
            let keys = labels.keys.sorted { (order.firstIndex(of: $0) ?? 99, $0) < (order.firstIndex(of: $1) ?? 99, $1) }
            return "{" + keys.map { "\($0)=\"\(escape(labels[$0] ?? ""))\"" }.joined(separator: ",") + "}"
        }

        static func escape(_ value: String) -> String {
            var out = ""
            for c in value {
                switch c {
                case "\\": out += "\\\\"
                case "\"": out += "\\\""
                case "\n": out += "\\n"
                default: out.append(c)
                }
            }
            return out
        }
    }
}
