import Foundation
import FrameGraph
import Testing
import TestSupport

/// Results from the command line, as a user types it: `--results`, and the kind check of `check`.
@Suite(.serialized) struct ResultsCommandLineTests {
    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "the setup makes samples/media/portrait.mp4"))
    func resultsFlagReplacesThePipelinesOwnResultsFileAndTheRunWritesOnlyWhatWasNamed() throws {
        // A user's pipeline with its own results file, run from an empty folder with --results: the
        // detections go to the named file only, and the folder holds exactly what was named.
        let folder = TestEnvironment.scratch("results-flag")
        let pipeline = folder.appendingPathComponent("faces.fg").path
        try """
        source = file path=\(TestEnvironment.portraitSample ?? "") duration=1
        faces  = detect-faces
        marks  = annotate hud=false
        output = encode path=own.mp4
        log    = results path=own.jsonl
        source -> marks.frame
        source -> faces -> marks.results
        faces -> log
        marks -> output
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let run = try runCommand(TestEnvironment.cli, ["run", pipeline, "--output", "faces.mp4", "--results", "extra.jsonl"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let records = try ResultsLines.read(path: folder.appendingPathComponent("extra.jsonl").path)
        #expect(records.count == 30)
        #expect(records.allSatisfy { $0.results.producer == "faces" && $0.results.detections.count == 1 && $0.width == 640 })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["extra.jsonl", "faces.fg", "faces.mp4"])
        // The summary ends with the list of files written.
        #expect(run.stdout.split(separator: "\n").last == "wrote: extra.jsonl, faces.mp4", "\(run.stdout)")
    }

    @Test func resultsFlagOnAPipelineWithoutResultsIsAUsageError() throws {
        let run = try runCommand(TestEnvironment.cli, ["run", "pipelines/transcode.fg", "--results", "x.jsonl"])
        #expect(run.status == 2)
        #expect(run.stderr == "framegraph: --results: pipelines/transcode.fg has no node that produces results (a detector or classifier, such as detect-faces)\n", "\(run.stderr)")
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
