import Foundation
import FrameGraph

/// The dashboard page `--serve` shows at `/`: plain HTML with the picture and the numbers (complete
/// without JavaScript: the still picture and a table of the figures as they were when it loaded), and
/// a small script served beside it (`/dashboard.js`, no CDN, no build step) that keeps them live: the
/// MJPEG picture, the status line, per-node load, a rolling timeline per second and the latency histogram.
/// A list of links (`/?node=NAME`) picks the node whose picture is shown, with or without JavaScript.
enum Dashboard {
    /// The page, with the figures of `monitor`'s run as of now, showing `node`'s picture (nil: the output's).
    static func page(monitor: RunMonitor, node: String? = nil) -> String {
        let (report, finished) = monitor.currentReport()
        let title = escape(monitor.runTitle)
        var rows = ""
        for n in report.nodes {
            let busy = report.elapsedSeconds > 0 ? min(100, Double(n.latency.count) * n.latency.mean / 1000 / report.elapsedSeconds * 100) : 0
            rows += "<tr><td>\(escape(n.name))</td><td>\(escape(n.kind))</td><td>\(n.received)</td><td>\(n.processed)</td><td>\(n.emitted)</td>"
            rows += "<td>\(n.droppedBusy)</td><td>\(n.droppedLate)</td><td>\(n.duplicated)</td>"
            rows += String(format: "<td>%.0f%%</td><td>%.2f</td><td>%.2f</td></tr>\n", busy, n.latency.p50, n.latency.p99)
        }
        let models = report.nodes.compactMap { n in
            n.modelSource.map { "<li>\(escape(n.name)): \(escape($0))\(n.modelSwaps.map { $0 > 0 ? " (swapped \($0)x)" : "" } ?? "")</li>" }
        }
        let modelList = models.isEmpty ? "" : "<h2>Models</h2>\n<ul id=\"models\">\n\(models.joined(separator: "\n"))\n</ul>\n"
        let shown = node ?? monitor.defaultPictureNode
        let query = node.map { "?node=" + queryEscape($0) } ?? ""
        let picture = shown == nil
            ? "<p>This run writes no pictures.</p>"
            : "<img id=\"picture\" src=\"/picture.jpg\(escape(query))\" data-stream=\"/video.mjpg\(escape(query))\" alt=\"the picture of \(escape(shown ?? ""))\" width=\"640\">"
        let choices = monitor.pictureNodes.map { name -> String in
            let label = escape(name) + (name == monitor.defaultPictureNode ? " (output)" : "")
            let href = name == monitor.defaultPictureNode ? "/" : "/?node=" + queryEscape(name)
            return name == shown ? "<li><strong>\(label)</strong></li>" : "<li><a href=\"\(escape(href))\">\(label)</a></li>"
        }
        let nodeList = choices.count > 1 ? "<h2>Pictures</h2>\n<ul id=\"picture-nodes\">\n\(choices.joined(separator: "\n"))\n</ul>\n" : ""
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>FrameGraph: \(title)</title>
        <style>
        body { font-family: sans-serif; margin: 1em; background: #fafafa; color: #222; }
        #status { font-family: monospace; background: #222; color: #eee; padding: .4em .6em; white-space: pre-wrap; }
        table { border-collapse: collapse; font-size: 90%; }
        td, th { border: 1px solid #ccc; padding: .2em .5em; text-align: right; }
        td:first-child, td:nth-child(2), th { text-align: left; }
        .row { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
        svg text { font-size: 11px; font-family: sans-serif; }
        #picture { max-width: 100%; height: auto; background: #000; }
        </style>
        </head>
        <body>
        <h1>FrameGraph: \(title)</h1>
        <p id="status">\(escape(report.progressLine()))\(finished ? " (finished)" : "")</p>
        <div class="row">
        <div>\(picture)<br><a href="/picture.jpg\(escape(query))">still picture</a> · <a href="/video.mjpg\(escape(query))">MJPEG</a> · <a href="/metrics">metrics</a> · <a href="/stats.json">stats</a> · <a href="/events">events</a>
        \(nodeList)</div>
        <div>
        <h2>Run</h2>
        <table id="summary">
        <tr><th>mode</th><td>\(escape(report.mode)) at \(String(format: "%.3g", report.fps)) fps</td></tr>
        <tr><th>elapsed</th><td id="s-elapsedSeconds">\(String(format: "%.1f s", report.elapsedSeconds))</td></tr>
        <tr><th>frames in</th><td id="s-framesIn">\(report.framesIn)</td></tr>
        <tr><th>admitted</th><td id="s-admitted">\(report.admitted)</td></tr>
        <tr><th>dropped busy</th><td id="s-droppedBusy">\(report.droppedBusy)</td></tr>
        <tr><th>dropped late</th><td id="s-droppedLate">\(report.droppedLate)</td></tr>
        <tr><th>repeated</th><td id="s-duplicated">\(report.duplicated)</td></tr>
        <tr><th>frames out</th><td id="s-framesOut">\(report.framesOut)</td></tr>
        <tr><th>end-to-end p50 / p99</th><td id="s-endToEnd">\(String(format: "%.1f / %.1f ms", report.endToEnd.p50, report.endToEnd.p99))</td></tr>
        <tr><th>presentation delay</th><td id="s-presentationDelayMs">\(String(format: "%.1f ms", report.presentationDelayMs))</td></tr>
        </table>
        </div>
        </div>
        \(modelList)<h2>Nodes</h2>
        <table id="nodes">
        <tr><th>node</th><th>kind</th><th>in</th><th>done</th><th>out</th><th>busy drops</th><th>late</th><th>repeated</th><th>load</th><th>p50 ms</th><th>p99 ms</th></tr>
        \(rows)</table>
        <div class="row">
        <div><h2>Timeline (per second)</h2><svg id="timeline" width="600" height="160" role="img" aria-label="frames per second"></svg></div>
        <div><h2>End-to-end latency</h2><svg id="histogram" width="400" height="160" role="img" aria-label="latency histogram"></svg></div>
        </div>
        <script src="/dashboard.js"></script>
        </body>
        </html>

        """
    }

    /// A node name as a query value (letters, digits and `-._~` as they are; the rest percent-encoded).
    static func queryEscape(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// HTML-escaped text.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// The page's script: polls /stats.json and /metrics once a second, switches the picture to MJPEG.
    static let script = #"""
    "use strict";
    (function () {
      const ns = "http://www.w3.org/2000/svg";
      const picture = document.getElementById("picture");
      if (picture) picture.src = picture.getAttribute("data-stream") || "/video.mjpg";
      const history = [];
      let previous = null;
      const series = [["admitted", "#2a7"], ["droppedBusy", "#d83"], ["droppedLate", "#c33"], ["duplicated", "#88c"]];
      function el(name, attrs, text) {
        const e = document.createElementNS(ns, name);
        for (const k in attrs) e.setAttribute(k, attrs[k]);
        if (text !== undefined) e.textContent = text;
        return e;
      }
      function cell(row, text) { const td = document.createElement("td"); td.textContent = text; row.appendChild(td); }
      function line(r) {
        return "in " + r.framesIn + "  admitted " + r.admitted + "  dropped-busy " + r.droppedBusy + "  late " + r.droppedLate +
          "  dup " + r.duplicated + "  out " + r.framesOut + "  " + r.achievedFps.toFixed(1) + " fps  e2e p50 " + r.endToEnd.p50.toFixed(1) + " ms" +
          (r.finished === false ? "" : " (finished)");
      }
      function nodes(r) {
        const table = document.getElementById("nodes");
        while (table.rows.length > 1) table.deleteRow(1);
        for (const n of r.nodes) {
          const row = table.insertRow();
          const load = r.elapsedSeconds > 0 ? Math.min(100, n.latency.count * n.latency.mean / 1000 / r.elapsedSeconds * 100) : 0;
          [n.name, n.kind, n.received, n.processed, n.emitted, n.droppedBusy, n.droppedLate, n.duplicated,
           load.toFixed(0) + "%", n.latency.p50.toFixed(2), n.latency.p99.toFixed(2)].forEach(v => cell(row, String(v)));
        }
      }
      function timeline() {
        const svg = document.getElementById("timeline");
        while (svg.firstChild) svg.removeChild(svg.firstChild);
        const w = 600, h = 140, n = 60;
        let top = 1;
        for (const s of history) top = Math.max(top, series.reduce((a, [k]) => a + s[k], 0));
        const bw = w / n;
        history.forEach((s, i) => {
          let y = h;
          for (const [k, colour] of series) {
            const bh = s[k] / top * (h - 10);
            y -= bh;
            if (bh > 0) svg.appendChild(el("rect", { x: i * bw, y: y, width: bw - 1, height: bh, fill: colour, "class": "bar-" + k }));
          }
        });
        series.forEach(([k, colour], i) => svg.appendChild(el("text", { x: 4 + i * 110, y: h + 16, fill: colour }, k)));
        svg.appendChild(el("text", { x: w - 60, y: 12 }, top + " /s"));
      }
      function histogram(text) {
        const svg = document.getElementById("histogram");
        const re = /^framegraph_end_to_end_latency_seconds_bucket\{le="([^"]+)"\} (\d+)/gm;
        const buckets = [];
        let m;
        while ((m = re.exec(text)) !== null) buckets.push([m[1], Number(m[2])]);
        if (buckets.length === 0) return;
        while (svg.firstChild) svg.removeChild(svg.firstChild);
        const counts = buckets.map(([le, c], i) => [le, c - (i > 0 ? buckets[i - 1][1] : 0)]);
        const top = Math.max(1, ...counts.map(c => c[1]));
        const bw = 400 / counts.length, h = 130;
        counts.forEach(([le, c], i) => {
          const bh = c / top * (h - 10);
          svg.appendChild(el("rect", { x: i * bw, y: h - bh, width: bw - 2, height: bh, fill: "#47a", "class": "bucket" }));
          svg.appendChild(el("text", { x: i * bw, y: h + 14 }, le === "+Inf" ? "inf" : String(Math.round(Number(le) * 1000))));
        });
        svg.appendChild(el("text", { x: 300, y: 12 }, "ms (upper bound)"));
      }
      async function tick() {
        try {
          const r = await (await fetch("/stats.json", { cache: "no-store" })).json();
          document.getElementById("status").textContent = line(r);
          for (const k of ["framesIn", "admitted", "droppedBusy", "droppedLate", "duplicated", "framesOut"]) {
            const td = document.getElementById("s-" + k);
            if (td) td.textContent = String(r[k]);
          }
          const set = (id, text) => { const td = document.getElementById(id); if (td) td.textContent = text; };
          set("s-elapsedSeconds", r.elapsedSeconds.toFixed(1) + " s");
          set("s-endToEnd", r.endToEnd.p50.toFixed(1) + " / " + r.endToEnd.p99.toFixed(1) + " ms");
          set("s-presentationDelayMs", r.presentationDelayMs.toFixed(1) + " ms");
          nodes(r);
          if (previous !== null && r.finished === false) {
            const s = {};
            for (const [k] of series) s[k] = Math.max(0, r[k] - previous[k]);
            history.push(s);
            if (history.length > 60) history.shift();
          }
          previous = r;
          timeline();
          histogram(await (await fetch("/metrics", { cache: "no-store" })).text());
        } catch (e) {
          document.getElementById("status").textContent += " (not reachable)";
        }
      }
      tick();
      setInterval(tick, 1000);
    })();
    """#
}
