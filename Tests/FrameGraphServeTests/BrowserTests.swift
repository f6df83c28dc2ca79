import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// The dashboard and the report page as a browser shows them: headless Chromium (Debian's
/// `chromium`) takes screenshots (checked non-blank, the live picture changing between two) and dumps
/// the DOM after the page's script ran (checked for the elements it fills in).
/// Debian's chromium, when installed.
let chromiumPath = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite(.serialized, .enabled(if: chromiumPath != nil && Curl.path != nil, "needs chromium and curl (scripts/install-deps.sh installs them)"))
struct BrowserTests {
    static let chromium = chromiumPath

    /// Runs headless Chromium on `url` with `options` (`--screenshot=FILE` or `--dump-dom`); returns stdout.
    static func browse(_ url: String, _ options: [String]) throws -> String {
        let r = try runCommand(chromium ?? "chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                                                        "--window-size=1280,900", "--virtual-time-budget=3000"] + options + [url], timeout: 90)
        return r.stdout
    }

    /// The screenshot's pixels (RGB rows), decoded with FrameGraph's own decoder.
    static func pixels(_ png: URL) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let (_, frames) = try TestEnvironment.decodeAll(png.path)
        let frame = try #require(frames.first)
        let rgb = Frame.make(.rgb24, width: frame.width, height: frame.height)
        try Scaler(method: .bilinear).scale(frame, into: rgb)
        var bytes: [UInt8] = []
        for y in 0..<rgb.height { bytes += rgb.row(y).prefix(rgb.width * 3) }
        return (rgb.width, rgb.height, bytes)
    }

    /// Distinct colours (reduced to 4 bits a channel) in a region: a blank page has one or two.
    static func colours(_ p: (width: Int, height: Int, rgb: [UInt8]), x: Range<Int>, y: Range<Int>) -> Int {
        var seen = Set<Int>()
        for row in y where row < p.height {
            for col in x where col < p.width {
                let i = (row * p.width + col) * 3
                seen.insert(Int(p.rgb[i] >> 4) << 8 | Int(p.rgb[i + 1] >> 4) << 4 | Int(p.rgb[i + 2] >> 4))
            }
        }
        return seen.count
    }

    /// Mean absolute difference of two screenshots in a region.
    static func difference(_ a: (width: Int, height: Int, rgb: [UInt8]), _ b: (width: Int, height: Int, rgb: [UInt8]), x: Range<Int>, y: Range<Int>) -> Double {
        var total = 0, count = 0
        for row in y where row < min(a.height, b.height) {
            for col in x where col < min(a.width, b.width) {
                for c in 0..<3 {
                    total += abs(Int(a.rgb[(row * a.width + col) * 3 + c]) - Int(b.rgb[(row * b.width + col) * 3 + c]))
                    count += 1
                }
            }
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }

    @Test func dashboardShowsTheRunAndItsPictureMoves() throws {
        let folder = TestEnvironment.scratch("browser-dashboard")
        let run = try ServedRunTests.ServedRun(["run", "-e", "pattern width=320 height=240 frames=450 name=cam -> slow ms=50 name=net -> null name=out",
                                                "--mode", "live", "--serve", "127.0.0.1:0", "--quiet", "--duration", "8"])
        defer { _ = run.wait(timeout: 30) }
        let base = try run.base()
        let dom = try Self.browse("\(base)/", ["--dump-dom"])
        // The script filled in the status line, the node table and the timeline.
        #expect(dom.contains("id=\"status\">in "), "status line")
        #expect(dom.contains("<td>net</td>"), "node table")
        #expect(dom.contains("class=\"bar-admitted\""), "timeline bars")
        #expect(dom.contains("class=\"bucket\""), "latency histogram")
        #expect(dom.contains("src=\"/video.mjpg\""), "the picture switched to MJPEG")
        let first = folder.appendingPathComponent("first.png"), second = folder.appendingPathComponent("second.png")
        _ = try Self.browse("\(base)/", ["--screenshot=\(first.path)"])
        usleep(1_500_000)
        _ = try Self.browse("\(base)/", ["--screenshot=\(second.path)"])
        let a = try Self.pixels(first), b = try Self.pixels(second)
        #expect(a.width == 1280 && a.height == 900)
        // The picture (640 wide, below the status line, left) is not blank and changes.
        let picture = (x: 40..<600, y: 160..<560)
        #expect(Self.colours(a, x: picture.x, y: picture.y) > 50, "the picture region is not blank")
        #expect(Self.difference(a, b, x: picture.x, y: picture.y) > 5, "the live picture changed between the screenshots")
    }

    @Test func reportPageRendersEverySection() throws {
        let folder = TestEnvironment.scratch("browser-report")
        let stats = folder.appendingPathComponent("stats.json").path, trace = folder.appendingPathComponent("trace.json").path
        let run = try runCommand(TestEnvironment.cli, ["run", "-e", "pattern width=320 height=240 frames=60 name=cam -> slow ms=50 name=net -> null name=out",
                                                       "--mode", "live", "--quiet", "--stats", stats, "--trace", trace])
        #expect(run.status == 0, "\(run.stderr)")
        let page = folder.appendingPathComponent("report.html")
        let r = try runCommand(TestEnvironment.cli, ["report", stats, "--trace", trace, "-o", page.path])
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        for part in ["id=\"summary\"", "id=\"node-bars\"", "id=\"timeline\"", "class=\"second\"", "id=\"histogram\"", "class=\"bucket\"", "id=\"slowest\""] {
            #expect(html.contains(part), "the page lacks \(part)")
        }
        #expect(!html.contains("<script") && !html.contains("src=") && !html.contains("href="), "self-contained: no script, nothing loaded")
        let dom = try Self.browse(page.absoluteString, ["--dump-dom"])
        #expect(dom.contains("<td>60</td>") || dom.contains(">60<"), "frames in")
        let shot = folder.appendingPathComponent("report.png")
        _ = try Self.browse(page.absoluteString, ["--screenshot=\(shot.path)"])
        let p = try Self.pixels(shot)
        #expect(Self.colours(p, x: 0..<1280, y: 0..<900) > 20, "the report's screenshot is not blank")
        // The statistics alone make a page too; and the report never overwrites what it reads.
        #expect(try runCommand(TestEnvironment.cli, ["report", stats, "-o", folder.appendingPathComponent("plain.html").path]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: stats))
        let overwrite = try runCommand(TestEnvironment.cli, ["report", stats, "--trace", trace, "-o", trace])
        #expect(overwrite.status == 2 && overwrite.stderr.contains("would overwrite"), "\(overwrite.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: stats)) == before)
        let notStats = try runCommand(TestEnvironment.cli, ["report", trace, "-o", folder.appendingPathComponent("x.html").path])
        #expect(notStats.status != 0 && notStats.stderr.contains("not a statistics file"), "\(notStats.stderr)")
    }
}
