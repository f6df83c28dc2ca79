import FFmpegSupport
import Foundation
import FrameGraph

/// Where things are when tests run: the package root, ../shared (optional), the built CLI, and a
/// scratch folder under .build/test-output that is kept after the run for inspection.
public enum TestEnvironment {
    /// The package root (two levels above Tests/TestSupport).
    public static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// ../shared beside the checkout.
    public static let shared = root.deletingLastPathComponent().appendingPathComponent("shared")

    /// A file under ../shared, or nil when it is absent.
    public static func sharedFile(_ relative: String) -> String? {
        let path = shared.appendingPathComponent(relative).path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// A MediaPipe model as the project's setup fetches it (models/cache, verified by SHA-256; see
    /// tools/models/fetch_mediapipe_models.sh), else the copy in ../shared/models/mediapipe.
    public static func mediaPipeModel(_ file: String) -> String? {
        let cached = root.appendingPathComponent("models/cache/\(file)").path
        if FileManager.default.fileExists(atPath: cached) { return cached }
        return sharedFile("models/mediapipe/\(file)")
    }

    /// Whether ../shared's webcam clips are there (tests that need them are skipped otherwise).
    public static let hasSharedMedia = sharedFile("media/webcam/again.mkv") != nil

    /// ../shared's webcam clip (77 frames, 640×480, 30 fps), for the tests about its content (the
    /// MetalTensor models' checks against hand-checked regions); other tests read `TestClips`, made
    /// from the set-up's sample.
    public static var againClip: String { sharedFile("media/webcam/again.mkv") ?? "" }

    /// The default input made by tools/make-samples.sh.
    public static var portraitSample: String? {
        let path = root.appendingPathComponent("samples/media/portrait.mp4").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Whether the tests were built optimised (scripts/test.sh builds them so). Live-schedule tests of
    /// per-pixel-heavy graphs (colorization) need real speed and skip in debug builds.
    public static let isOptimisedBuild: Bool = {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }()

    /// Whether this process runs under AddressSanitizer or ThreadSanitizer (tools/sanitize.sh): their
    /// allocators hold freed memory back, so resident-memory checks mean nothing there.
    public static let isSanitized: Bool = {
        let handle = dlopen(nil, RTLD_NOW)
        defer { if let handle { dlclose(handle) } }
        return dlsym(handle, "__asan_init") != nil || dlsym(handle, "__tsan_init") != nil
    }()

    /// The CLI built beside the running tests (same configuration: `swift build --build-tests`
    /// builds it too), else the debug build.
    public static var cli: String { executable("framegraph") }

    /// An executable of the package (the CLI, a sample) built beside the running tests, else the debug build.
    public static func executable(_ name: String) -> String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return root.appendingPathComponent(".build/debug/\(name)").path
    }

    /// A fresh folder for one test's files, kept under .build/test-output/NAME.
    public static func scratch(_ name: String) -> URL {
        let url = root.appendingPathComponent(".build/test-output/\(name)")
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Decodes every frame of a file with FrameGraph's own decoder.
    public static func decodeAll(_ path: String) throws -> (reader: MediaReader, frames: [Frame]) {
        let reader = try MediaReader(path: path)
        var frames: [Frame] = []
        while let f = try reader.nextFrame() { frames.append(f) }
        return (reader, frames)
    }
}

/// Runs a command and collects its exit status and output.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs `executable` with `arguments` and extra `environment` variables (added to this process's
/// environment), collecting its exit status and output. Output is read while it runs, so
/// `whileRunning` may take its time (sample memory, send SIGINT) without the child blocking on a
/// full pipe; it returns before the child is waited for.
public func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                       timeout: Double = 120, in folder: URL? = nil, whileRunning: ((Process) -> Void)? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = folder ?? TestEnvironment.root
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = Protected(Data()), errData = Protected(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async { let d = out.fileHandleForReading.readDataToEndOfFile(); outData.withLock { $0 = d }; group.leave() }
    group.enter()
    DispatchQueue.global().async { let d = err.fileHandleForReading.readDataToEndOfFile(); errData.withLock { $0 = d }; group.leave() }
    whileRunning?(process)
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning {
        process.terminate()
        usleep(200_000)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    process.waitUntilExit()
    group.wait()
    return CommandResult(status: process.terminationStatus,
                         stdout: String(decoding: outData.withLock { $0 }, as: UTF8.self),
                         stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
}

/// Whether ffprobe is installed (some tests cross-check with it when present).
public let ffprobePath: String? = ["/usr/bin/ffprobe", "/usr/local/bin/ffprobe"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// The FFmpeg command-line tool (the setup installs Debian's `ffmpeg`), for making test clips.
public let ffmpegPath: String? = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
