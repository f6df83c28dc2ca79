import Foundation
import Testing
import TestSupport

/// What used to be accepted silently, each now a clear line (and a non-zero status) or a warning
/// with a counter: image-sequence holes and non-regular members, contradictory options, URL-like
/// outputs, NUL bytes, unsafe rule names, an oversized echo, `models clear` on foreign files, a
/// Foundation error message.
@Suite(.serialized) struct AcceptedSilentlyTests {
    func framegraph(_ args: [String], in folder: URL? = nil) throws -> CommandResult {
        try runCommand(TestEnvironment.cli, args, timeout: 60, in: folder)
    }

    func expectOneLine(_ r: CommandResult, _ part: String, status: Int32 = 2, _ what: String) {
        #expect(r.status == status, "\(what): status \(r.status) \(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(part), "\(what): \(r.stderr)")
        #expect(!r.stderr.contains("Error Domain"), "\(what): \(r.stderr)")
    }

    /// Pictures 1…10 of a 64×48 sequence at 10 per second.
    func sequence(_ dir: URL) throws -> String {
        let folder = dir.appendingPathComponent("f")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let tool = try #require(ffmpegPath)
        let r = try runCommand(tool, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x48:r=10:d=1", folder.appendingPathComponent("%05d.png").path])
        try #require(r.status == 0, "\(r.stderr)")
        return folder.appendingPathComponent("%05d.png").path
    }

    @Test func anImageSequenceGoesOnPastAHoleAndCountsIt() throws {
        let dir = TestEnvironment.scratch("silent-holes")
        let pattern = try sequence(dir)
        for n in [4, 5] { try FileManager.default.removeItem(atPath: String(format: pattern, n)) }
        let out = dir.appendingPathComponent("o.mp4").path, stats = dir.appendingPathComponent("s.json").path
        let r = try framegraph(["run", "-e", "file path=\(pattern) rate=10 -> encode path=\(out)", "--stats", stats, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("2 pictures missing from the sequence") && r.stderr.contains("00004.png, ") && r.stderr.contains("00005.png"), "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        #expect(json?["droppedCorrupt"] as? Int == 2)
        // The eight pictures keep their times: the hole stays a gap (0.3 s → 0.6 s).
        let times = try TestEnvironment.decodeAll(out).frames.map { ($0.mediaTime * 10).rounded() / 10 }
        #expect(times == [0, 0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9], "\(times)")
    }

    @Test func aSequenceMemberThatIsAFIFOOrADeviceIsRefused() throws {
        let dir = TestEnvironment.scratch("silent-members")
        let pattern = try sequence(dir)
        let member = String(format: pattern, 4)
        try FileManager.default.removeItem(atPath: member)
        #expect(mkfifo(member, 0o600) == 0)
        let out = dir.appendingPathComponent("o.mp4").path
        expectOneLine(try framegraph(["run", "-e", "file path=\(pattern) -> encode path=\(out)"]), "is a FIFO (named pipe), not a regular file", "FIFO")
        try FileManager.default.removeItem(atPath: member)
        try FileManager.default.createSymbolicLink(atPath: member, withDestinationPath: "/dev/zero")
        expectOneLine(try framegraph(["run", "-e", "file path=\(pattern) -> encode path=\(out)"]), "is a character device", "/dev/zero")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func contradictoryAndMalformedValuesAreOneLine() throws {
        let dir = TestEnvironment.scratch("silent-values")
        let o = dir.appendingPathComponent("o.mp4").path
        if TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") != nil {
            expectOneLine(try framegraph(["check", "-e", "pattern -> segment model=selfie_segmentation mask-low=0.9 mask-high=0.1 -> null"]),
                          "mask-low", "mask-low > mask-high")
        }
        expectOneLine(try framegraph(["run", "pipelines/transcode.fg", "--camera", "/dev/video99", "--loop"]), "--loop applies to file sources", "--camera --loop")
        expectOneLine(try framegraph(["run", "-e", "pattern frames=2 -> encode path=file:\(o)"]), "outputs are local files only", "file: output")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("file:").path))
        let nul = dir.appendingPathComponent("nul.fg").path
        try Data("source = file path=\"a\u{0}b.mp4\"\nout = null\nsource -> out\n".utf8).write(to: URL(fileURLWithPath: nul))
        expectOneLine(try framegraph(["check", nul]), "a NUL byte", "NUL in a value")
        let long = String(repeating: "x", count: 120_000)
        let echoed = try framegraph(["run", "pipelines/transcode.fg", "--set", "nosuchnode.width=\(long)"])
        #expect(echoed.status == 2 && echoed.stderr.utf8.count < 1000, "\(echoed.stderr.utf8.count) bytes")
    }

    @Test func deploymentRefusesUnsafeNamesAndClearsOnlyItsOwnFiles() throws {
        let dir = TestEnvironment.scratch("silent-deploy")
        let key = dir.appendingPathComponent("p.fgsign").path
        #expect(try framegraph(["deploy", "key", "new", "-o", key]).status == 0)
        let tree = dir.appendingPathComponent("tree").path
        #expect(try framegraph(["deploy", "collection", tree, "Flowers", "--sign", key]).status == 0)
        expectOneLine(try framegraph(["deploy", "rule", tree, "Flowers", "x", "--device-class", "../x", "--sign", key]), "is not a safe name", "rule name")
        // `deploy collection` on a regular file: the path and the reason, no framework dump.
        let file = dir.appendingPathComponent("plain").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        expectOneLine(try framegraph(["deploy", "collection", file, "Flowers", "--sign", key]), "Not a directory", "collection on a file")
        // models clear removes what the cache made, and leaves a file someone put there.
        let cache = dir.appendingPathComponent("cache")
        let archives = cache.appendingPathComponent("archives")
        try FileManager.default.createDirectory(at: archives, withIntermediateDirectories: true)
        let ours = archives.appendingPathComponent(String(repeating: "a", count: 64) + ".fgarchive").path
        let theirs = archives.appendingPathComponent("notes.txt").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: ours))
        try Data("keep".utf8).write(to: URL(fileURLWithPath: theirs))
        let machine = dir.appendingPathComponent("machine.json").path
        try JSONSerialization.data(withJSONObject: ["format": "framegraph-machine-1", "server": "https://127.0.0.1:9/",
                                                    "publisherKey": String(repeating: "ab", count: 32), "cacheDir": cache.path])
            .write(to: URL(fileURLWithPath: machine))
        let cleared = try framegraph(["models", "clear", "--machine-config", machine])
        #expect(cleared.status == 0 && cleared.stdout.contains("left 1 file the cache did not make"), "\(cleared.stdout)\(cleared.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ours) && FileManager.default.fileExists(atPath: theirs))
    }
}
