import Foundation
import FrameGraph
import FrameGraphResults
import Testing
import TestSupport

/// `framegraph run … --serve` as a user runs it: the metrics at the end of a run are the statistics
/// file's figures, the token is required and never printed, a client that never reads changes nothing.
@Suite(.serialized, .enabled(if: Curl.path != nil, "needs curl (scripts/install-deps.sh installs it)"))
struct ServedRunTests {
    static let token = "served-run-token-0123456789"

    /// A run of the built CLI whose standard error is read while it runs (TestSupport's).
    typealias ServedRun = ServedCLIRun

    static func tokenFile(_ folder: URL) throws -> String {
        let file = folder.appendingPathComponent("token")
        try Data((token + "\n").utf8).write(to: file)
        return file.path
    }

    /// Waits until `path` exists (the statistics file, written once the run has ended).
    static func waitForFile(_ path: String, timeout: Double = 60) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: path) {
            guard Date() < deadline else { throw TestSkip("\(path) was not written") }
            usleep(50_000)
        }
    }

    @Test func metricsAtTheEndAreTheStatsFile() throws {
        let folder = TestEnvironment.scratch("served-run-metrics")
        let stats = folder.appendingPathComponent("stats.json").path
        let run = try ServedRun(["run", "-e", "pattern width=320 height=240 frames=75 name=cam -> slow ms=50 name=net -> null name=out",
                                 "--mode", "live", "--serve", "127.0.0.1:0", "--serve-token-file", try Self.tokenFile(folder),
                                 "--serve-linger", "60", "--stats", stats])
        let base = try run.base()
        let auth = ["-H", "Authorization: Bearer \(Self.token)"]
        // While the run goes: figures so far, not final.
        let during = try Curl.fetch("\(base)/metrics", auth)
        #expect(during.status == 200)
        #expect(sampleValue(during.text, "framegraph_run_finished") == 0)
        #expect(try Curl.fetch("\(base)/metrics").status == 401)
        try Self.waitForFile(stats)
        let after = try Curl.fetch("\(base)/metrics", auth)
        #expect(after.status == 200)
        let text = after.text
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        #expect(sampleValue(text, "framegraph_run_finished") == 1)
        let pairs = [("framegraph_frames_in_total", "framesIn"), ("framegraph_frames_admitted_total", "admitted"),
                     ("framegraph_frames_out_total", "framesOut"), ("framegraph_frames_dropped_busy_total", "droppedBusy"),
                     ("framegraph_frames_dropped_late_total", "droppedLate"), ("framegraph_frames_dropped_rate_total", "droppedRate"),
                     ("framegraph_frames_repeated_total", "duplicated"), ("framegraph_frames_repeated_busy_total", "duplicatedBusy"),
                     ("framegraph_ticks_skipped_total", "skippedTicks"), ("framegraph_cpu_seconds_total", "cpuSeconds"),
                     ("framegraph_run_cpu_seconds_total", "runCPUSeconds"), ("framegraph_elapsed_seconds", "elapsedSeconds")]
        // The numbers as written: the statistics file's text against the exposition's.
        let statsText = try String(contentsOfFile: stats, encoding: .utf8)
        for (metric, key) in pairs {
            let written = statsText.range(of: "\n  \"\(key)\" : [^,\n]+", options: .regularExpression).map {
                String(statsText[$0].split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces)
            }
            let served = text.split(separator: "\n").first { $0.hasPrefix(metric + " ") }.map { String($0.split(separator: " ").last ?? "") }
            #expect(written != nil && served == written, "\(metric) \(served ?? "-") against \(key) \(written ?? "-")")
        }
        #expect((json["framesIn"] as? Int) == 75)
        #expect(try #require(json["droppedBusy"] as? Int) > 0, "a 50 ms node at 30 fps drops while busy")
        // Seconds in the exposition, milliseconds in the file: equal to float64's last digit (ms / 1000 rounds).
        let delay = try #require(sampleValue(text, "framegraph_presentation_delay_seconds"))
        let delayMs = try #require(json["presentationDelayMs"] as? Double)
        #expect(abs(delay - delayMs / 1000) <= 1e-12 * max(1, abs(delay)), "\(delay) s against \(delayMs) ms")
        let e2e = try #require(json["endToEnd"] as? [String: Any])
        #expect(sampleValue(text, "framegraph_end_to_end_latency_seconds_count") == e2e["count"] as? Double)
        for node in try #require(json["nodes"] as? [[String: Any]]) {
            let name = try #require(node["name"] as? String)
            let l = ["node=\"\(name)\""]
            for (metric, key) in [("framegraph_node_frames_received_total", "received"), ("framegraph_node_frames_processed_total", "processed"),
                                  ("framegraph_node_frames_emitted_total", "emitted"), ("framegraph_node_frames_dropped_busy_total", "droppedBusy"),
                                  ("framegraph_node_frames_repeated_total", "duplicated")] {
                #expect(sampleValue(text, metric, labels: l) == node[key] as? Double, "\(name) \(metric)")
            }
            let latency = try #require(node["latency"] as? [String: Any])
            #expect(sampleValue(text, "framegraph_node_latency_seconds_count", labels: l) == latency["count"] as? Double, "\(name)")
        }
        if let promtool = MetricsTextTests.promtool {
            let file = folder.appendingPathComponent("metrics.txt")
            try Data(text.utf8).write(to: file)
            let check = try runCommand("/bin/sh", ["-c", "\(promtool) check metrics < '\(file.path)'"])
            #expect(check.status == 0, "promtool: \(check.stdout)\(check.stderr)")
        }
        // The token ends the lingering server; the run's status is its own.
        #expect(try Curl.fetch("\(base)/stop", ["-X", "POST"] + auth).status == 200)
        #expect(run.wait() == 0)
        #expect(!run.stderr.contains(Self.token) && !run.stdout.contains(Self.token), "the token is never printed")
    }

    @Test func pagePictureAndEventsWhileTheRunGoes() throws {
        let folder = TestEnvironment.scratch("served-run-page")
        let run = try ServedRun(["run", "-e", "pattern width=320 height=240 frames=150 name=cam -> slow ms=10 name=net -> null name=out",
                                 "--mode", "live", "--serve", "127.0.0.1:0", "--quiet"])
        let base = try run.base()
        // Without JavaScript the page holds the status line, the numbers and the still picture.
        let page = try Curl.fetch("\(base)/")
        #expect(page.status == 200)
        for part in ["id=\"status\"", "in ", "admitted", "<img id=\"picture\" src=\"/picture.jpg\"", "<td>net</td>", "/dashboard.js"] {
            #expect(page.text.contains(part), "the page lacks \(part)")
        }
        let script = try Curl.fetch("\(base)/dashboard.js")
        #expect(script.status == 200 && script.text.contains("/video.mjpg"))
        let (status, jpeg) = try Curl.download("\(base)/picture.jpg", to: folder.appendingPathComponent("still.jpg"))
        #expect(status == 200)
        #expect(jpeg.prefix(2) == Data([0xFF, 0xD8]) && jpeg.suffix(2) == Data([0xFF, 0xD9]), "a JPEG")
        let events = try Curl.fetch("\(base)/events", ["-N"], maxTime: 1)
        #expect(events.text.hasPrefix("data: {\"event\":\"running\""), "\(events.text.prefix(200))")
        let stats = try Curl.fetch("\(base)/stats.json")
        #expect(stats.text.contains("\"finished\":false"))
        #expect(try Curl.fetch("\(base)/stop", ["-X", "POST"]).status == 403, "no token, no stop")
        #expect(try Curl.fetch("\(base)/nothing").status == 404)
        #expect(run.wait() == 0)
    }

    @Test(.enabled(if: TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") != nil && TestEnvironment.portraitSample != nil,
                   "needs models/cache (tools/models/fetch_mediapipe_models.sh) and samples/media/portrait.mp4"))
    func eventsCarryEachFramesResults() throws {
        let folder = TestEnvironment.scratch("served-run-events")
        let run = try ServedRun(["run", "face-detect", "--mode", "live", "--duration", "4", "--quiet", "--serve", "0",
                                 "--output", folder.appendingPathComponent("faces.mp4").path])
        let base = try run.base()
        let events = try Curl.fetch("\(base)/events", ["-N"], maxTime: 2)
        let lines = events.text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }
        let results = lines.filter { $0.contains("\"node\":\"faces\"") }
        #expect(results.count >= 10, "\(lines.count) events, \(results.count) from the detector")
        // Each is a results-file line: it decodes with the results file's own reader.
        let decoded = results.compactMap { try? ResultsLines.decode(Data($0.utf8)) }
        #expect(decoded.count == results.count)
        #expect(decoded.contains { !$0.results.detections.isEmpty }, "the portrait clip shows a face")
        #expect(run.wait() == 0)
    }

    @Test func beyondLoopbackATokenIsRequired() throws {
        let r = try runCommand(TestEnvironment.cli, ["run", "-e", "pattern frames=1 -> null", "--serve", "0.0.0.0:0"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--serve-token-file"), "\(r.stderr)")
        let short = try runCommand(TestEnvironment.cli, ["run", "-e", "pattern frames=1 -> null", "--serve", "0", "--serve-token", "short"])
        #expect(short.status == 2)
        #expect(!short.stderr.contains("short\n") && short.stderr.contains("at least 16"), "\(short.stderr)")
    }

    @Test func aClientThatNeverReadsChangesNoCount() throws {
        let folder = TestEnvironment.scratch("served-run-stalled")
        let pipeline = "pattern width=1280 height=720 frames=300 name=cam -> slow ms=12 name=net -> null name=out"
        let plainStats = folder.appendingPathComponent("plain.json").path
        let plain = try runCommand(TestEnvironment.cli, ["run", "-e", pipeline, "--quiet", "--stats", plainStats])
        #expect(plain.status == 0, "\(plain.stderr)")
        let servedStats = folder.appendingPathComponent("served.json").path
        let run = try ServedRun(["run", "-e", pipeline, "--quiet", "--stats", servedStats, "--serve", "0", "--serve-linger", "30",
                                 "--serve-token-file", try Self.tokenFile(folder)])
        let base = try run.base()
        let port = try #require(UInt16(base.split(separator: ":").last ?? ""))
        let stalled = try HTTPServerTests.neverReading(port: port, path: "/video.mjpg", seconds: 20, token: Self.token)
        defer { stalled.terminate() }
        try Self.waitForFile(servedStats)
        let a = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plainStats))) as? [String: Any])
        let b = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: servedStats))) as? [String: Any])
        for key in ["framesIn", "admitted", "framesOut", "droppedBusy", "droppedLate", "duplicated", "skippedTicks"] {
            #expect(a[key] as? Int == b[key] as? Int, "\(key)")
        }
        let names = { (o: [String: Any]) in (o["nodes"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }
        #expect(names(a) == names(b), "watching adds no node to the statistics")
        // The stalled client was served pictures during the run (and had the rest dropped).
        let metrics = try Curl.fetch("\(base)/metrics", ["-H", "Authorization: Bearer \(Self.token)"]).text
        let sent = sampleValue(metrics, "framegraph_serve_pictures_sent_total") ?? 0
        let dropped = sampleValue(metrics, "framegraph_serve_pictures_dropped_total") ?? 0
        #expect(sent + dropped > 10, "sent \(sent), dropped \(dropped)")
        #expect(dropped > 0, "sent \(sent), dropped \(dropped)")
        #expect(try Curl.fetch("\(base)/stop", ["-X", "POST", "-H", "Authorization: Bearer \(Self.token)"]).status == 200)
        #expect(run.wait() == 0)
    }
}
