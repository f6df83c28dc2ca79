import Foundation
import FrameGraph
import Testing
import TestSupport

/// "Nothing lost, nothing crashes", as a user (or an attacker) would try it with the CLI: every case
/// checks the exit status, the one-line message, that no input changed (checksum before and after),
/// and that an output is either absent or complete and playable. Inputs are made by the test (a
/// small clip written with FrameGraph's own encoder), so nothing here needs ../shared.
@Suite(.serialized) struct SafetyTests {
    let cli = TestEnvironment.cli

    func framegraph(_ args: [String], timeout: Double = 60, whileRunning: ((Process) -> Void)? = nil) throws -> CommandResult {
        try #require(FileManager.default.isExecutableFile(atPath: cli), "build the CLI first: swift build --build-tests")
        return try runCommand(cli, args, timeout: timeout, whileRunning: whileRunning)
    }

    /// A 2 s, 30 fps, 320×240 clip of stamped pattern frames, made with the CLI (pattern → encode).
    func makeClip(_ dir: URL, name: String = "v.mp4", frames: Int = 60) throws -> String {
        let pipeline = dir.appendingPathComponent("make.fg").path
        let path = dir.appendingPathComponent(name).path
        try "source = pattern width=320 height=240 frames=\(frames)\nout = encode path=\(path)\nsource -> out\n"
            .write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", pipeline, "--quiet"])
        try #require(r.status == 0, "making the clip: \(r.stderr)")
        return path
    }

    func checksum(_ path: String) -> Int {
        FileManager.default.contents(atPath: path).map { $0.hashValue } ?? 0
    }

    func frameCount(_ path: String) throws -> Int {
        try TestEnvironment.decodeAll(path).frames.count
    }

    /// Files in `dir` other than `keep`, hidden temporaries included.
    func strayFiles(_ dir: URL, keep: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !keep.contains($0) }
    }

    @Test func anOutputThatNamesAnInputIsRefusedBeforeAnythingOpens() throws {
        let dir = TestEnvironment.scratch("safety-same-file")
        let clip = try makeClip(dir)
        let before = checksum(clip)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link.mp4").path, withDestinationPath: clip)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let o = dir.appendingPathComponent("o.mp4").path
        let cases: [(args: [String], expected: String)] = [
            (["--output", clip], "would overwrite"),
            (["--output", dir.appendingPathComponent("link.mp4").path], "would overwrite"),
            (["--output", dir.appendingPathComponent("sub/../v.mp4").path], "would overwrite"),
            (["--set", "output.path=\(clip)"], "would overwrite"),
            (["--output", o, "--stats", clip], "--stats would overwrite"),
            (["--output", o, "--trace", clip], "the trace would overwrite"),
            (["--output", o, "--trace", o], "both write this file"),
            (["--output", o, "--stats", o], "both write this file"),
        ]
        for c in cases {
            for command in ["run", "check"] {
                let r = try framegraph([command, "pipelines/transcode.fg", "--input", clip] + c.args)
                #expect(r.status == 2, "\(command) \(c.args): status \(r.status) \(r.stderr)")
                #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(c.expected), "\(c.args): \(r.stderr)")
                #expect(checksum(clip) == before, "\(c.args) changed the input")
                #expect(!FileManager.default.fileExists(atPath: o), "\(c.args) created an output")
            }
        }
        // A png sink whose pattern names the input.
        let png = dir.appendingPathComponent("png.fg").path
        try "source = file path=\(clip)\nsnap = png path=\(clip)\nsource -> snap\n".write(toFile: png, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", png])
        #expect(r.status == 2 && r.stderr.contains("would overwrite"), "\(r.stderr)")
        #expect(checksum(clip) == before)
        #expect(try strayFiles(dir, keep: ["v.mp4", "link.mp4", "sub", "make.fg", "png.fg"]).isEmpty)
    }

    @Test func twoSinksOnOnePathAreRefusedByCheck() throws {
        let dir = TestEnvironment.scratch("safety-two-sinks")
        let clip = try makeClip(dir)
        let out = dir.appendingPathComponent("o.mp4").path
        let pipeline = dir.appendingPathComponent("two.fg").path
        try "source = file path=\(clip)\na = encode path=\(out)\nb = encode path=\(dir.path)/./o.mp4\nsource -> a\nsource -> b\n"
            .write(toFile: pipeline, atomically: true, encoding: .utf8)
        for command in ["check", "run"] {
            let r = try framegraph([command, pipeline])
            #expect(r.status == 2 && r.stderr.contains("both write this file"), "\(command): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func concurrentWritersLeaveOneCompleteFile() throws {
        let dir = TestEnvironment.scratch("safety-concurrent")
        let clip = try makeClip(dir, frames: 90)
        let out = dir.appendingPathComponent("o.mp4").path
        // Both processes run at the same time (started one after the other from this thread:
        // Foundation's Process is not safe to launch from two threads at once).
        let processes = (0..<2).map { _ in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: cli)
            p.arguments = ["run", "pipelines/transcode.fg", "--input", clip, "--output", out, "--quiet"]
            p.currentDirectoryURL = TestEnvironment.root
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            return p
        }
        for p in processes { try p.run() }
        for p in processes { p.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0])
        // Whichever rename came last, the file is one whole encode: every frame, no duplicated index.
        #expect(try frameCount(out) == 90)
        #expect(try strayFiles(dir, keep: ["v.mp4", "o.mp4", "make.fg"]).isEmpty, "temporary files left behind")
    }

    @Test func optionValuesOutOfRangeAreOneLineNamingNodeOptionAndRange() throws {
        let dir = TestEnvironment.scratch("safety-options")
        let clip = try makeClip(dir)
        let before = checksum(clip)
        let o = dir.appendingPathComponent("o.mp4").path
        let cases: [(pipeline: String, args: [String], expected: String)] = [
            ("pipelines/slow.fg", ["--set", "net.ms=1e308"], "framegraph: --set net.ms=1e308: node 'net': option 'ms': must be from 0 to 60000, got 1e308"),
            ("pipelines/transcode.fg", ["--set", "source.start=1e15"], "node 'source': option 'start': must be from 0 to 10000000"),
            ("pipelines/transcode.fg", ["--set", "source.start=5"], "past the end"),
            ("pipelines/transcode.fg", ["--set", "small.width=0"], "option 'width': must be from 1 to 16384, got 0"),
            ("pipelines/transcode.fg", ["--set", "output.crf=99"], "option 'crf': must be from 0 to 63"),
            ("pipelines/transcode.fg", ["--set", "output.crf=60"], "option 'crf': 60 is outside h264's 0…51"),
            ("pipelines/transcode.fg", ["--set", "small.method=fast"], "expected one of bilinear, area, bicubic, nearest"),
            ("pipelines/transcode.fg", ["--fps", "1e-9"], "--fps expects a number from 0.1 to 1000"),
            ("pipelines/transcode.fg", ["--fps", "nan"], "--fps expects a number"),
            ("pipelines/transcode.fg", ["--duration", "-1"], "--duration expects a number"),
            ("pipelines/transcode.fg", ["--camera", "/dev/video99", "--camera-fps", "1e9"], "--camera-fps expects a number from 0.1 to 1000, got '1e9'"),
            ("pipelines/transcode.fg", ["--model-budget", "0"], "--model-budget expects an integer from 1"),
            // --set reaches the camera that --camera made of the file source (it used to be dropped).
            ("pipelines/transcode.fg", ["--camera", "/dev/video99", "--set", "source.buffers=1"], "option 'buffers': must be from 2 to 32, got 1"),
            ("pipelines/transcode.fg", ["--latency", "fast"], "--latency expects auto or milliseconds"),
        ]
        for c in cases {
            let input = c.args.contains("--camera") ? [] : ["--input", clip]
            let r = try framegraph(["run", c.pipeline] + input + ["--output", o] + c.args)
            #expect(r.status == 2, "\(c.args): status \(r.status)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(c.expected), "\(c.args): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: o))
        }
        // A PNG pattern with an absurd field width.
        let png = dir.appendingPathComponent("png.fg").path
        try "source = file path=\(clip)\nsnap = png path=\(dir.path)/f-%099999999999d.png\nsource -> snap\n"
            .write(toFile: png, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", png])
        #expect(r.status == 2 && r.stderr.contains("wider than %032d"), "\(r.stderr)")
        #expect(checksum(clip) == before)
    }

    @Test func outputsAreLocalFilesOnly() throws {
        let dir = TestEnvironment.scratch("safety-network")
        let clip = try makeClip(dir)
        for target in ["tcp://127.0.0.1:9/x.mkv", "udp://127.0.0.1:9", "pipe:1.mp4", "http://127.0.0.1/x.mp4"] {
            let r = try framegraph(["run", "pipelines/transcode.fg", "--input", clip, "--output", target])
            #expect(r.status == 2 && r.stderr.contains("local files only"), "\(target): \(r.stderr)")
        }
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", "tcp://127.0.0.1:9/x.mp4",
                                "--output", dir.appendingPathComponent("o.mp4").path])
        #expect(r.status == 2 && r.stderr.contains("local file"), "\(r.stderr)")
    }

    @Test func fifosAndFoldersAreRefusedWithoutBlocking() throws {
        let dir = TestEnvironment.scratch("safety-fifo")
        let fifo = dir.appendingPathComponent("pipe").path
        let fifoModel = dir.appendingPathComponent("pipe.tflite").path
        #expect(mkfifo(fifo, 0o644) == 0 && mkfifo(fifoModel, 0o644) == 0)
        let o = dir.appendingPathComponent("o.mp4").path
        let cases: [([String], String)] = [
            (["run", "pipelines/transcode.fg", "--input", fifo, "--output", o], "a FIFO (named pipe), not a regular file"),
            (["run", fifo], "a FIFO (named pipe), not a regular file"),
            (["run", "pipelines/portrait-segment.fg", "--input", fifo, "--output", o], "FIFO"),
            (["model", "info", fifoModel], "is a FIFO (named pipe), not a model file"),
            (["model", "info", dir.path + "/x.tflite"], "model not found"),
            (["run", "pipelines/transcode.fg", "--input", dir.path, "--output", o], "is a folder, not a regular file"),
        ]
        for (args, expected) in cases {
            let r = try framegraph(args, timeout: 20)
            #expect(r.status == 2, "\(args): status \(r.status)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(expected), "\(args): \(r.stderr)")
            #expect(!r.stderr.contains("NSCocoaErrorDomain") && !r.stderr.contains("Error Domain"))
        }
        // A background image that is a FIFO.
        let clip = try makeClip(dir)
        let r = try framegraph(["run", "pipelines/portrait-segment.fg", "--input", clip, "--output", o,
                                "--set", "matte.mode=image", "--set", "matte.image=\(fifo)"], timeout: 20)
        #expect(r.status == 2 && r.stderr.contains("FIFO"), "\(r.stderr)")
    }

    @Test func crlfAndByteOrderMarkPipelinesAreRead() throws {
        let dir = TestEnvironment.scratch("safety-crlf")
        let clip = try makeClip(dir)
        let o = dir.appendingPathComponent("o.mp4").path
        let text = "# made on Windows\r\nsource = file path=\(clip)\r\nsmall = resize width=64 height=48\r\nout = encode path=\(o)\r\n\r\nsource -> small -> out\r\n"
        let pipeline = dir.appendingPathComponent("crlf.fg").path
        try Data([0xEF, 0xBB, 0xBF] + Array(text.utf8)).write(to: URL(fileURLWithPath: pipeline))
        let r = try framegraph(["run", pipeline, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = try TestEnvironment.decodeAll(o)
        #expect(frames.frames.count == 60 && frames.reader.width == 64 && frames.reader.height == 48)
    }

    @Test func unconnectedNodesAndLoopsAreErrorsNamingTheNodes() throws {
        let dir = TestEnvironment.scratch("safety-unconnected")
        let clip = try makeClip(dir)
        let o = dir.appendingPathComponent("o.mp4").path
        let cases: [(String, String)] = [
            ("source = file path=\(clip)\nspare = resize width=8 height=8\nout = encode path=\(o)\nsource -> out\n",
             ":2:1: node 'spare' is not connected to any source"),
            ("source = file path=\(clip)\na = resize width=8 height=8\nb = resize width=8 height=8\nout = encode path=\(o)\nsource -> out\na -> b -> a\n",
             "nodes 'a', 'b' are not connected to any source"),
            ("source = file path=\(clip)\na = resize width=8 height=8\nb = blend\nout = encode path=\(o)\nsource -> b.foreground\nsource -> b.background\nb -> a -> b.mask\nb -> out\n",
             "frames would flow in a circle through 'a', 'b'"),
        ]
        for (text, expected) in cases {
            let pipeline = dir.appendingPathComponent("p.fg").path
            try text.write(toFile: pipeline, atomically: true, encoding: .utf8)
            let r = try framegraph(["check", pipeline])
            #expect(r.status == 2 && r.stderr.contains(expected), "\(r.stderr)")
        }
    }

    @Test func aTenThousandNodeChainIsRefusedWithTheLimit() throws {
        let dir = TestEnvironment.scratch("safety-chain")
        let clip = try makeClip(dir)
        var text = "source = file path=\(clip)\n"
        for i in 0..<10_000 { text += "n\(i) = grayscale\n" }
        text += "out = null\nsource -> " + (0..<10_000).map { "n\($0)" }.joined(separator: " -> ") + " -> out\n"
        let pipeline = dir.appendingPathComponent("chain.fg").path
        try text.write(toFile: pipeline, atomically: true, encoding: .utf8)
        for command in ["check", "run"] {
            let r = try framegraph([command, pipeline])
            #expect(r.status == 2 && r.stderr.contains("more than the limit of \(RunOptions.maxNodesDefault)"), "\(command): \(r.stderr)")
        }
        // A long chain within the limit runs.
        var ok = "source = file path=\(clip)\n"
        for i in 0..<900 { ok += "n\(i) = crop width=320 height=240\n" }
        ok += "out = null\nsource -> " + (0..<900).map { "n\($0)" }.joined(separator: " -> ") + " -> out\n"
        try ok.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", pipeline, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Whether process `pid` catches SIGINT yet (its handler is installed): bit 1 of SigCgt in /proc.
    func catchesSIGINT(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
              let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << (UInt64(SIGINT) - 1)) != 0
    }

    @Test func anInterruptBeforeTheRunStartsEndsWith130AndSaysSoInTheStats() throws {
        let dir = TestEnvironment.scratch("safety-early-interrupt")
        let clip = try makeClip(dir)
        let o = dir.appendingPathComponent("o.mp4").path
        let stats = dir.appendingPathComponent("stats.json")
        // SIGINT as soon as the process catches it (the first thing main does): before the pipeline
        // is read and the model loads, so before any frame. On a loaded machine this test's own
        // polling can see the handler late, after the run began (then the run ends 130 as well, but
        // started): up to five attempts to land the signal early.
        var json: [String: Any]?
        for _ in 0..<5 {
            try? FileManager.default.removeItem(atPath: o)
            let r = try framegraph(["run", "pipelines/portrait-segment.fg", "--input", clip, "--output", o, "--stats", stats.path]) { p in
                let deadline = Date().addingTimeInterval(10)
                while !catchesSIGINT(p.processIdentifier) && Date() < deadline { usleep(1000) }
                kill(p.processIdentifier, SIGINT)
            }
            #expect(r.status == 130, "\(r.stderr)")
            json = try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any]
            if json?["started"] as? Bool == false { break }
        }
        #expect(json?["interrupted"] as? Bool == true)
        #expect(json?["started"] as? Bool == false)
        #expect(json?.keys.contains("failure") == true)
        #expect(!FileManager.default.fileExists(atPath: o), "nothing is written for a run that never started")
    }

    @Test func theStatsAlwaysCarryFailure() throws {
        let dir = TestEnvironment.scratch("safety-failure-field")
        let clip = try makeClip(dir)
        let stats = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", clip, "--output", dir.appendingPathComponent("o.mp4").path,
                                "--stats", stats.path, "--quiet"])
        #expect(r.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any]
        #expect(json?.keys.contains("failure") == true && json?["failure"] is NSNull)
        #expect(json?["droppedCorrupt"] as? Int == 0 && json?["nonFinite"] as? Int == 0)
    }

    /// A copy of `clip` with a tenth of its bytes, from 40 % in, overwritten with noise (the
    /// container's framing and some frames); returns its path.
    func damage(_ clip: String, into url: URL) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
        var rng = SplitMix64(seed: 7)
        let start = bytes.count * 2 / 5
        for i in start..<(start + bytes.count / 10) { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
        try Data(bytes).write(to: url)
        return url.path
    }

    /// A 150-frame clip in `container`, damaged by ``damage(_:into:)``, transcoded with stats: the
    /// run's result, its report, the damaged input and the output.
    func transcodeDamaged(_ container: String, scratch: String) throws -> (r: CommandResult, report: RunReport, damaged: String, output: String) {
        let dir = TestEnvironment.scratch(scratch)
        let clip = try makeClip(dir, name: "whole.\(container)", frames: 150)
        let damaged = try damage(clip, into: dir.appendingPathComponent("damaged.\(container)"))
        let o = dir.appendingPathComponent("o.mp4").path
        let stats = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", damaged, "--output", o, "--stats", stats.path, "--quiet"])
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: stats))
        return (r, report, damaged, o)
    }

    @Test func damageInsideAFileIsCountedAndTheRestIsRead() throws {
        // MPEG-TS: the demuxer finds its way back after damage (188-byte packets with sync bytes).
        let (r, report, damaged, o) = try transcodeDamaged("ts", scratch: "safety-damaged-middle")
        #expect(r.status == 0, "the file was read to its end: \(r.stderr)")
        #expect(report.droppedCorrupt > 0, "lost frames must be counted")
        #expect(report.framesIn + report.droppedCorrupt >= 140 && report.framesIn < 150, "in \(report.framesIn), corrupt \(report.droppedCorrupt)")
        #expect(r.stderr.contains("warning:") && r.stderr.contains("damaged frame") && r.stderr.contains(damaged), "\(r.stderr)")
        #expect(try frameCount(o) == report.framesOut)
    }

    @Test func damageThatEndsReadingEarlyIsAnErrorThatKeepsTheFramesBefore() throws {
        // Matroska with one cluster: after damage inside it the demuxer cannot resynchronise.
        let (r, report, _, o) = try transcodeDamaged("mkv", scratch: "safety-damaged-mkv")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("reading stopped at") && r.stderr.contains("at byte"), "\(r.stderr)")
        #expect(report.framesOut > 30 && report.framesOut < 150 && report.failure != nil)
        #expect(try frameCount(o) == report.framesOut)
    }
}
