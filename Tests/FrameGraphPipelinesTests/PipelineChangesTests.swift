import Foundation
import FrameGraph
import FrameGraphPipelines
import Testing
import TestSupport

/// The command line's changes as one typed value (what the CLI and the C library share), the nodes a
/// program's taps attach to, and shipped pipelines by name.
@Suite struct PipelineChangesTests {
    let faces = """
    source = file          path=in.mp4
    faces  = detect-faces
    marks  = annotate      hud=false
    output = encode        path=out.mp4

    source -> marks.frame
    source -> faces -> marks.results
    marks -> output
    """

    @Test func changesApplyInTheCLIsOrder() throws {
        var doc = try PipelineParser.parse(faces, file: "f.fg")
        var changes = PipelineChanges()
        changes.input = "clip.mp4"
        changes.output = "faces.mp4"
        changes.settings = ["faces.min-score=0.6"]
        changes.results = "faces.jsonl"
        let applied = try changes.apply(to: &doc)
        #expect(!applied.hasCamera && applied.preview == nil)
        func option(_ node: String, _ key: String) -> String? {
            doc.declarations.first { $0.name == node }?.options.first { $0.key == key }?.value
        }
        #expect(option("source", "path") == "clip.mp4")
        #expect(option("output", "path") == "faces.mp4")
        #expect(option("faces", "min-score") == "0.6")
        // --results added a results sink fed by the detector.
        #expect(doc.declarations.contains { $0.type == "results" && $0.options.contains { $0.key == "path" && $0.value == "faces.jsonl" } })
        // The taps a program attaches: frames where the video sink takes them, results where the file gets them.
        #expect(doc.videoOutputNode == "marks")
        #expect(doc.resultsProducers() == ["faces"])
    }

    @Test func inputAndCameraTogetherAndOfflineCamerasAreOneLineErrors() throws {
        var doc = try PipelineParser.parse(faces, file: "f.fg")
        var changes = PipelineChanges()
        changes.input = "clip.mp4"
        changes.camera = CameraCommandLine(path: "/dev/video0")
        #expect(throws: PipelineError(origin: "", message: "--input and --camera both name the source; give one of them")) {
            _ = try changes.apply(to: &doc)
        }
        #expect(try PipelineChanges.mode(requested: nil, hasCamera: true) == .live)
        #expect(try PipelineChanges.mode(requested: .live, hasCamera: false) == .live)
        #expect(try PipelineChanges.mode(requested: nil, hasCamera: false) == .offline)
        #expect(throws: PipelineError.self) { _ = try PipelineChanges.mode(requested: .offline, hasCamera: true) }
    }

    @Test func aShippedPipelineIsFoundByNameBesideTheBinary() throws {
        // Any file of the checkout stands for the binary: its checkout holds pipelines/.
        let binary = TestEnvironment.root.appendingPathComponent(".build/release/framegraph").path
        let found = try ShippedPipelines.find("face-detect", executable: binary)
        #expect(found == TestEnvironment.root.appendingPathComponent("pipelines/face-detect.fg").path)
        #expect(ShippedPipelines.names(executable: binary).contains("portrait-segment"))
        #expect(throws: PipelineError.self) { _ = try ShippedPipelines.find("no-such-pipeline", executable: binary) }
    }
}
