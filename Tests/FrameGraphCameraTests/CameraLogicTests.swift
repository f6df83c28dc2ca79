import Foundation
import FrameGraph
import FrameGraphCamera
import Testing

/// The camera source's bookkeeping, without a device: sequence gaps, timestamps, format choice,
/// settings.
@Suite struct CameraLogicTests {
    @Test func sequenceGapsCountFramesLostAtTheDriver() {
        var t = SequenceTracker()
        #expect(t.record(0) == 0)
        #expect(t.record(1) == 0)
        #expect(t.record(4) == 2)          // 2 and 3 lost
        #expect(t.record(4) == 0)          // repeated number: nothing
        #expect(t.lost == 2)
        var late = SequenceTracker()
        #expect(late.record(3) == 3)       // frames 0…2 came before the first one seen
        var odd = SequenceTracker()
        #expect(odd.record(1_000_000) == 0)  // a driver that does not start at 0
        #expect(odd.record(1_000_002) == 1)
    }

    @Test func sequenceNumbersWrapAndRestart() {
        var t = SequenceTracker()
        t.record(UInt32.max - 1)
        #expect(t.record(UInt32.max) == 0)
        #expect(t.record(1) == 1)          // wrapped past 0: frame 0 lost
        #expect(t.record(0) == 0)          // backwards: a reset, not 4 billion lost frames
        t.restart()
        #expect(t.record(2) == 2)          // after STREAMON again, counting starts from 0
        #expect(t.lost == 3)
    }

    @Test func driverTimestampsOnTheMonotonicClockAreKept() {
        let monotonic: UInt32 = 0x2000      // V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC
        let now = MonotonicClock().now()
        let sec = Int64(now - 0.010), usec = Int64(((now - 0.010) - Double(Int64(now - 0.010))) * 1e6)
        let t = DriverTimestamp.captureTime(flags: monotonic, seconds: sec, microseconds: usec, dequeuedAt: now)
        #expect(abs(t - (now - 0.010)) < 2e-6)
        // Unknown timestamp type, a zero stamp, one in the future, one far in the past: dequeue time.
        #expect(DriverTimestamp.captureTime(flags: 0, seconds: sec, microseconds: usec, dequeuedAt: now) == now)
        #expect(DriverTimestamp.captureTime(flags: monotonic, seconds: 0, microseconds: 0, dequeuedAt: now) == now)
        #expect(DriverTimestamp.captureTime(flags: monotonic, seconds: sec + 5, microseconds: 0, dequeuedAt: now) == now)
        #expect(DriverTimestamp.captureTime(flags: monotonic, seconds: sec - 60, microseconds: 0, dequeuedAt: now) == now)
    }

    /// A webcam like many UVC ones: YUYV only up to 640x480 at 30 fps (720p at 10), MJPEG up to 720p at 30.
    static let webcam: [CameraInfo.Format] = {
        func size(_ w: Int, _ h: Int, _ fps: [Int]) -> CameraInfo.Size {
            CameraInfo.Size(width: w, height: h, intervals: fps.map { CameraInfo.Interval(numerator: 1, denominator: $0) },
                            range: nil, intervalRange: nil)
        }
        return [
            CameraInfo.Format(fourcc: "YUYV", name: "YUYV 4:2:2", compressed: false,
                              sizes: [size(640, 480, [30, 15]), size(1280, 720, [10])], code: 0x5659_5559),
            CameraInfo.Format(fourcc: "MJPG", name: "Motion-JPEG", compressed: true,
                              sizes: [size(640, 480, [30]), size(1280, 720, [30])], code: 0x4750_4A4D),
        ]
    }()

    @Test func autoFormatPrefersYUYVButNotAtTheCostOfTheFrameRate() throws {
        let vga = try FormatChoice.choose(.auto, width: 640, height: 480, fps: 30, from: Self.webcam, path: "/dev/video0")
        #expect(vga?.fourcc == "YUYV")
        let hd = try FormatChoice.choose(.auto, width: 1280, height: 720, fps: 30, from: Self.webcam, path: "/dev/video0")
        #expect(hd?.fourcc == "MJPG")
        let slowHD = try FormatChoice.choose(.auto, width: 1280, height: 720, fps: 10, from: Self.webcam, path: "/dev/video0")
        #expect(slowHD?.fourcc == "YUYV")
        let odd = try FormatChoice.choose(.auto, width: 800, height: 600, fps: 30, from: Self.webcam, path: "/dev/video0")
        #expect(odd?.fourcc == "YUYV")     // nobody offers it: YUYV, the driver grants its nearest size
        #expect(try FormatChoice.choose(.mjpeg, width: 640, height: 480, fps: 30, from: Self.webcam, path: "/dev/video0")?.fourcc == "MJPG")
    }

    @Test func aFormatTheCameraLacksIsAClearError() {
        let yuyvOnly = [Self.webcam[0]]
        #expect(throws: CameraError.formatUnavailable(path: "/dev/video3", requested: "MJPEG", offered: ["YUYV"])) {
            _ = try FormatChoice.choose(.mjpeg, width: 640, height: 480, fps: 30, from: yuyvOnly, path: "/dev/video3")
        }
        let message = CameraError.formatUnavailable(path: "/dev/video3", requested: "MJPEG", offered: ["YUYV"]).description
        #expect(message.contains("/dev/video3") && message.contains("MJPEG") && message.contains("YUYV"))
    }

    @Test func settingsAreCheckedWithMessagesThatNameTheValue() {
        #expect(throws: CameraError.self) { try CameraSettings(width: 8).validate() }
        #expect(throws: CameraError.self) { try CameraSettings(fps: 0).validate() }
        #expect(throws: CameraError.self) { try CameraSettings(pixels: .gray8).validate() }
        #expect(throws: CameraError.self) { try CameraSettings(buffers: 1).validate() }
        do {
            try CameraSettings(path: "/dev/video2", width: 20_000).validate()
        } catch {
            #expect("\(error)".contains("/dev/video2") && "\(error)".contains("20000x480"))
        }
        #expect(CameraSettings.parseSize("1280x720")! == (1280, 720))
        #expect(CameraSettings.parseSize("1280") == nil && CameraSettings.parseSize("0x5") == nil)
        #expect(CameraInputFormat(name: "MJPG") == .mjpeg && CameraInputFormat(name: "yuyv") == .yuyv && CameraInputFormat(name: "h264") == nil)
    }

    @Test func candidatePathsAreVideoNodesInNumericOrderThenTheEnvironmentList() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fg-devs-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["video10", "video2", "video0", "videox", "media0"] {
            _ = FileManager.default.createFile(atPath: dir.appendingPathComponent(name).path, contents: nil)
        }
        let paths = CameraInfo.candidatePaths(environment: ["FRAMEGRAPH_CAMERAS": "/tmp/fake/cam:\(dir.path)/video2::/x"],
                                              deviceDirectory: dir.path)
        #expect(paths == ["\(dir.path)/video0", "\(dir.path)/video2", "\(dir.path)/video10", "/tmp/fake/cam", "/x"])
    }
}
