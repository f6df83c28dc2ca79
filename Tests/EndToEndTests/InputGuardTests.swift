import Foundation
import Testing
import TestSupport

/// No output may replace a file the run reads — not only the video and the model, but the pipeline
/// file, a labels file, a MetalTensor model's weight map, blob and secondary images, and the machine
/// config: each refused before anything is written, the input unchanged.
@Suite(.serialized) struct InputGuardTests {
    func framegraph(_ args: [String]) throws -> CommandResult { try runCommand(TestEnvironment.cli, args, timeout: 60) }

    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Runs `args` (a run that must be refused because `victim` is named as an output) and checks the
    /// refusal, that the victim is unchanged, and that no output or temporary file appeared in `dir`.
    func expectRefused(_ args: [String], victim: String, in dir: URL) throws {
        let before = bytes(victim), names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let r = try framegraph(args)
        #expect(r.status == 2, "\(args): \(r.stderr)")
        #expect(r.stderr.contains("would overwrite") && r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        #expect(bytes(victim) == before, "\(victim) changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == names)
    }

    @Test func thePipelineFileALabelsFileAndTheMachineConfigAreInputs() throws {
        let dir = TestEnvironment.scratch("guard-files")
        let pipeline = dir.appendingPathComponent("p.fg").path
        try "source = pattern frames=3\nout = encode path=\(dir.appendingPathComponent("o.mp4").path)\nsource -> out\n"
            .write(toFile: pipeline, atomically: true, encoding: .utf8)
        for flag in ["--stats", "--trace"] {
            try expectRefused(["run", pipeline, flag, pipeline], victim: pipeline, in: dir)
        }
        try expectRefused(["run", pipeline, "--output", pipeline], victim: pipeline, in: dir)
        let machine = dir.appendingPathComponent("machine.json").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: machine))
        try expectRefused(["run", pipeline, "--machine-config", machine, "--stats", machine], victim: machine, in: dir)
        // A classifier's labels file, named by the pipeline.
        if let model = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") {
            let labels = dir.appendingPathComponent("labels.txt").path
            try "person\n".write(toFile: labels, atomically: true, encoding: .utf8)
            let classify = dir.appendingPathComponent("c.fg").path
            try "source = pattern frames=2\nnet = classify model=\(model) labels=\(labels)\nsink = null\nsource -> net -> sink\n"
                .write(toFile: classify, atomically: true, encoding: .utf8)
            try expectRefused(["run", classify, "--stats", labels], victim: labels, in: dir)
            try expectRefused(["run", classify, "--results", labels], victim: labels, in: dir)
        }
    }

    @Test(.enabled(if: TestEnvironment.sharedFile("models/metaltensor/Landmarks.plist") != nil, "needs ../shared/models/metaltensor"))
    func aMetalTensorModelsWeightMapBlobAndImagesAreInputs() throws {
        // The issue's reproduction: a copy of MetalTensor's models, their files named as outputs.
        let dir = TestEnvironment.scratch("guard-metaltensor")
        let mt = dir.appendingPathComponent("mt")
        try FileManager.default.copyItem(atPath: try #require(TestEnvironment.sharedFile("models/metaltensor")), toPath: mt.path)
        let plist = mt.appendingPathComponent("PortraitSegmentNet.plist").path
        let o = dir.appendingPathComponent("o.mp4").path
        for file in ["PortraitSegmentNet.bin", "PortraitSegmentNet.json"] {
            let victim = mt.appendingPathComponent(file).path
            try expectRefused(["run", "pipelines/metaltensor-portrait.fg", "--set", "net.model=\(plist)", "--output", o, "--stats", victim],
                              victim: victim, in: dir)
        }
        // The landmark model's secondary images (mean96.png, std96.png) through the faces node.
        let faces = "pattern width=320 height=240 frames=2 -> metaltensor-faces detector=\(mt.path)/RapidFaceDetect.plist landmarks=\(mt.path)/Landmarks.plist -> null"
        for file in ["mean96.png", "std96.png", "std_mean.plist", "RapidFaceDetectConfig.plist", "Landmarks.bin"] {
            let victim = mt.appendingPathComponent(file).path
            try expectRefused(["run", "-e", faces, "--stats", victim], victim: victim, in: dir)
        }
    }
}
