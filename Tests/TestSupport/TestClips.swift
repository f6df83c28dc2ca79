import Foundation
import FrameGraph

/// Clips and photos the tests make for themselves with the ffmpeg command-line tool (the set-up
/// installs it) from the set-up's sample, so that only a test about ../shared's webcam clips or photos
/// themselves needs ../shared. Each file is made once per test process under .build/test-output/clips
/// and shared by the tests that read it (a test writes its outputs elsewhere). A test that reads one
/// is enabled if `canMake` / `canMakeMoving`; a failure to make it then fails the test, with ffmpeg's message.
public enum TestClips {
    /// How many frames the clips have, as ../shared's again.mkv (2.57 s at 30 fps).
    public static let frameCount = 77

    /// Whether `person()` and `photo(at:)` can be made: samples/media/portrait.mp4 and ffmpeg are there
    /// (a test skipped otherwise says "needs samples/media/portrait.mp4 (tools/make-samples.sh) and ffmpeg").
    public static var canMake: Bool { TestEnvironment.portraitSample != nil && ffmpegPath != nil }

    /// Whether `moving()` can be made (ffmpeg is there).
    public static var canMakeMoving: Bool { ffmpegPath != nil }

    /// A stand-in for ../shared/media/webcam/again.mkv where a test needs a real picture of a person but
    /// not that clip's content: the first 77 frames of samples/media/portrait.mp4 (the astronaut in the
    /// middle of the picture, background in the top corners), stored as the webcam clip is: H.264,
    /// full-range 4:2:0, 640×480 at 30 fps, in Matroska (millisecond timestamps, a shade off 1/30 s).
    public static func person() throws -> String {
        try make("person-77.mkv", ["-i", try sample(), "-frames:v", String(frameCount)])
    }

    /// Stored like `person()`, but each frame differs from the next at a glance (FFmpeg's moving
    /// `testsrc2` pattern, four times as fast): for tests that tell a frame from its neighbours.
    public static func moving() throws -> String {
        try make("moving-77.mkv", ["-f", "lavfi", "-i", "testsrc2=s=640x480:r=30,select=not(mod(n\\,4)),setpts=N/30/TB",
                                   "-frames:v", String(frameCount)])
    }

    /// The sample's picture at `seconds` as a JPEG photo (640×480), for tests that read photos.
    public static func photo(at seconds: Double) throws -> String {
        try make(String(format: "photo-%.2f.jpg", seconds), ["-ss", String(seconds), "-i", try sample(), "-frames:v", "1", "-q:v", "2"],
                 video: false)
    }

    /// Why a file could not be made: what was missing, or ffmpeg's own message.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static func sample() throws -> String {
        guard let sample = TestEnvironment.portraitSample else { throw Failure(description: "samples/media/portrait.mp4 is absent (tools/make-samples.sh)") }
        return sample
    }

    static let folder = TestEnvironment.root.appendingPathComponent(".build/test-output/clips")
    static let made = Protected([String: Result<String, Failure>]())

    /// Runs ffmpeg on `input` (input options, the input, output options) into the clips folder as `name`,
    /// once per process. The file is written beside its name and then renamed, so no reader sees half of it.
    static func make(_ name: String, _ input: [String], video: Bool = true) throws -> String {
        try made.withLock { made in
            if let known = made[name] { return known }
            let result = Result { try run(name, input, video: video) }.mapError { $0 as? Failure ?? Failure(description: "\(name): \($0)") }
            made[name] = result
            return result
        }.get()
    }

    private static func run(_ name: String, _ input: [String], video: Bool) throws -> String {
        guard let ffmpeg = ffmpegPath else { throw Failure(description: "ffmpeg is not installed (scripts/install-deps.sh installs it)") }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        let partial = folder.appendingPathComponent(".\(ProcessInfo.processInfo.processIdentifier)-\(name)").path
        let output = video ? ["-vf", "scale=out_range=full", "-pix_fmt", "yuvj420p", "-color_range", "pc",
                              "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-f", "matroska"] : ["-f", "image2", "-update", "1"]
        let r = try runCommand(ffmpeg, ["-nostdin", "-v", "error", "-y"] + input + output + [partial], timeout: 120)
        guard r.status == 0, FileManager.default.fileExists(atPath: partial) else {
            try? FileManager.default.removeItem(atPath: partial)
            throw Failure(description: "ffmpeg could not make \(name) (status \(r.status)): \(r.stderr)")
        }
        guard rename(partial, path) == 0 else { throw Failure(description: "\(name): rename failed, errno \(errno)") }
        return path
    }
}
