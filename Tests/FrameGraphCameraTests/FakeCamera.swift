import Foundation
import Testing
import TestSupport

/// The emulated V4L2 camera of Tests/FakeCamera (an LD_PRELOAD library), for tests that run the
/// `framegraph` CLI against it. It is preloaded into the CLI process only, never into this one.
enum FakeCamera {
    static let directory = TestEnvironment.root.appendingPathComponent("Tests/FakeCamera")
    static let library = directory.appendingPathComponent("build/libfakecam.so").path
    /// The device path the emulated camera answers to (no file exists there).
    static let devicePath = "/tmp/fakecam/video0"

    /// Whether the library is there, after building it with `make` when needed (skips say why).
    static let available: Bool = {
        if let make = ["/usr/bin/make", "/usr/local/bin/make"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            _ = try? runCommand(make, ["-s", "-C", directory.path, "build/libfakecam.so"], timeout: 120)
        }
        return FileManager.default.fileExists(atPath: library)
    }()

    static let skipReason: Comment = "needs Tests/FakeCamera/build/libfakecam.so (make -C Tests/FakeCamera; gcc, libjpeg62-turbo-dev)"

    /// The environment that makes the CLI see the emulated camera at ``devicePath``.
    static func environment(formats: String = "YUYV", size: String = "640x480", fps: String = "30",
                            extra: [String: String] = [:]) -> [String: String] {
        ["LD_PRELOAD": library, "FAKECAM_PATH": devicePath, "FAKECAM_FORMATS": formats,
         "FAKECAM_SIZE": size, "FAKECAM_FPS": fps, "FRAMEGRAPH_CAMERAS": devicePath]
            .merging(extra) { _, new in new }
    }
}
