import Foundation
import FrameGraph

/// `framegraph report`: one self-contained HTML page about a run (inline SVG, no script, no
/// network): the summary, per-node timing bars, the per-second drop/late/repeat timeline, the latency
/// histogram and the slowest frames. The statistics alone give the summary, the node bars and the
/// latency percentiles; with the trace the page adds the timeline, the histogram and the slowest frames.
///
/// ```swift
/// let html = RunReportPage.render(report: report, trace: try TraceSummary(data: traceData, outputNode: "output"), title: "stats.json")
/// ```
public enum RunReportPage {
    /// The page.
    public static func render(report: RunReport, trace: TraceSummary?, title: String) -> String {
        let t = Dashboard.escape(title)
        var html = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>FrameGraph run report: \(t)</title>
        <style>
        body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1100px; }
        table { border-collapse: collapse; font-size: 90%; margin-bottom: 1em; }
        td, th { border: 1px solid #ccc; padding: .2em .5em; text-align: right; }
        th:first-child, td:first-child { text-align: left; }
        svg text { font-size: 11px; font-family: sans-serif; }
        .note { color: #666; font-size: 90%; }
        </style>
        </head>
        <body>
        <h1>FrameGraph run report</h1>
        <p class="note">\(t)</p>

        """
        html += summary(report)
        html += "<h2>Time per frame in each node</h2>\n" + nodeBars(report)
        html += "<h2>Drops, late frames and repeats over time</h2>\n" + timeline(report, trace)
        html += "<h2>Latency histogram</h2>\n" + histogram(report, trace)
        html += "<h2>Slowest frames</h2>\n" + slowest(trace)
        html += "</body>\n</html>\n"
        return html
    }

    static func summary(_ r: RunReport) -> String {
        var rows: [(String, String)] = [
            ("mode", "\(r.mode) at \(String(format: "%.3g", r.fps)) fps"),
            ("elapsed", String(format: "%.2f s (%.2f s CPU%@)", r.elapsedSeconds, r.cpuSeconds,
                               r.runCPUSeconds.map { String(format: ", %.2f s since the first frame", $0) } ?? "")),
            ("frames in", "\(r.framesIn)"), ("admitted", "\(r.admitted)"), ("dropped busy", "\(r.droppedBusy)"),
            ("dropped late", "\(r.droppedLate)"), ("repeated", "\(r.duplicated) (\(r.duplicatedBusy) while the network was busy)"),
            ("skipped ticks", "\(r.skippedTicks)"), ("frames out", String(format: "%d (%.1f fps)", r.framesOut, r.achievedFps)),
            ("end-to-end latency", String(format: "p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms", r.endToEnd.p50, r.endToEnd.p95, r.endToEnd.p99, r.endToEnd.max)),
        ]
        if r.mode == "live" { rows.append(("presentation delay", String(format: "%.1f ms (%d changes)", r.presentationDelayMs, r.presentationDelayChanges.count))) }
        if r.droppedRate > 0 { rows.append(("dropped to the clock rate", "\(r.droppedRate)")) }
        if r.droppedAtSource > 0 { rows.append(("dropped at source", "\(r.droppedAtSource)")) }
        if r.droppedCorrupt > 0 { rows.append(("lost to damage in files", "\(r.droppedCorrupt)")) }
        if r.nonFinite > 0 { rows.append(("non-finite predictions", "\(r.nonFinite)")) }
        if let f = r.failure { rows.append(("stopped by an error", f.description)) }
        if r.interrupted { rows.append(("interrupted", "stopped early on request")) }
        return "<h2>Summary</h2>\n<table id=\"summary\">\n" + rows.map { "<tr><th>\(Dashboard.escape($0.0))</th><td>\(Dashboard.escape($0.1))</td></tr>\n" }.joined() + "</table>\n"
    }

    /// One row per node: p50 bar, p99 bar (lighter), max tick; counts beside.
    static func nodeBars(_ r: RunReport) -> String {
        let top = max(0.001, r.nodes.map(\.latency.max).max() ?? 0)
        let rowHeight = 22, label = 200, width = 560
        let height = rowHeight * r.nodes.count + 30
        var svg = "<svg id=\"node-bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(label + width + 420)\" height=\"\(height)\">\n"
        for (i, n) in r.nodes.enumerated() {
            let y = i * rowHeight + 4
            let scale = { (ms: Double) in Double(width) * ms / top }
            svg += "<text x=\"0\" y=\"\(y + 13)\">\(Dashboard.escape(n.name)) (\(Dashboard.escape(n.kind)))</text>\n"
            svg += String(format: "<rect class=\"p99\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#9bd\"/>\n", label, y, scale(n.latency.p99))
            svg += String(format: "<rect class=\"p50\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#358\"/>\n", label, y, scale(n.latency.p50))
            svg += String(format: "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#c33\"/>\n", Double(label) + scale(n.latency.max), Double(label) + scale(n.latency.max), y, y + 16)
            svg += String(format: "<text x=\"%d\" y=\"%d\">p50 %.2f · p99 %.2f · max %.2f ms · %d done, %d busy drops</text>\n",
                          label + width + 8, y + 13, n.latency.p50, n.latency.p99, n.latency.max, n.processed, n.droppedBusy)
        }
        svg += "<text x=\"\(label)\" y=\"\(height - 4)\">dark: median, light: p99, red: max (scale 0 … \(String(format: "%.1f", top)) ms)</text>\n</svg>\n"
        return svg
    }

    static func timeline(_ r: RunReport, _ trace: TraceSummary?) -> String {
        guard let trace, !trace.seconds.isEmpty else {
            // Totals only: one stacked bar.
            let parts: [(String, Int, String)] = [("admitted", r.admitted, "#2a7"), ("dropped busy", r.droppedBusy, "#d83"),
                                                  ("dropped late", r.droppedLate, "#c33"), ("repeated", r.duplicated, "#88c")]
            let total = max(1, parts.reduce(0) { $0 + $1.1 })
            var x = 0.0
            var svg = "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"50\">\n"
            for (name, value, colour) in parts where value > 0 {
                let w = 600.0 * Double(value) / Double(total)
                svg += String(format: "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"20\" fill=\"%@\"><title>%@ %d</title></rect>\n", x, w, colour, name, value)
                x += w
            }
            svg += "<text x=\"0\" y=\"40\">admitted \(r.admitted) · dropped busy \(r.droppedBusy) · dropped late \(r.droppedLate) · repeated \(r.duplicated)</text>\n</svg>\n"
            return svg + "<p class=\"note\">The whole run; give --trace TRACE.json (a run with --trace) for the timeline second by second.</p>\n"
        }
        let n = trace.seconds.count
        let w = 900.0, h = 160.0, bw = w / Double(n)
        let top = Double(max(1, trace.seconds.map { $0.out + $0.droppedBusy }.max() ?? 1))
        var svg = "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(w) + 60)\" height=\"\(Int(h) + 40)\">\n"
        for (i, s) in trace.seconds.enumerated() {
            let x = Double(i) * bw
            let fresh = Double(s.out - s.repeated), rep = Double(s.repeated), busy = Double(s.droppedBusy)
            var y = h
            for (value, colour, name) in [(fresh, "#2a7", "new frames out"), (rep, "#88c", "repeated"), (busy, "#d83", "dropped busy")] where value > 0 {
                let bh = value / top * (h - 10)
                y -= bh
                svg += String(format: "<rect class=\"second\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"><title>second %d: %@ %d</title></rect>\n",
                              x, y, max(0.5, bw - 1), bh, colour, i, name, Int(value))
            }
        }
        svg += String(format: "<text x=\"0\" y=\"%.0f\">per second (0 … %d s): green new frames out, blue repeated, orange dropped busy; top %d</text>\n</svg>\n",
                      h + 20, n, Int(top))
        return svg + "<p class=\"note\">Late frames are counted in the summary (\(r.droppedLate)); the trace does not mark them one by one.</p>\n"
    }

    static func histogram(_ r: RunReport, _ trace: TraceSummary?) -> String {
        guard let trace, !trace.frames.isEmpty else {
            let e = r.endToEnd
            let values = [("p50", e.p50), ("p95", e.p95), ("p99", e.p99), ("max", e.max)]
            let top = max(0.001, e.max)
            var svg = "<svg id=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"110\">\n"
            for (i, (name, v)) in values.enumerated() {
                svg += String(format: "<text x=\"0\" y=\"%d\">%@</text><rect x=\"40\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#47a\"/><text x=\"%.1f\" y=\"%d\">%.2f ms</text>\n",
                              i * 24 + 13, name, i * 24, 500 * v / top, 46 + 500 * v / top, i * 24 + 13, v)
            }
            return svg + "</svg>\n<p class=\"note\">End-to-end percentiles of \(e.count) frames; give --trace for the histogram of every frame.</p>\n"
        }
        var h = LatencyHistogram()
        for f in trace.frames { h.record(f.seconds) }
        let bounds = MetricsText.bucketBounds
        var counts: [Int] = []
        var previous = 0
        for b in bounds {
            let c = h.count(atOrBelow: b)
            counts.append(c - previous)
            previous = c
        }
        counts.append(h.count - previous)
        let top = Double(max(1, counts.max() ?? 1))
        let bw = 50.0
        var svg = "<svg id=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(bw) * counts.count + 20)\" height=\"190\">\n"
        for (i, c) in counts.enumerated() {
            let bh = Double(c) / top * 140
            let label = i < bounds.count ? "≤\(MetricsText.format(bounds[i] * 1000))" : "more"
            svg += String(format: "<rect class=\"bucket\" x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#47a\"><title>%@ ms: %d frames</title></rect>\n",
                          Double(i) * bw, 150 - bh, bw - 4, bh, label, c)
            svg += String(format: "<text x=\"%.0f\" y=\"165\">%@</text><text x=\"%.0f\" y=\"%.0f\">%d</text>\n", Double(i) * bw, label, Double(i) * bw, 146 - bh, c)
        }
        svg += "<text x=\"0\" y=\"185\">time through the graph per frame (first span start to last span end), ms; \(trace.frames.count) frames</text>\n</svg>\n"
        return svg
    }

    static func slowest(_ trace: TraceSummary?) -> String {
        guard let trace, !trace.frames.isEmpty else { return "<p class=\"note\">Give --trace TRACE.json to list the slowest frames.</p>\n" }
        let worst = trace.frames.sorted { $0.seconds > $1.seconds }.prefix(10)
        var html = "<table id=\"slowest\">\n<tr><th>frame</th><th>through the graph</th><th>nodes (ms)</th></tr>\n"
        for f in worst {
            let nodes = f.nodes.map { String(format: "%@ %.2f", Dashboard.escape($0.name), $0.seconds * 1000) }.joined(separator: " · ")
            html += String(format: "<tr><td>%d</td><td>%.2f ms</td><td>%@</td></tr>\n", f.frame, f.seconds * 1000, nodes)
        }
        return html + "</table>\n"
    }
}
