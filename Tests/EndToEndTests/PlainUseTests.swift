import Foundation
import FrameGraph
import Testing
import TestSupport

/// What a new user runs into in the first hour, as they type it: durations that are media time,
/// skipped ticks that leave holes instead of shortening the video, runs that write only what was
/// named, models found from any folder, per-command help, inline pipelines and pictures of them.
@Suite(.serialized) struct PlainUseTests {
    func framegraph(_ args: [String], in folder: URL? = nil, environment: [String: String] = [:], timeout: Double = 120) throws -> CommandResult {
        try runCommand(TestEnvironment.cli, args, environment: environment, timeout: timeout, in: folder)
    }

    func ffmpeg(_ args: [String]) throws {
        let tool = try #require(ffmpegPath, "the ffmpeg CLI (installed by scripts/install-deps.sh)")
        let r = try runCommand(tool, ["-v", "error", "-y"] + args)
        try #require(r.status == 0, "ffmpeg: \(r.stderr)")
    }

    /// Each stream's duration (video, audio), as ffprobe reads the file: from its packets' times.
    func durations(_ path: String) throws -> (video: Double, audio: Double?) {
        func last(_ stream: String) throws -> Double? {
            let r = try runCommand(try #require(ffprobePath), ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time,duration_time",
                                                               "-of", "csv=p=0", path])
            let ends = r.stdout.split(separator: "\n").compactMap { line -> Double? in
                let parts = line.split(separator: ",").map { Double($0) ?? .nan }
                return parts.count == 2 && parts[0].isFinite ? parts[0] + (parts[1].isFinite ? parts[1] : 0) : nil
            }
            return ends.max()
        }
        return (try #require(try last("v:0")), try last("a:0"))
    }

    /// A clip of `seconds` at `fps` with a tone (AAC), 320×240.
    func clipWithSound(_ dir: URL, seconds: Double, fps: Int) throws -> String {
        let path = dir.appendingPathComponent("sound.mp4").path
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=s=320x240:r=\(fps):d=\(seconds)", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
                    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path])
        return path
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func offlineDurationIsMediaTime() throws {
        // A fast machine decodes many seconds of video in 1.5 s of clock time: offline, --duration
        // 1.5 is 1.5 s of the input (45 frames of the 30 fps sample), within one frame.
        let dir = TestEnvironment.scratch("plain-duration")
        let out = dir.appendingPathComponent("d.mp4").path
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", TestEnvironment.portraitSample ?? "", "--output", out,
                                "--duration", "1.5", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let d = try durations(out)
        #expect(abs(d.video - 1.5) <= 1.0 / 30 + 1e-3, "video lasts \(d.video) s")
        #expect(try TestEnvironment.decodeAll(out).frames.count == 45)
    }

    @Test func skippedTicksLeaveHolesInTimeAndTheSoundKeepsItsLength() throws {
        // slow.fg's 50 ms node passes about every other frame of a 25 fps clip live; with --policy
        // skip the empty ticks write nothing, yet every written frame keeps its time: the video lasts
        // as long as the input (within a frame of the 30 fps clock) and the copied sound too.
        let dir = TestEnvironment.scratch("plain-skip")
        let clip = try clipWithSound(dir, seconds: 2.56, fps: 25)
        let out = dir.appendingPathComponent("s.mp4").path
        let r = try framegraph(["run", "pipelines/slow.fg", "--input", clip, "--mode", "live", "--policy", "skip", "--output", out, "--quiet",
                                "--stats", dir.appendingPathComponent("s.json").path])
        #expect(r.status == 0, "\(r.stderr)")
        let d = try durations(out)
        let frames = try TestEnvironment.decodeAll(out).frames.count
        #expect(frames < 60, "\(frames) frames: some ticks must have been skipped")
        #expect(abs(d.video - 2.56) <= 2.0 / 30 + 0.02, "video lasts \(d.video) s")
        #expect(abs((d.audio ?? 0) - 2.56) <= 0.05, "audio lasts \(d.audio ?? 0) s")
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func aPreviewOnlyRunWritesNothing() throws {
        // No display here (DISPLAY unset): the window is skipped with a warning and the run goes on,
        // and the pipeline's own output file is not recorded — a preview writes only what is named.
        let dir = TestEnvironment.scratch("plain-preview")
        let r = try framegraph(["run", TestEnvironment.root.appendingPathComponent("pipelines/face-detect.fg").path,
                                "--input", TestEnvironment.portraitSample ?? "", "--set", "source.duration=0.3", "--preview"],
                               in: dir, environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        #expect(r.stdout.hasSuffix("wrote no files\n"), "\(r.stdout)")
        // With --output, the preview run records that file and nothing else.
        let named = try framegraph(["run", TestEnvironment.root.appendingPathComponent("pipelines/face-detect.fg").path,
                                    "--input", TestEnvironment.portraitSample ?? "", "--set", "source.duration=0.3", "--preview", "--output", "look.mp4"],
                                   in: dir, environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["look.mp4"])
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil && TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") != nil,
                   "needs the sample and models/cache (scripts/test.sh)"))
    func aCopiedPipelineFindsItsModelsFromAnotherFolderAndAMissingOneSaysWhereItLooked() throws {
        let dir = TestEnvironment.scratch("plain-models")
        let copy = dir.appendingPathComponent("my-faces.fg").path
        try FileManager.default.copyItem(atPath: TestEnvironment.root.appendingPathComponent("pipelines/face-detect.fg").path, toPath: copy)
        let r = try framegraph(["run", copy, "--input", TestEnvironment.portraitSample ?? "", "--set", "source.duration=0.2", "--output", "o.mp4", "--quiet"],
                               in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        // A model that is nowhere: the error names every place, the pipeline's folder and the variable first.
        let extra = dir.appendingPathComponent("mine").path
        try FileManager.default.createDirectory(atPath: extra, withIntermediateDirectories: true)
        let missing = try framegraph(["check", copy, "--input", TestEnvironment.portraitSample ?? "", "--set", "faces.model=my_detector"],
                                     in: dir, environment: ["FRAMEGRAPH_MODELS": extra])
        #expect(missing.status == 2)
        #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        for part in ["model not found: 'my_detector'", "\(dir.path) (the pipeline's folder)", "\(extra) ($FRAMEGRAPH_MODELS)", "FRAMEGRAPH_MODELS=DIR"] {
            #expect(missing.stderr.contains(part), "\(part): \(missing.stderr)")
        }
    }

    @Test func eachCommandHasItsOwnHelpAndMistypedOptionsGetASuggestion() throws {
        let run = try framegraph(["run", "--help"]), bench = try framegraph(["model", "bench", "--help"]), main = try framegraph(["--help"])
        #expect(run.status == 0 && bench.status == 0 && main.status == 0)
        #expect(run.stdout.contains("--input PATH") && run.stdout.contains("EXAMPLES") && !run.stdout.contains("--runs"))
        #expect(bench.stdout.contains("--runs N") && bench.stdout.contains("[1…1000000, default 200]") && !bench.stdout.contains("--input PATH"))
        #expect(run.stdout != main.stdout && bench.stdout != run.stdout)
        let typo = try framegraph(["run", "pipelines/transcode.fg", "--inptu", "x.mp4"])
        #expect(typo.status == 2)
        #expect(typo.stderr == "framegraph: unknown option --inptu for framegraph run (did you mean --input?); framegraph run --help lists its options\n")
        let command = try framegraph(["modle", "info", "x"])
        #expect(command.status == 2 && command.stderr.contains("(did you mean 'model'?)"))
        let range = try framegraph(["model", "bench", "x", "--runs", "0"])
        #expect(range.status == 2 && range.stderr.contains("--runs expects an integer from 1 to 1000000, got '0'"))
        // The man page and the completions come from the same table.
        let man = try framegraph(["help", "--man"])
        #expect(man.status == 0 && man.stdout.hasPrefix(".TH FRAMEGRAPH 1") && man.stdout.contains("\\-\\-model\\-budget"))
        let bash = try framegraph(["completions", "bash"])
        #expect(bash.status == 0 && bash.stdout.contains("complete -F _framegraph framegraph") && bash.stdout.contains("detect-faces"))
    }

    @Test func anInlinePipelineRunsAndItsErrorsPointIntoTheLine() throws {
        let dir = TestEnvironment.scratch("plain-inline")
        let out = dir.appendingPathComponent("p.mp4").path
        let r = try framegraph(["run", "-e", "pattern width=320 height=240 frames=12 name=src -> resize width=160 height=120 -> encode path=\(out)", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = try TestEnvironment.decodeAll(out).frames
        #expect(frames.count == 12 && frames.allSatisfy { $0.width == 160 && $0.height == 120 })
        // Two chains joined by names, a composite's ports included.
        let blend = dir.appendingPathComponent("b.mp4").path
        let two = try framegraph(["run", "-e", "pattern frames=5 format=rgb24 name=a -> blend name=mix -> encode path=\(blend); "
                                  + "pattern frames=5 format=rgb24 name=b -> mix.background; pattern frames=5 format=rgb24 -> grayscale -> mix.mask", "--quiet"])
        #expect(two.status == 0, "\(two.stderr)")
        #expect(try TestEnvironment.decodeAll(blend).frames.count == 5)
        let typo = try framegraph(["check", "-e", "pattern -> resise width=2 height=2 -> null"])
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("framegraph: -e:1:12: unknown node type 'resise' (did you mean 'resize'?)"), "\(typo.stderr)")
    }

    @Test func aPictureOfAPipelineNamesItsNodesLanesAndPorts() throws {
        let r = try framegraph(["graph", "pipelines/portrait-segment.fg"])
        #expect(r.status == 0, "\(r.stderr)")
        for part in ["digraph \"portrait-segment\"", "segment [worker]", "\"net\" -> \"matte\" [label=\"mask\"]", "\"source\" -> \"matte\" [label=\"frame\"]"] {
            #expect(r.stdout.contains(part), "\(part): \(r.stdout)")
        }
        let dir = TestEnvironment.scratch("plain-graph")
        let out = dir.appendingPathComponent("p.dot").path
        let written = try framegraph(["graph", "pipelines/transcode.fg", "-o", out])
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.status == 0 && text.hasPrefix("digraph"))
        // The pipeline file itself is an input: a picture never replaces it.
        let refused = try framegraph(["graph", "pipelines/transcode.fg", "-o", "pipelines/transcode.fg"])
        #expect(refused.status == 2)
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func aShippedPipelineRunsByNameFromAnyFolder() throws {
        let dir = TestEnvironment.scratch("plain-by-name")
        let r = try framegraph(["check", "face-detect"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("pipelines/face-detect.fg: OK"))
        let unknown = try framegraph(["check", "face-detector"], in: dir)
        #expect(unknown.status == 2 && unknown.stderr.contains("no pipeline file 'face-detector'") && unknown.stderr.contains("face-detect,"))
    }
}
