import Foundation
import FrameGraph
import Testing
import TestSupport

/// The `framegraph` CLI against the emulated camera (Tests/FakeCamera, preloaded into the CLI
/// process only): live runs read back through the frame numbers stamped into the pixels, drops
/// while busy, unplug, reconnect, Ctrl-C, busy and missing devices, and the device listing.
///
/// Runs last about 3 s (the acceptance figures in README.md come from 10 s runs by hand).
@Suite(.serialized, .enabled(if: FakeCamera.available, FakeCamera.skipReason))
struct LiveCameraTests {
    let cli = TestEnvironment.cli
    static let duration = 3.0
    static let hasSegmentationModel = FileManager.default.fileExists(
        atPath: TestEnvironment.root.appendingPathComponent("models/cache/selfie_segmentation.tflite").path)

    /// One CLI run and what it left behind.
    struct Run {
        var result: CommandResult
        var stats: RunReport?
        /// Stamps of the output frames, in order (nil where unreadable).
        var stamps: [UInt32?]
        /// Resident memory samples of the CLI process (bytes), when asked for.
        var memory: [Int]

        var readStamps: [UInt32] { stamps.compactMap { $0 } }
    }

    func run(_ name: String, _ args: [String], environment: [String: String], output: Bool = true,
             sampleMemory: Bool = false, whileRunning: ((Process) -> Void)? = nil) throws -> Run {
        try #require(FileManager.default.isExecutableFile(atPath: cli), "build the CLI first: swift build --build-tests")
        let dir = TestEnvironment.scratch("camera-\(name)")
        let mp4 = dir.appendingPathComponent("out.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        var arguments = args + ["--stats", statsURL.path]
        if output { arguments += ["--output", mp4] }
        let samples = Protected<[Int]>([])
        let result = try runCommand(cli, arguments, environment: environment, timeout: 60) { process in
            whileRunning?(process)
            guard sampleMemory else { return }
            while process.isRunning {
                if let rss = residentBytes(of: process.processIdentifier) { samples.withLock { $0.append(rss) } }
                usleep(100_000)
            }
        }
        let stats = try? JSONDecoder().decode(RunReport.self, from: Data(contentsOf: statsURL))
        var stamps: [UInt32?] = []
        if output, FileManager.default.fileExists(atPath: mp4) {
            stamps = try TestEnvironment.decodeAll(mp4).frames.map { StampReader.read($0) }
        }
        return Run(result: result, stats: stats, stamps: stamps, memory: samples.withLock { $0 })
    }

    /// The checks every live run shares: one output frame per tick at 30 fps, stamps readable and
    /// never going backwards, and the source's counts adding up to what the camera produced.
    func checkLiveRun(_ r: Run, format: String, cameraFPS: Int = 30) throws {
        #expect(r.result.status == 0, "\(r.result.stderr)")
        let s = try #require(r.stats, "no stats: \(r.result.stderr)")
        #expect(s.mode == "live")
        #expect(r.result.stderr.contains("640x480 \(format) → yuv420p at \(cameraFPS) fps"), "\(r.result.stderr)")
        let ticks = s.elapsedSeconds * 30
        #expect(Double(s.framesOut) > ticks * 0.85 && Double(s.framesOut) < ticks * 1.1, "out \(s.framesOut) in \(s.elapsedSeconds) s")
        // The camera produced at its rate: what it produced was delivered or dropped at the source.
        let delivered = s.framesIn + s.droppedAtSource + s.droppedRate
        #expect(Double(delivered) > ticks * 0.8, "in \(s.framesIn) + \(s.droppedAtSource) + \(s.droppedRate) in \(s.elapsedSeconds) s")
        #expect(r.stamps.count == s.framesOut)
        let read = r.readStamps
        #expect(read.count >= r.stamps.count * 95 / 100, "stamps readable in \(read.count) of \(r.stamps.count) frames")
        #expect(zip(read, read.dropFirst()).allSatisfy { $0 <= $1 }, "stamps go backwards: \(read)")
        // Frames in + dropped at the source = frames the camera produced (up to the last one seen,
        // plus the few produced after the last one that reached the output: a few in flight, and
        // those still waiting out the presentation delay D when the run stopped).
        let produced = Int(read.max() ?? 0) + 1
        // (plus what a camera faster than the clock makes in the last output period, thinned to the rate)
        let waiting = Int((s.presentationDelayMs / 1000 * 30).rounded(.up)) + max(0, cameraFPS / 30 - 1)
        #expect(delivered >= produced && delivered <= produced + 4 + waiting,
                "in \(s.framesIn) + dropped at source \(s.droppedAtSource) + to the clock rate \(s.droppedRate) vs \(produced) produced")
        let source = try #require(s.nodes.first { $0.kind == "camera" })
        #expect(source.droppedAtSource == s.droppedAtSource && source.emitted == s.framesIn)
        // New output frames carry distinct stamps; duplicates repeat the previous one.
        #expect(Set(read).count >= s.framesOut - s.duplicated - 2)
        // Nothing queues: latency is bounded by the work this run measured (not by the machine's speed).
        let bound = ScheduleBounds.maxEndToEndMilliseconds(s)
        #expect(s.endToEnd.count > 0)
        #expect(bound >= s.endToEnd.max, "end-to-end p50 \(s.endToEnd.p50) p99 \(s.endToEnd.p99) max \(s.endToEnd.max) ms, bound \(bound) ms")
    }

    @Test func devicesListsTheEmulatedCameraWithFormatsSizesAndIntervals() throws {
        let r = try runCommand(cli, ["devices"], environment: FakeCamera.environment(formats: "YUYV,MJPG", size: "640x480,320x240", fps: "30,15"))
        #expect(r.status == 0, "\(r.stderr)")
        let out = r.stdout
        #expect(out.contains("\(FakeCamera.devicePath): FrameGraph Fake Camera — driver fakecam"), "\(out)")
        #expect(out.contains("YUYV  YUYV 4:2:2") && out.contains("MJPG  Motion-JPEG (compressed)"), "\(out)")
        #expect(out.contains("640x480  30, 15 fps  (intervals 1/30 s, 1/15 s)"), "\(out)")
        #expect(out.contains("320x240  30, 15 fps"), "\(out)")
        #expect(out.contains("camera usable as a source") || out.contains("cameras usable as a source"))
    }

    @Test(.enabled(if: LiveCameraTests.hasSegmentationModel, "needs models/cache/selfie_segmentation.tflite (tools/models/fetch_mediapipe_models.sh)"),
          arguments: ["YUYV", "MJPG"])
    func portraitSegmentationRunsLiveFromTheCamera(format: String) throws {
        // Overlay mode tints the person and keeps the background, so the stamp across the top survives.
        let r = try run("portrait-\(format)", ["run", "pipelines/portrait-segment.fg", "--camera", FakeCamera.devicePath,
                                               "--set", "matte.mode=overlay", "--duration", "\(Self.duration)"],
                        environment: FakeCamera.environment(formats: format))
        try checkLiveRun(r, format: format)
        #expect(r.stats?.nodes.contains { $0.kind == "background" } == true)
    }

    @Test(.enabled(if: TestEnvironment.isOptimisedBuild, "live colorization needs an optimised build: swift test -c release -Xswiftc -enable-testing (as scripts/test.sh runs it)"))
    func colorizeWebcamRunsLiveFromTheCamera() throws {
        // The colorizer keeps each pixel's own lightness, so the black/white stamp survives colouring.
        let r = try run("colorize", ["run", "pipelines/colorize-webcam.fg", "--camera", FakeCamera.devicePath,
                                     "--duration", "\(Self.duration)"],
                        environment: FakeCamera.environment())
        try checkLiveRun(r, format: "YUYV")
        let s = try #require(r.stats)
        #expect(s.skippedTicks == 0)
        let net = try #require(s.nodes.first { $0.kind == "network" })
        #expect(net.processed + net.droppedBusy == s.framesIn)
        #expect(net.droppedBusy <= ScheduleBounds.maxDroppedBusy(admitted: net.processed, node: net, period: 1.0 / 30),
                "dropped-busy \(s.droppedBusy) of \(s.framesIn), network max \(net.latency.max) ms")
    }

    @Test(arguments: ["YUYV", "MJPG"])
    func transcodeRunsLiveFromTheCamera(format: String) throws {
        let r = try run("transcode-\(format)", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath,
                                                "--set", "small.width=640", "--set", "small.height=480", "--duration", "\(Self.duration)"],
                        environment: FakeCamera.environment(formats: format))
        try checkLiveRun(r, format: format)
        #expect(r.stats?.droppedBusy == 0)
    }

    @Test func aSlowNodeDropsAboutHalfTheFramesWithoutLagOrGrowth() throws {
        let r = try run("slow", ["run", "pipelines/slow.fg", "--camera", FakeCamera.devicePath, "--duration", "\(Self.duration)"],
                        environment: FakeCamera.environment(), sampleMemory: true)
        try checkLiveRun(r, format: "YUYV")
        let s = try #require(r.stats)
        // At 30 fps a 50 ms job admits every other frame: each job spans 1.5 periods, so exactly one
        // frame arrives while it runs, or two when the job (or the clock) runs late.
        let slow = try #require(s.nodes.first { $0.kind == "slow" })
        #expect(s.droppedBusy >= s.admitted - 1, "dropped-busy \(s.droppedBusy), admitted \(s.admitted)")
        #expect(s.droppedBusy <= ScheduleBounds.maxDroppedBusy(admitted: s.admitted, node: slow, period: 1.0 / 30),
                "dropped-busy \(s.droppedBusy), admitted \(s.admitted), slow max \(slow.latency.max) ms")
        #expect(s.admitted + s.droppedBusy == s.framesIn)
        // Memory flat: after the first second, resident memory grows by less than 16 MB.
        let settled = Array(r.memory.dropFirst(12))
        if let first = settled.first, let peak = settled.max() {
            #expect(peak - first < 16 << 20, "RSS \(first >> 20) MB → \(peak >> 20) MB")
        }
    }

    @Test func aCameraFasterThanTheGraphHandsOutOnlyTheNewestFrame() throws {
        // 240 fps into a graph whose inline work (two big rescales) takes longer than 1/240 s: the
        // driver's ring fills between calls, older ready frames are skipped, some are lost at the
        // driver, all counted as droppedAtSource; nothing queues, so latency stays low.
        let dir = TestEnvironment.scratch("camera-fast-pipeline")
        let pipeline = dir.appendingPathComponent("heavy.fg")
        try """
        source = camera path=\(FakeCamera.devicePath) fps=240 format=mjpeg
        big    = resize width=4096 height=3072 method=bicubic
        back   = resize width=640 height=480 method=bicubic
        output = encode path=out.mp4
        source -> big -> back -> output
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let r = try run("fast", ["run", pipeline.path, "--duration", "\(Self.duration)"],
                        environment: FakeCamera.environment(formats: "MJPG", fps: "240"))
        try checkLiveRun(r, format: "MJPG", cameraFPS: 240)
        let s = try #require(r.stats)
        #expect(s.droppedAtSource > s.framesIn / 4, "in \(s.framesIn), dropped at source \(s.droppedAtSource)")
        #expect(Double(s.framesIn + s.droppedAtSource + s.droppedRate) > s.elapsedSeconds * 240 * 0.85)
        #expect(r.result.stdout.contains("skipped for a newer one"), "\(r.result.stdout)")
    }

    @Test func unplugEndsTheRunWithAPlayableFileAndStats() throws {
        let r = try run("unplug", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath,
                                   "--set", "small.width=640", "--set", "small.height=480"],
                        environment: FakeCamera.environment(extra: ["FAKECAM_UNPLUG_AFTER": "100"]))
        #expect(r.result.status == 1, "\(r.result.stderr)")
        #expect(r.result.stderr.contains("camera \(FakeCamera.devicePath) was disconnected after 100 frames"), "\(r.result.stderr)")
        let s = try #require(r.stats, "stats not written")
        #expect(s.failure?.node == "source" && s.framesIn == 100)
        #expect(r.stamps.count == s.framesOut && s.framesOut >= 95)
        #expect(r.readStamps.max() == 99)
        #expect(zip(r.readStamps, r.readStamps.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func reconnectWaitsForTheCameraToComeBack() throws {
        let r = try run("reconnect", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--reconnect",
                                      "--set", "small.width=640", "--set", "small.height=480", "--duration", "4"],
                        environment: FakeCamera.environment(extra: ["FAKECAM_UNPLUG_AFTER": "30", "FAKECAM_REPLUG_AFTER_MS": "800"]))
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.result.stderr.contains("was disconnected; waiting for it to come back"), "\(r.result.stderr)")
        #expect(r.result.stderr.contains("is back: 640x480 YUYV"), "\(r.result.stderr)")
        #expect(r.result.stdout.contains("reconnected 1x"), "\(r.result.stdout)")
        // Stamps restart at 0 when the camera streams again: exactly one step back.
        let read = r.readStamps
        let backwards = zip(read, read.dropFirst()).filter { $0 > $1 }.count
        #expect(backwards == 1 && read.contains(29), "\(read)")
        // While it was away, ticks repeated the last frame: the output kept its rate.
        let s = try #require(r.stats)
        #expect(s.duplicated >= 15 && Double(s.framesOut) > s.elapsedSeconds * 30 * 0.85)
        // The camera's connection counters, as a network stream's: one loss, one return, and the gap:
        // at least the 0.8 s the emulated camera stays unplugged, and no longer than the output
        // clock's ticks without a new frame (each repeated the last frame or was skipped; 3 for the
        // edges) — the schedule the run itself kept, not a time limit.
        let connection = try #require(s.nodes.first { $0.kind == "camera" }?.connection, "no connection counters for the camera")
        #expect(connection.reconnects == 1 && connection.drops + connection.stalls == 1, "\(connection)")
        #expect(connection.secondsWithoutSignal >= 0.75, "\(connection)")
        #expect(connection.secondsWithoutSignal * 30 <= Double(s.duplicated + s.skippedTicks + 3),
                "\(connection), \(s.duplicated) repeated and \(s.skippedTicks) skipped ticks")
        #expect(connection.lastLoss?.contains("was disconnected") == true, "\(connection)")
    }

    @Test func ctrlCWhileWaitingForTheCameraStopsCleanly() throws {
        let r = try run("interrupt", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--reconnect",
                                      "--set", "small.width=640", "--set", "small.height=480"],
                        environment: FakeCamera.environment(extra: ["FAKECAM_UNPLUG_AFTER": "20"])) { process in
            usleep(3_000_000)
            kill(process.processIdentifier, SIGINT)
        }
        #expect(r.result.status == 130, "\(r.result.stderr)")
        #expect(r.stats?.interrupted == true && r.stats?.framesIn == 20)
        #expect(r.readStamps.max() == 19)
    }

    @Test func cameraFormatChoosesTheCamerasOwnFormat() throws {
        let both = FakeCamera.environment(formats: "YUYV,MJPG")
        let mjpeg = try run("format-mjpeg", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--camera-format", "mjpeg",
                                             "--duration", "1"], environment: both)
        #expect(mjpeg.result.status == 0 && mjpeg.result.stderr.contains("640x480 MJPG → yuv420p"), "\(mjpeg.result.stderr)")
        let auto = try run("format-auto", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--camera-size", "320x240",
                                           "--camera-fps", "15", "--duration", "1"],
                           environment: FakeCamera.environment(formats: "YUYV,MJPG", size: "640x480,320x240", fps: "30,15"))
        #expect(auto.result.status == 0 && auto.result.stderr.contains("320x240 YUYV → yuv420p at 15 fps"), "\(auto.result.stderr)")
        let missing = try run("format-missing", ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--camera-format", "mjpeg"],
                              environment: FakeCamera.environment(formats: "YUYV"), output: false)
        #expect(missing.result.status == 2 && missing.result.stderr.contains("does not offer MJPEG (it offers: YUYV)"), "\(missing.result.stderr)")
    }

    @Test func aBusyCameraIsNamedInTheError() throws {
        let dir = TestEnvironment.scratch("camera-busy")
        let pipeline = dir.appendingPathComponent("two.fg")
        try """
        a = camera path=\(FakeCamera.devicePath)
        b = camera path=\(FakeCamera.devicePath)
        x = null
        y = null
        a -> x
        b -> y
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let r = try runCommand(cli, ["run", pipeline.path, "--duration", "1"], environment: FakeCamera.environment())
        #expect(r.status == 2)
        #expect(r.stderr.contains("camera \(FakeCamera.devicePath) is busy (VIDIOC_"), "\(r.stderr)")
    }

    @Test func missingCameraOfflineModeAndInputConflictAreUsageErrors() throws {
        let missing = try runCommand(cli, ["run", "pipelines/transcode.fg", "--camera", "/tmp/fakecam/video9"], environment: FakeCamera.environment())
        #expect(missing.status == 2 && missing.stderr.contains("no camera at /tmp/fakecam/video9"), "\(missing.stderr)")
        let offline = try runCommand(cli, ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--mode", "offline"],
                                     environment: FakeCamera.environment())
        #expect(offline.status == 2 && offline.stderr.contains("a camera is always live"), "\(offline.stderr)")
        let both = try runCommand(cli, ["run", "pipelines/transcode.fg", "--camera", FakeCamera.devicePath, "--input", "x.mp4"],
                                  environment: FakeCamera.environment())
        #expect(both.status == 2 && both.stderr.contains("--input and --camera"), "\(both.stderr)")
    }
}
