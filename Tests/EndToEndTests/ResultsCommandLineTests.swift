import Foundation
import FrameGraph
import Testing
import TestSupport

/// Results from the command line, as a user types it: `--results`, and the kind check of `check`.
@Suite(.serialized) struct ResultsCommandLineTests {
    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func resultsFlagWritesWhatTheDetectorFoundBesideThePipelinesOwnLog() throws {
        let folder = TestEnvironment.scratch("results-flag")
        let video = folder.appendingPathComponent("faces.mp4").path, log = folder.appendingPathComponent("log.jsonl").path
        let extra = folder.appendingPathComponent("extra.jsonl").path
        let run = try runCommand(TestEnvironment.cli, ["run", "pipelines/face-detect.fg", "--input", TestEnvironment.portraitSample ?? "",
                                                       "--output", video, "--set", "log.path=\(log)", "--results", extra, "--quiet",
                                                       "--set", "source.duration=1"])
        #expect(run.status == 0, "\(run.stderr)")
        let fromFlag = try ResultsLines.read(path: extra), fromPipeline = try ResultsLines.read(path: log)
        #expect(fromFlag.count == 30 && fromFlag == fromPipeline)
        #expect(fromFlag.allSatisfy { $0.results.producer == "faces" && $0.results.detections.count == 1 && $0.width == 640 })
        #expect(FileManager.default.fileExists(atPath: video))
    }

    @Test func resultsFlagOnAPipelineWithoutResultsIsAUsageError() throws {
        let run = try runCommand(TestEnvironment.cli, ["run", "pipelines/transcode.fg", "--results", "x.jsonl"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--results: the pipeline has no node that produces results"), "\(run.stderr)")
    }

    @Test func checkRefusesResultsWiredIntoAFramePortNamingBothKinds() throws {
        let folder = TestEnvironment.scratch("results-check")
        let pipeline = folder.appendingPathComponent("wrong.fg").path
        try """
        source = pattern frames=3
        faces  = detect-faces
        output = encode path=\(folder.appendingPathComponent("o.mp4").path)
        source -> faces -> output
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let run = try runCommand(TestEnvironment.cli, ["check", pipeline])
        #expect(run.status == 2)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("node 'output', port 'in': stream mismatch: expected frames, got results (detections, landmarks, labels) from network 'faces'"),
                "\(run.stderr)")
    }
}
