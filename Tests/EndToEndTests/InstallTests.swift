import Foundation
import Testing
import TestSupport

/// `scripts/install.sh` installs FrameGraph like a tool: from another folder, with only PREFIX/bin
/// on PATH, a shipped pipeline runs by name and finds its models and its default input; the man
/// page and completions are there; `--uninstall` removes exactly what was installed.
@Suite(.serialized) struct InstallTests {
    @Test(.enabled(if: TestEnvironment.portraitSample != nil && TestEnvironment.mediaPipeModel("face_detection_short_range.tflite") != nil,
                   "needs the sample and models/cache (scripts/test.sh)"))
    func anInstalledFrameGraphRunsAShippedPipelineByNameFromAnyFolder() throws {
        let root = TestEnvironment.scratch("install")
        let prefix = root.appendingPathComponent("prefix"), elsewhere = root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let script = TestEnvironment.root.appendingPathComponent("scripts/install.sh").path
        let installed = try runCommand(script, ["--binary", TestEnvironment.cli, "--prefix", prefix.path], timeout: 300)
        try #require(installed.status == 0, "\(installed.stderr)")
        // Only the prefix's bin (and the system's basic tools) on PATH; HOME elsewhere.
        let environment = ["PATH": prefix.appendingPathComponent("bin").path + ":/usr/bin:/bin", "HOME": root.path, "FRAMEGRAPH_MODELS": ""]
        let run = try runCommand("/usr/bin/env", ["framegraph", "run", "face-detect", "--duration", "0.3", "--output", "faces.mp4", "--results", "faces.jsonl"],
                                 environment: environment, timeout: 120, in: elsewhere)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try TestEnvironment.decodeAll(elsewhere.appendingPathComponent("faces.mp4").path).frames.count == 9)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).sorted() == ["faces.jsonl", "faces.mp4"])
        let info = try runCommand("/usr/bin/env", ["framegraph", "model", "info", "selfie_segmentation"], environment: environment, in: elsewhere)
        #expect(info.status == 0 && info.stdout.contains(prefix.appendingPathComponent("share/framegraph/models/selfie_segmentation.tflite").path),
                "\(info.stdout)\(info.stderr)")
        let man = try String(contentsOfFile: prefix.appendingPathComponent("share/man/man1/framegraph.1").path, encoding: .utf8)
        #expect(man.hasPrefix(".TH FRAMEGRAPH 1"))
        #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/bash-completion/completions/framegraph").path))
        #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/zsh/site-functions/_framegraph").path))
        let removed = try runCommand(script, ["--uninstall", "--prefix", prefix.path])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: prefix.path).isEmpty)
    }
}
