import Foundation
import FrameGraph
import FrameGraphBodies
import FrameGraphPipelines
import Testing
import TestSupport

/// The shipped pipelines (pipelines/hands.fg, pipelines/pose.fg) with the real models on the
/// set-up's sample (samples/media/portrait.mp4: the astronaut portrait, head and shoulders, no hand
/// in sight; MediaPipe's solutions find no hand on any of its 300 frames and a pose on every one).
@Suite struct BodiesPipelineTests {
    static let ready = TestEnvironment.portraitSample != nil && HandAndPoseTrackingTests.haveModels

    /// Runs `pipeline` on the sample for `seconds` with its results to a file; the records read back.
    static func run(_ pipeline: String, seconds: Double, name: String) throws -> [TimedResults] {
        let folder = TestEnvironment.scratch("bodies-\(name)")
        var document = try Pipeline.parseFile(path: TestEnvironment.root.appendingPathComponent("pipelines/\(pipeline)").path)
        try document.applyInput(try #require(TestEnvironment.portraitSample))
        try document.applyOutput(folder.appendingPathComponent("out.mp4").path)
        let results = folder.appendingPathComponent("results.jsonl").path
        try document.applyResults(results)
        let limited = document.override(node: "source", key: "duration", value: String(seconds), origin: "test")
        #expect(limited)
        let built = try Pipeline.build(document)
        let report = try GraphRunner(sources: built.sources, options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil, "\(report.failure?.message ?? "")")
        return try ResultsLines.read(path: results, topologies: BodyTopologies.catalog)
    }

    @Test(.enabled(if: ready, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and models/cache (tools/models/fetch_mediapipe_models.sh)"))
    func handsFindNoHandOnThePortrait() throws {
        let records = try Self.run("hands.fg", seconds: 2, name: "hands")
        #expect(records.count == 60)
        #expect(records.allSatisfy { $0.results.landmarks.isEmpty }, "hands found on \(records.filter { !$0.results.landmarks.isEmpty }.map(\.index))")
    }

    @Test(.enabled(if: ready, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and models/cache (tools/models/fetch_mediapipe_models.sh)"))
    func poseFindsTheAstronautOnEveryFrame() throws {
        let records = try Self.run("pose.fg", seconds: 2, name: "pose")
        #expect(records.count == 60)
        for record in records {
            let pose = try #require(record.results.landmarks.first, "frame \(record.index)")
            #expect(record.results.landmarks.count == 1 && pose.label == "pose" && pose.points.count == 33)
            #expect(pose.topology?.connections.count == 35)
            // Head above the shoulders, the person's left shoulder on the image's right, the nose
            // in the middle third of the picture, seen.
            let nose = pose.points[0], left = pose.points[11], right = pose.points[12]
            #expect(nose.y < min(left.y, right.y) && left.x > right.x, "frame \(record.index)")
            #expect(nose.x > 0.33 && nose.x < 0.67 && (nose.visibility ?? 0) > 0.9, "frame \(record.index): nose \(nose)")
        }
    }
}

/// samples/RaisedHand, built with the package, run as a user runs it.
@Suite struct RaisedHandSampleTests {
    @Test(.enabled(if: HandAndPoseTrackingTests.haveClip, "needs models/cache and ../shared/media/webcam"))
    func theSampleSaysWhichHandIsRaisedOnEveryFrame() throws {
        let clip = try #require(TestEnvironment.sharedFile("media/webcam/bird.mkv"))
        let r = try runCommand(TestEnvironment.executable("sample-raised-hand"), [clip], in: TestEnvironment.root)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let frames = lines.filter { $0.hasPrefix("t=") }
        #expect(frames.count == 63)
        let states = ["nobody", "no hand raised", "left hand raised", "right hand raised", "both hands raised"]
        #expect(frames.allSatisfy { line in states.contains { line.hasSuffix($0) } }, "\(frames.prefix(3))")
        #expect(lines.last?.hasPrefix("63 frames, a hand raised on ") == true, "\(lines.last ?? "")")
    }
}
