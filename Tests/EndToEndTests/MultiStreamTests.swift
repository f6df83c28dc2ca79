import Foundation
import FrameGraph
import Testing
import TestSupport

/// Several inputs in one `framegraph run`: one output per stream, named as the user asked, each with
/// every frame; per-stream statistics; one clear line when the outputs would collide.
@Suite(.serialized) struct MultiStreamTests {
    let cli = TestEnvironment.cli
    static let ready = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") != nil && TestClips.canMake
    static let needs: Comment = "needs models/cache/selfie_segmentation.tflite, samples/media/portrait.mp4 and ffmpeg"

    func framegraph(_ args: [String]) throws -> CommandResult {
        try #require(FileManager.default.isExecutableFile(atPath: cli), "build the CLI first: swift build --build-tests")
        return try runCommand(cli, args, timeout: 180)
    }

    /// Frames in the file's video stream, as ffprobe counts them (nil when ffprobe is absent).
    func frames(_ path: String) throws -> Int? {
        guard let ffprobe = ffprobePath else { return nil }
        let r = try runCommand(ffprobe, ["-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                                         "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(.enabled(if: ready, needs))
    func threeFileInputsOfflineWriteOneCompleteOutputEach() throws {
        let clip = try TestClips.person()
        let dir = TestEnvironment.scratch("multi-offline")
        let list = dir.appendingPathComponent("streams.txt")
        try "# a third camera\n\(clip)\n".write(to: list, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("out").path + "/"
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/portrait-segment.fg", "--input", clip, "--input", clip, "--inputs", list.path,
                                "--output", out, "--batch", "2", "--mode", "offline", "--stats", statsURL.path])
        #expect(r.status == 0, "\(r.stderr)")
        // Streams are named by file (made unique); the folder gets one file per stream, and the run lists them.
        let names = ["person-77", "person-77-2", "person-77-3"]
        let outputs = names.map { out + $0 + ".mp4" }
        for path in outputs {
            #expect(FileManager.default.fileExists(atPath: path), "\(path) missing")
            if let n = try frames(path) { #expect(n == 77, "\(path): \(n) frames") }
            #expect(r.stdout.contains(path))
        }
        let s = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: statsURL))
        let streams = try #require(s.streams)
        #expect(streams.map(\.name) == names)
        #expect(streams.allSatisfy { $0.framesIn == 77 && $0.admitted == 77 && $0.framesOut == 77 && $0.droppedBusy == 0 })
        #expect(s.framesIn == 231 && s.framesOut == 231)
        // One network worker for the three (one model): the nodes are per stream, the worker is not.
        #expect(s.nodes.filter { $0.kind == "network" }.count == 3)
    }

    @Test(.enabled(if: ready, needs))
    func twoInputsLiveWriteTheirOwnFilesWithThePattern() throws {
        let clip = try TestClips.person()
        let dir = TestEnvironment.scratch("multi-live")
        let pattern = dir.appendingPathComponent("cam-{stream}.mp4").path
        let statsURL = dir.appendingPathComponent("stats.json")
        let r = try framegraph(["run", "pipelines/portrait-segment.fg", "-i", clip, "-i", clip, "--output", pattern,
                                "--mode", "live", "--stats", statsURL.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: statsURL))
        let streams = try #require(s.streams)
        #expect(streams.count == 2)
        for (stream, name) in zip(streams, ["person-77", "person-77-2"]) {
            #expect(stream.name == name && stream.framesIn == 77)
            // Live: how many frames the shared network drops, and how many reach the output in time,
            // depend on the machine and its load (no test asserts speed); every frame is predicted or
            // dropped, and the file holds exactly what the stats count.
            #expect(stream.admitted + stream.droppedBusy == 77)
            let path = pattern.replacingOccurrences(of: "{stream}", with: name)
            if let n = try frames(path) { #expect(n == stream.framesOut, "\(path)") }
            #expect(stream.framesOut > 0)
        }
    }

    @Test func oneOutputFileForTwoInputsIsRefusedInOneLine() throws {
        let r = try framegraph(["run", "pipelines/portrait-segment.fg", "--input", "a.mkv", "--input", "b.mkv", "--output", "one.mp4"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("'one.mp4' names one file for 2 streams: put {stream} in it"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }
}
