import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// The programs in samples/ build (they are targets of the package) and do what samples/README.md
/// says, on the default input the setup makes (samples/media/portrait.mp4, 300 frames).
@Suite(.serialized) struct SamplesTests {
    func sample(_ name: String, _ arguments: [String]) throws -> CommandResult {
        let path = TestEnvironment.executable(name)
        try #require(FileManager.default.isExecutableFile(atPath: path), "build the samples: swift build --build-tests")
        return try runCommand(path, arguments, timeout: 300)
    }

    var input: String? { TestEnvironment.portraitSample }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "needs samples/media/portrait.mp4 (tools/make-samples.sh)"))
    func theChainInCodeSegmentsAndEncodesEveryFrame() throws {
        let out = TestEnvironment.scratch("sample-chain").appendingPathComponent("chain.mp4").path
        let r = try sample("sample-chain", [try #require(input), out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("frames: in 300, admitted 300"), "\(r.stdout)")
        let (reader, frames) = try TestEnvironment.decodeAll(out)
        #expect(frames.count == 300 && reader.width == 512 && reader.height == 512)
        // The background is replaced by green (0, 177, 64): the top corners of the frame are green.
        let rgb = Frame.make(.rgb24, width: 512, height: 512)
        try Scaler().scale(frames[150], into: rgb)
        let corner = withExtendedLifetime(rgb) { Array(rgb.row(4)[(3 * 4)..<(3 * 5)]) }
        #expect(abs(Int(corner[0]) - 0) < 40 && abs(Int(corner[1]) - 177) < 40 && abs(Int(corner[2]) - 64) < 40, "corner \(corner)")
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "needs samples/media/portrait.mp4 (tools/make-samples.sh)"),
          .enabled(if: TestEnvironment.isOptimisedBuild, "the colorizer needs an optimised build"))
    func theColorizeSampleWritesEveryFrameInColour() throws {
        let out = TestEnvironment.scratch("sample-colorize").appendingPathComponent("colour.mp4").path
        let r = try sample("sample-colorize", [try #require(input), out])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = try TestEnvironment.decodeAll(out).frames
        #expect(frames.count == 300)
        // Colour, not grey: chroma planes away from neutral (128) somewhere in the middle frame.
        let chroma = withExtendedLifetime(frames) { frames[150].row(100, plane: 1).map { abs(Int($0) - 128) } }
        #expect((chroma.max() ?? 0) > 8, "chroma spread \(chroma.max() ?? 0)")
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "needs samples/media/portrait.mp4 (tools/make-samples.sh)"))
    func theCallbackSampleReportsOneResultPerFrame() throws {
        let r = try sample("sample-segment-callback", [try #require(input)])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("t=") }
        #expect(lines.count == 300)
        // The astronaut fills a good part of the frame: person coverage between 20 % and 90 %.
        let coverage = lines.compactMap { line in line.split(separator: " ").lazy.compactMap { Double($0) }.first }
        #expect(coverage.count == 300 && coverage.allSatisfy { $0 > 20 && $0 < 90 }, "\(lines.prefix(3))")
        #expect(r.stdout.contains("300 masks"))
    }

    @Test(.enabled(if: TestEnvironment.portraitSample != nil, "needs samples/media/portrait.mp4 (tools/make-samples.sh)"))
    func theStreamSampleGetsTheFacesOfEveryFrame() throws {
        let r = try sample("sample-face-results", [try #require(input)])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("t=") }
        #expect(lines.count == 300)
        #expect(lines.allSatisfy { $0.contains("faces 1  ") }, "\(lines.prefix(3))")
        #expect(r.stdout.contains("300 frames with results"))
    }

    @Test(.enabled(if: TestEnvironment.hasSharedMedia && TestEnvironment.sharedFile("models/metaltensor/PortraitSegmentNet.bin") != nil,
                   "needs ../shared (media/webcam, models/metaltensor)"))
    func theMetalTensorSampleRunsTheModelFilesUnchanged() throws {
        let plist = try #require(TestEnvironment.sharedFile("models/metaltensor/PortraitSegmentNet.plist"))
        let r = try sample("sample-metaltensor", [TestEnvironment.againClip, plist])
        #expect(r.status == 0, "\(r.stderr)")
        // every half second, the share of the square the person covers (the signer: a fifth to a half)
        let lines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("t=") }
        #expect(lines.count == 6, "\(r.stdout)")
        let shares = lines.compactMap { line in line.split(separator: " ").lazy.compactMap { Double($0) }.first }
        #expect(shares.count == 6 && shares.allSatisfy { $0 > 15 && $0 < 50 }, "\(lines)")
        #expect(r.stdout.contains("77 frames through PortraitSegmentNet.plist (input [128, 128, 3]); completed"))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: TestEnvironment.root.appendingPathComponent("models/cache/efficientnet_lite0.onnx").path),
                   "needs models/cache/efficientnet_lite0.onnx (scripts/test.sh)"),
          .enabled(if: TestClips.canMake, "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg, to make its clip"))
    func theLabelingSampleLabelsPhotosAndVideos() throws {
        // A photo: one picture of the video, written as PNG first.
        let video = try TestClips.person()
        let dir = TestEnvironment.scratch("sample-label-images")
        let photo = dir.appendingPathComponent("frame.png").path
        let f = try runCommand("/usr/bin/env", ["ffmpeg", "-v", "error", "-y", "-i", video, "-frames:v", "1", photo])
        try #require(f.status == 0, "\(f.stderr)")
        let r = try sample("sample-label-images", [photo, video])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first == "model labels: 1000, threshold in force: 0.0")
        #expect(lines.contains { $0.hasPrefix("\(photo): ") && $0.split(separator: ",").count >= 3 }, "\(r.stdout)")
        #expect(lines.filter { $0.contains(" t=") }.count == 3 && r.stdout.contains("\(video): 77 frames"), "\(r.stdout)")
    }
}
