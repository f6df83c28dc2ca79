import Foundation
import FrameGraph
import Testing
import TestSupport

/// A virtual X server for one test (Debian's xvfb, installed by the setup), on a display number it
/// picks itself (-displayfd), stopped when the test ends.
final class VirtualDisplay {
    let process = Process()
    /// ":N"
    let name: String
    static let width = 1280, height = 720

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = ["-displayfd", "1", "-screen", "0", "\(Self.width)x\(Self.height)x24", "-nolisten", "tcp"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Xvfb writes its display number once it accepts connections.
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n") && Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw VirtualDisplayError(message: "Xvfb did not report a display number (got '\(text)')")
        }
        name = ":\(number)"
    }

    deinit {
        // SIGKILL: a test thread may have SIGTERM blocked, and the mask is inherited by the server.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Runs an X client (xwd, xdotool) against this display.
    func client(_ tool: String, _ arguments: [String]) throws -> CommandResult {
        try runCommand("/usr/bin/\(tool)", arguments, environment: ["DISPLAY": name], timeout: 30)
    }

    /// The whole screen as packed RGB (xwd, converted by the ffmpeg tool).
    func screenshot(into folder: URL) throws -> [UInt8] {
        let xwd = folder.appendingPathComponent("screen.xwd").path, raw = folder.appendingPathComponent("screen.rgb").path
        let grab = try client("xwd", ["-root", "-silent", "-display", name, "-out", xwd])
        guard grab.status == 0 else { throw VirtualDisplayError(message: "xwd failed: \(grab.stderr)") }
        let convert = try runCommand(ffmpegPath ?? "/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-i", xwd, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        guard convert.status == 0 else { throw VirtualDisplayError(message: "ffmpeg could not read the screenshot: \(convert.stderr)") }
        return Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }
}

struct VirtualDisplayError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The preview window for real: a live pipeline shows a stamped pattern in an SDL2 window on a
/// virtual X server; a screenshot of the screen must hold the pipeline's own frame, pixel for
/// pixel, and a `q` key press must end the run cleanly with its statistics.
@Suite(.serialized) struct PreviewWindowTests {
    @Test func theWindowShowsThePipelinesFramesAndQEndsTheRun() throws {
        let display = try VirtualDisplay()
        let folder = TestEnvironment.scratch("preview-window")
        let pipeline = folder.appendingPathComponent("preview-test.fg").path
        try """
        source = pattern width=640 height=480 format=rgb24 fps=30 frames=100000
        window = display
        source -> window
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let stats = folder.appendingPathComponent("stats.json").path
        var screen: [UInt8] = []
        var sawWindow = false
        let result = try runCommand(TestEnvironment.cli, ["run", pipeline, "--mode", "live", "--stats", stats, "--quiet"],
                                    environment: ["DISPLAY": display.name], timeout: 60) { _ in
            // Wait for the window (its title names the pipeline), let it show frames, then look and press q.
            sawWindow = (try? display.client("xdotool", ["search", "--sync", "--name", "FrameGraph: preview-test"]))?.status == 0
            usleep(1_500_000)
            // On a loaded machine a screenshot can catch the window while it is being drawn: look
            // again (up to 10 times) until one shows a whole pattern frame.
            for _ in 0..<10 {
                screen = (try? display.screenshot(into: folder)) ?? []
                if (try? self.problem(in: screen, shown: Int.max)) == nil { break }
                usleep(300_000)
            }
            _ = try? display.client("xdotool", ["search", "--name", "FrameGraph: preview-test", "windowfocus", "--sync", "key", "q"])
        }
        #expect(sawWindow, "no window titled 'FrameGraph: preview-test' appeared")
        #expect(result.status == 0, "exit \(result.status): \(result.stderr)")
        // Stopped by the key, with statistics: the window took frames on the clock.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        let nodes = try #require(json["nodes"] as? [[String: Any]])
        let window = try #require(nodes.first { $0["name"] as? String == "window" })
        let shown = window["emitted"] as? Int ?? 0
        #expect(shown >= 20, "frames given to the window: \(shown)")

        let problem = try self.problem(in: screen, shown: shown)
        #expect(problem == nil, "\(problem ?? "")")
    }

    /// What is wrong with `screen` (nil: nothing): the window is found on the black screen (every
    /// pattern pixel has blue >= 128) and must show, 1:1, the pattern frame whose number is stamped
    /// in it, one of the first `shown` frames.
    func problem(in screen: [UInt8], shown: Int) throws -> String? {
        let w = VirtualDisplay.width, h = VirtualDisplay.height
        guard screen.count == w * h * 3 else { return "screenshot of \(screen.count) bytes" }
        var minX = w, minY = h, maxX = -1, maxY = -1
        for y in 0..<h {
            for x in 0..<w where screen[(y * w + x) * 3 + 2] >= 100 {
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
            }
        }
        guard maxX - minX + 1 == 640 && maxY - minY + 1 == 480 else { return "window content at \(minX),\(minY)–\(maxX),\(maxY)" }
        let shot = Frame.make(.rgb24, width: 640, height: 480)
        for y in 0..<480 {
            let row = shot.row(y)
            for x in 0..<640 { for c in 0..<3 { row[x * 3 + c] = screen[((minY + y) * w + minX + x) * 3 + c] } }
        }
        guard let number = PatternSource.readStamp(from: shot) else { return "no frame number stamped in the window" }
        guard number > 0 && number <= shown else { return "stamp \(number), frames shown \(shown)" }
        let expected = try patternFrame(number)
        var differing = 0
        for y in 0..<480 {
            let a = shot.row(y), b = expected.row(y)
            for i in a.indices where abs(Int(a[i]) - Int(b[i])) > 2 { differing += 1 }
        }
        return differing == 0 ? nil : "\(differing) of \(640 * 480 * 3) samples differ from pattern frame \(number)"
    }

    /// Frame `n` of the pattern the pipeline above shows.
    func patternFrame(_ n: Int) throws -> Frame {
        let source = PatternSource(width: 640, height: 480, format: .rgb24, frameCount: n + 1)
        let context = RunContext(options: RunOptions())
        try source.start(context: context)
        var last: Frame?
        while let f = try source.nextFrame(context: context) { last = f }
        return try #require(last)
    }

    @Test func withoutADisplayTheWindowIsAClearErrorAndPreviewAWarning() throws {
        let folder = TestEnvironment.scratch("preview-nodisplay")
        let pipeline = folder.appendingPathComponent("win.fg").path
        try "source = pattern frames=5\nwindow = display\nsource -> window\n".write(toFile: pipeline, atomically: true, encoding: .utf8)
        let noDisplay = ["DISPLAY": "", "WAYLAND_DISPLAY": ""]
        let failed = try runCommand(TestEnvironment.cli, ["run", pipeline, "--quiet"], environment: noDisplay)
        #expect(failed.status != 0)
        let lines = failed.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("window") && lines[0].contains("no display to open a window on"), "\(failed.stderr)")

        let transcode = folder.appendingPathComponent("t.fg").path
        let output = folder.appendingPathComponent("o.mp4").path
        try "source = pattern frames=5\noutput = encode path=\(output)\nsource -> output\n".write(toFile: transcode, atomically: true, encoding: .utf8)
        let previewed = try runCommand(TestEnvironment.cli, ["run", transcode, "--preview", "--quiet"], environment: noDisplay)
        #expect(previewed.status == 0, "\(previewed.stderr)")
        #expect(previewed.stderr.contains("warning: preview window 'preview': no display"), "\(previewed.stderr)")
        // A preview writes only what the command line names: the pipeline's own o.mp4 is not recorded.
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func aDisplayThatCannotBeReachedIsNamedInTheError() throws {
        let folder = TestEnvironment.scratch("preview-baddisplay")
        let pipeline = folder.appendingPathComponent("win.fg").path
        try "source = pattern frames=5\nwindow = display\nsource -> window\n".write(toFile: pipeline, atomically: true, encoding: .utf8)
        let failed = try runCommand(TestEnvironment.cli, ["run", pipeline, "--quiet"], environment: ["DISPLAY": ":987", "WAYLAND_DISPLAY": ""])
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("cannot open a window"), "\(failed.stderr)")
    }
}
