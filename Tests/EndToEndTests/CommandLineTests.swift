import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphFilters
import FrameGraphMedia
import FrameGraphPipelines
import Testing
import TestSupport

/// The `framegraph` command as a user runs it: outputs checked with FrameGraph's decoder (and ffprobe
/// when present), statistics checked against the schedule, bad input checked for one clear line.
@Suite(.serialized) struct CommandLineTests {
    let cli = TestEnvironment.cli

    func framegraph(_ args: [String], timeout: Double = 120, whileRunning: ((Process) -> Void)? = nil) throws -> CommandResult {
        try #require(FileManager.default.isExecutableFile(atPath: cli), "build the CLI first: swift build --build-tests")
        return try runCommand(cli, args, timeout: timeout, whileRunning: whileRunning)
    }

    func stats(_ url: URL) throws -> RunReport {
        try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: url))
    }

    /// Frame count and timestamps as ffprobe reads them (nil when ffprobe is absent).
    func probe(_ path: String) throws -> (frames: Int, times: [Double])? {
        guard let ffprobe = ffprobePath else { return nil }
        let r = try runCommand(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time",
                                         "-of", "csv=p=0", path])
        let times = r.stdout.split(separator: "\n").compactMap { line in
            Double(line.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "")
        }
        return (times.count, times)
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func transcodeOfflineKeepsEveryFrameAtTheRequestedSizeAndRate() throws {
        let clip = try TestClips.person()
        let dir = TestEnvironment.scratch("cli-transcode")
        let output = dir.appendingPathComponent("o.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", clip, "--output", output,
                                "--mode", "offline", "--stats", statsURL.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("frames: in 77"))
        let (reader, frames) = try TestEnvironment.decodeAll(output)
        #expect(frames.count == 77)
        #expect(reader.width == 256 && reader.height == 256)
        // Offline keeps the source's own timestamps (Matroska's millisecond times, a shade off 30 fps).
        let source = try TestEnvironment.decodeAll(clip).frames
        #expect(abs(reader.frameRate - 30) < 0.05)
        for (f, s) in zip(frames, source) { #expect(abs(f.mediaTime - s.mediaTime) < 1e-3) }
        if let p = try probe(output) {
            #expect(p.frames == 77)
            #expect(zip(p.times, p.times.dropFirst()).allSatisfy { abs($1 - $0 - 1.0 / 30) < 2e-3 })
        }
        let s = try stats(statsURL)
        #expect(s.framesIn == 77 && s.framesOut == 77 && s.droppedBusy == 0 && s.droppedLate == 0)
        #expect(s.nodes.map(\.name) == ["source", "small", "output"])
        // The run's own CPU (first frame to the end) is part of the process's, which also spent some on start-up.
        let runCPU = try #require(s.runCPUSeconds)
        #expect(runCPU > 0 && runCPU < s.cpuSeconds, "run \(runCPU) s, process \(s.cpuSeconds) s")
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func swiftGraphAndPipelineFileGiveTheSameOutput() throws {
        let clip = try TestClips.person()
        let dir = TestEnvironment.scratch("cli-same")
        let fromFile = dir.appendingPathComponent("file.mp4").path
        let fromCode = dir.appendingPathComponent("code.mp4").path
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", clip, "--output", fromFile,
                                "--set", "output.threads=1", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        // The same graph, written with addTarget / -->.
        let source = FileSource(name: "source", path: clip)
        source --> Resize(name: "small", width: 256, height: 256, method: .area)
               --> FileSink(name: "output", path: fromCode, settings: .init(crf: 23, preset: "veryfast", threads: 1))
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.framesOut == 77)
        let a = try TestEnvironment.decodeAll(fromFile).frames.map { $0.packedBytes() }
        let b = try TestEnvironment.decodeAll(fromCode).frames.map { $0.packedBytes() }
        #expect(a.count == 77 && a == b)
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func liveSlowRunInRealTimeMatchesTheScheduleWithinTolerance() throws {
        // 77 frames at 30 fps through a 50 ms node: the exact schedule (see SchedulerTests) admits
        // every other frame, 39 of 77, and writes one frame per tick. Real threads on a shared machine
        // jitter, so allow ±4 admitted frames and ±3 output frames.
        let dir = TestEnvironment.scratch("cli-live-slow")
        let output = dir.appendingPathComponent("o.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let trace = dir.appendingPathComponent("trace.json")
        let r = try framegraph(["run", "pipelines/slow.fg", "--input", try TestClips.person(), "--output", output,
                                "--mode", "live", "--stats", statsURL.path, "--trace", trace.path])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try stats(statsURL)
        #expect(s.framesIn == 77)
        #expect(s.admitted + s.droppedBusy == 77)
        // Each 50 ms job spans 1.5 frame periods: one frame, or two when the job or the clock runs late,
        // arrives while it runs. Bounds from the node's measured times, not the machine's speed.
        let net = try #require(s.nodes.first { $0.name == "net" })
        #expect(s.droppedBusy >= s.admitted - 1, "admitted \(s.admitted), dropped \(s.droppedBusy)")
        #expect(s.droppedBusy <= ScheduleBounds.maxDroppedBusy(admitted: s.admitted, node: net, period: 1.0 / 30))
        #expect(abs(s.framesOut - 77) <= 3, "out \(s.framesOut)")
        #expect(s.framesOut == s.admitted - s.droppedLate + s.duplicated)
        #expect(ScheduleBounds.maxEndToEndMilliseconds(s) >= s.endToEnd.max, "end-to-end max \(s.endToEnd.max) ms")
        #expect(try TestEnvironment.decodeAll(output).frames.count == s.framesOut)
        // The trace is valid JSON with one span per slow prediction on the worker's track.
        let events = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [[String: Any]])
        let slowSpans = events.filter { ($0["name"] as? String) == "net" && ($0["ph"] as? String) == "X" }
        #expect(slowSpans.count == s.admitted)
        #expect(events.filter { ($0["name"] as? String) == "dropped-busy" }.count == s.droppedBusy)
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func offlineSlowRunDropsNothing() throws {
        let dir = TestEnvironment.scratch("cli-offline-slow")
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/slow.fg", "--input", try TestClips.person(), "--set", "net.ms=5",
                                "--output", dir.appendingPathComponent("o.mp4").path, "--stats", statsURL.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try stats(statsURL)
        #expect(s.framesIn == 77 && s.admitted == 77 && s.droppedBusy == 0 && s.framesOut == 77)
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func ctrlCFinalizesAPlayableFileAndWritesStats() throws {
        let dir = TestEnvironment.scratch("cli-interrupt")
        let output = dir.appendingPathComponent("o.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/slow.fg", "--input", try TestClips.person(), "--output", output,
                                "--mode", "live", "--loop", "--stats", statsURL.path]) { process in
            usleep(1_500_000)
            kill(process.processIdentifier, SIGINT)
        }
        #expect(r.status == 130, "\(r.stderr)")
        #expect(r.stderr.contains("stopping"))
        let s = try stats(statsURL)
        #expect(s.interrupted)
        #expect(s.framesOut > 20)
        let frames = try TestEnvironment.decodeAll(output).frames
        #expect(frames.count == s.framesOut)
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func cutMP4KeepsTheFramesBeforeTheDamage() throws {
        let dir = TestEnvironment.scratch("cli-cut")
        let whole = dir.appendingPathComponent("whole.mp4").path
        _ = try framegraph(["run", "pipelines/transcode.fg", "--input", try TestClips.person(), "--output", whole,
                            "--set", "small.width=640", "--set", "small.height=480", "--quiet"])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = dir.appendingPathComponent("cut.mp4").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let output = dir.appendingPathComponent("o.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", cut, "--output", output, "--stats", statsURL.path])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one clear line: \(r.stderr)")
        #expect(r.stderr.contains(cut) && r.stderr.contains("at byte"))
        let s = try stats(statsURL)
        #expect(s.framesOut > 10 && s.framesOut < 77)
        #expect(try TestEnvironment.decodeAll(output).frames.count == s.framesOut)
    }

    @Test func badInputGivesOneClearLineAndStatus2() throws {
        let dir = TestEnvironment.scratch("cli-bad")
        let text = dir.appendingPathComponent("notes.mp4").path
        try "hello".write(toFile: text, atomically: true, encoding: .utf8)
        let typo = dir.appendingPathComponent("typo.fg").path
        try "source = file path=x.mp4\nsmall = resize width=256 hieght=256\nsource -> small\n".write(toFile: typo, atomically: true, encoding: .utf8)
        let unknown = dir.appendingPathComponent("unknown.fg").path
        try "source = file path=x.mp4\nnet = colorise\nsource -> net\n".write(toFile: unknown, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (["run", "pipelines/transcode.fg", "--input", "/no/such/clip.mp4"], "/no/such/clip.mp4: no such file"),
            (["run", "pipelines/transcode.fg", "--input", text], "\(text): open input"),
            (["run", typo], "\(typo):2:26: node 'small' (resize) has no option 'hieght' (did you mean 'height'?)"),
            (["run", unknown], "\(unknown):2:7: unknown node type 'colorise'"),
            (["run", "pipelines/nope.fg"], "pipelines/nope.fg: no such file"),
            (["run", "pipelines/transcode.fg", "--mode", "fast"], "--mode expects live or offline"),
            (["frobnicate"], "unknown command 'frobnicate'"),
        ]
        for (args, expected) in cases {
            let r = try framegraph(args, timeout: 30)
            #expect(r.status == 2, "\(args): status \(r.status)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(args): \(r.stderr)")
            #expect(r.stderr.contains(expected), "\(args): \(r.stderr)")
        }
    }

    @Test func helpShowsExamples() throws {
        let r = try framegraph(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("framegraph run pipelines/transcode.fg"))
        let nodes = try framegraph(["nodes"])
        #expect(nodes.stdout.contains("resize (filter)") && nodes.stdout.contains("ports: foreground, background, mask"))
    }

    /// `framegraph run` parses its options from the run options' one table (RunOptionSpec.all, which the
    /// C library reads too): `--help` lists each, in the table's order, with its value word and range.
    @Test func runHelpListsEveryOptionOfTheRunOptionsTable() throws {
        let help = try framegraph(["run", "--help"]).stdout
        var searchFrom = help.startIndex
        for spec in RunOptionSpec.all {
            let flag = (spec.short.map { "-\($0), " } ?? "") + "--" + spec.name
            let word: String
            switch spec.value {
            case .none: word = ""
            case .text(let metavar): word = " " + metavar
            case .number, .integer: word = " N"
            case .choice(let words): word = " " + words.joined(separator: "|")
            }
            let line = try #require(help.range(of: "\n  \(flag)\(word)\n", range: searchFrom..<help.endIndex), "--\(spec.name) in its place: \(help)")
            searchFrom = line.upperBound
            if case .integer(let r) = spec.value {
                let next = help[line.upperBound...].prefix { $0 != "\n" }
                #expect(next.contains("[\(r.lowerBound)…\(r.upperBound)"), "--\(spec.name): \(next)")
            }
        }
    }
}

/// Node options seen through the CLI: start/duration windows, PNG every Nth frame, MKV output.
@Suite(.serialized) struct NodeOptionTests {
    @Test(.enabled(if: TestClips.canMakeMoving, "needs ffmpeg, to make its clip"))
    func startAndDurationCutAWindowIntoMKV() throws {
        // A clip whose every frame differs from its neighbours, so that the window's first frame is known.
        let clip = try TestClips.moving()
        let dir = TestEnvironment.scratch("cli-window")
        let output = dir.appendingPathComponent("o.mkv").path
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/transcode.fg", "--input", clip,
                                                     "--output", output, "--set", "source.start=1", "--set", "source.duration=1", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let (reader, frames) = try TestEnvironment.decodeAll(output)
        #expect(frames.count == 30)
        #expect(reader.width == 256)
        // The window starts at the clip's frame 30: compare with a direct decode of frame 30, in RGB
        // (the output keeps the source's full-range tag, so its Y'CbCr bytes differ from a limited-range scale).
        let originals = try TestEnvironment.decodeAll(clip).frames
        func scaled(_ frame: Frame, method: Scaler.Method = .area) throws -> Frame {
            let rgb = Frame.make(.rgb24, width: 256, height: 256)
            try Scaler(method: method).scale(frame, into: rgb)
            return rgb
        }
        let written = try scaled(frames[0], method: .bilinear)
        /// Mean absolute difference of the written first frame from the clip's frame `index`, over `rows`.
        func difference(_ index: Int, rows: [Int]) throws -> Int {
            let original = try scaled(originals[index])
            return withExtendedLifetime((written, original)) {  // rows point into the frames
                let total = rows.map { y in zip(written.row(y), original.row(y)).map { abs(Int($0) - Int($1)) }.reduce(0, +) }.reduce(0, +)
                return total / (rows.count * written.row(0).count)
            }
        }
        let meanDifference = try difference(30, rows: [128])
        #expect(meanDifference < 6, "first frame of the window should be the clip's frame 30")
        // And not one of its neighbours: over the whole picture, frame 30 is the closest of 28 … 32.
        let around = try [28, 29, 30, 31, 32].map { try difference($0, rows: Array(0..<256)) }
        #expect(around.indices.allSatisfy { $0 == 2 || around[$0] > around[2] }, "differences from frames 28 … 32: \(around)")
    }

    @Test func pngSinkWritesEveryNthFrameOfAPattern() throws {
        let dir = TestEnvironment.scratch("cli-png")
        let pipeline = dir.appendingPathComponent("png.fg").path
        try """
        src  = pattern frames=25 width=320 height=240 format=rgb24
        snap = png path="\(dir.path)/f-%03d.png" every=10
        src -> snap
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try runCommand(TestEnvironment.cli, ["run", pipeline, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".png") }.sorted()
        #expect(files == ["f-000.png", "f-010.png", "f-020.png"])
        let frame = try #require(try TestEnvironment.decodeAll(dir.appendingPathComponent("f-020.png").path).frames.first)
        #expect(PatternSource.readStamp(from: frame) == 20)
    }
}

/// The portrait segmentation pipeline as a user runs it, with the model fetched into models/cache.
@Suite(.serialized) struct PortraitPipelineTests {
    static let cached = FileManager.default.fileExists(atPath: TestEnvironment.root.appendingPathComponent("models/cache/selfie_segmentation.tflite").path)

    @Test(.enabled(if: cached, "needs models/cache (tools/models/fetch_mediapipe_models.sh)"),
          .enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func portraitSegmentKeepsEveryFrameAndWritesAPlayableFile() throws {
        let dir = TestEnvironment.scratch("cli-portrait")
        let output = dir.appendingPathComponent("o.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/portrait-segment.fg", "--input", try TestClips.person(),
                                                     "--output", output, "--stats", statsURL.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: statsURL))
        #expect(s.framesIn == 77 && s.framesOut == 77 && s.droppedBusy == 0)
        let (reader, frames) = try TestEnvironment.decodeAll(output)
        #expect(frames.count == 77 && reader.width == 640 && reader.height == 480)
    }

    /// `precision=int8` as a user sets it, and `model compare` as a user checks it on the sample clip.
    @Test(.enabled(if: cached && TestEnvironment.portraitSample != nil, "needs models/cache and samples/media/portrait.mp4 (tools/make-samples.sh)"))
    func portraitSegmentRunsInInt8AndCompareReportsTheMasksOverlap() throws {
        let sample = try #require(TestEnvironment.portraitSample)
        let dir = TestEnvironment.scratch("cli-portrait-int8")
        let output = dir.appendingPathComponent("o.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/portrait-segment.fg", "--input", sample, "--set", "net.precision=int8",
                                                     "--output", output, "--stats", statsURL.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: statsURL))
        #expect(s.framesIn == 300 && s.framesOut == 300 && s.droppedBusy == 0)
        let compare = try runCommand(TestEnvironment.cli, ["model", "compare", "models/cache/selfie_segmentation.tflite", sample, sample, "--frames", "30"])
        #expect(compare.status == 0, "\(compare.stderr)")
        #expect(compare.stdout.contains("float32 against int8, 60 frames of 2 file(s)"), "\(compare.stdout)")
        #expect(compare.stdout.contains("float32's own mask from one frame to the next"), "\(compare.stdout)")
        if !compare.stdout.contains("which this CPU lacks") {
            #expect(compare.stdout.contains("convolutions in 8-bit integers") && compare.stdout.contains("frames below 0.99: 0")
                    && compare.stdout.contains("clips below 0.99: 0 of 2"), "\(compare.stdout)")
        }
        let wrong = try runCommand(TestEnvironment.cli, ["run", "pipelines/portrait-segment.fg", "--input", sample, "--set", "net.precision=int4"])
        #expect(wrong.status == 2 && wrong.stderr.contains("precision"), "\(wrong.stderr)")
    }

    @Test func aModelThatIsNotAnImageModelIsRejectedBeforeRunning() throws {
        let dir = TestEnvironment.scratch("cli-bad-model")
        let fake = dir.appendingPathComponent("fake.tflite").path
        try Data("not a model at all, just text".utf8).write(to: URL(fileURLWithPath: fake))
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/measure-segment.fg", "--set", "net.model=\(fake)",
                                                     "--input", TestEnvironment.portraitSample ?? "samples/media/portrait.mp4"])
        #expect(r.status == 2)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(r.stderr.contains("fake.tflite") && r.stderr.contains("net"), "\(r.stderr)")
    }
}

/// The colorize pipelines as a user runs them.
@Suite(.serialized) struct ColorizePipelineTests {
    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func colorizeImageWritesAColourPNGOfThePhotosSize() throws {
        let photo = try TestClips.photo(at: 5)
        let dir = TestEnvironment.scratch("cli-colorize-image")
        let output = dir.appendingPathComponent("c.png").path
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/colorize-image.fg", "--input", photo, "--output", output, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let (_, frames) = try TestEnvironment.decodeAll(output)
        let png = try #require(frames.first)
        let (_, original) = try TestEnvironment.decodeAll(photo)
        #expect(png.width == original[0].width && png.height == original[0].height)
        // Colour, not grey: a good share of pixels have channels that differ.
        var coloured = 0, total = 0
        withExtendedLifetime(png) {  // rows point into the frame
            for y in stride(from: 0, to: png.height, by: 4) {
                let row = png.row(y)
                for x in stride(from: 0, to: png.width, by: 4) {
                    let (r, g, b) = (Int(row[3 * x]), Int(row[3 * x + 1]), Int(row[3 * x + 2]))
                    if max(r, g, b) - min(r, g, b) > 12 { coloured += 1 }
                    total += 1
                }
            }
        }
        #expect(Double(coloured) / Double(total) > 0.2, "\(coloured) of \(total) sampled pixels are coloured")
    }

    @Test(.enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"),
          .enabled(if: TestEnvironment.isOptimisedBuild, "live colorization needs an optimised build: swift test -c release -Xswiftc -enable-testing (as scripts/test.sh runs it)"))
    func colorizeFileLiveKeepsTheFrameRate() throws {
        let dir = TestEnvironment.scratch("cli-colorize-live")
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try runCommand(TestEnvironment.cli, ["run", "pipelines/colorize-file.fg", "--mode", "live", "--input", try TestClips.person(),
                                                     "--output", dir.appendingPathComponent("o.mp4").path, "--stats", statsURL.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: statsURL))
        #expect(s.skippedTicks == 0)
        // One output frame per tick for the clip's 2.57 s (77 frames at 30 fps), late ticks included.
        #expect(s.framesOut >= 74 && s.framesOut <= 80, "out \(s.framesOut)")
        let net = try #require(s.nodes.first { $0.kind == "network" })
        #expect(net.processed + net.droppedBusy == s.framesIn)
        #expect(net.droppedBusy <= ScheduleBounds.maxDroppedBusy(admitted: net.processed, node: net, period: 1.0 / 30),
                "dropped-busy \(s.droppedBusy) of \(s.framesIn), network max \(net.latency.max) ms")
    }
}

/// `framegraph model info|bench|run` as a user runs them.
@Suite(.serialized) struct ModelCommandTests {
    static let model = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite")

    @Test(.enabled(if: model != nil, "needs the MediaPipe models (tools/models/fetch_mediapipe_models.sh models/cache)"))
    func infoBenchAndRunDescribeTimeAndReproduceTheModel() throws {
        let path = try #require(Self.model)
        let info = try runCommand(TestEnvironment.cli, ["model", "info", path])
        #expect(info.status == 0)
        #expect(info.stdout.contains("input 'input_1': [1, 256, 256, 3]") && info.stdout.contains("CONV_2D ×43"))
        #expect(info.stdout.contains("parameters: 106401"))
        let bench = try runCommand(TestEnvironment.cli, ["model", "bench", path, "--runs", "10", "--warmup", "2"])
        #expect(bench.status == 0)
        #expect(bench.stdout.contains("prediction over 10 runs: median") && bench.stdout.contains("CONV_2D"))
        let dir = TestEnvironment.scratch("cli-model-run")
        let golden = TestEnvironment.root.appendingPathComponent("Tests/Golden")
        let run = try runCommand(TestEnvironment.cli, ["model", "run", path, "--input-rgb", golden.appendingPathComponent("selfie_segmentation-0.input.rgb").path,
                                                       "--output-dir", dir.path])
        #expect(run.status == 0, "\(run.stderr)")
        let ours = try Data(contentsOf: dir.appendingPathComponent("activation_10.f32")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let reference = try Data(contentsOf: golden.appendingPathComponent("selfie_segmentation-0.activation_10.f32")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(ours.count == reference.count)
        #expect(zip(ours, reference).map { abs($0 - $1) }.max() ?? 1 <= 1e-4)
        let wrong = try runCommand(TestEnvironment.cli, ["model", "run", path, "--input-rgb", golden.appendingPathComponent("face_landmark-0.input.rgb").path,
                                                         "--output-dir", dir.path])
        #expect(wrong.status == 2 && wrong.stderr.contains("input 'input_1': expected 196608 bytes"), "\(wrong.stderr)")
    }
}
