import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphFilters
import FrameGraphNetwork
import FrameGraphMedia
import Testing
import TestSupport

/// Portrait segmentation through the frame graph, on a real clip of a person (the sample's first 77
/// frames, TestClips.person) and MediaPipe's model.
@Suite(.serialized) struct PortraitSegmentationTests {
    static let model = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite")
    static let ready = model != nil && TestClips.canMake
    static let needs: Comment = "needs models/cache/selfie_segmentation.tflite (tools/models/fetch_mediapipe_models.sh), samples/media/portrait.mp4 and ffmpeg"

    /// Mean distance of an RGB pixel block from a colour.
    func distance(_ frame: Frame, x: Int, y: Int, to colour: (Int, Int, Int)) -> Double {
        var total = 0.0
        for dy in 0..<8 {
            for dx in 0..<8 {
                let p = frame.packedPixel(x: x + dx, y: y + dy)
                total += Double(abs(Int(p[0]) - colour.0) + abs(Int(p[1]) - colour.1) + abs(Int(p[2]) - colour.2))
            }
        }
        return total / 64 / 3
    }

    @Test(.enabled(if: ready, needs))
    func backgroundIsReplacedAndThePersonKept() throws {
        let dir = TestEnvironment.scratch("segment")
        let source = FileSource(name: "source", path: try TestClips.person())
        let rgb = ConvertFormat(name: "rgb", to: .rgb24)
        let net = NetworkNode(name: "net", model: Self.model ?? "", decoder: SegmentationDecoder())
        let matte = BackgroundComposite(name: "matte", mode: .colour(0, 177, 64))
        let collector = FrameCollector(name: "frames", keepEvery: 10)
        source --> rgb
        rgb --> matte.port(0)
        rgb --> net --> matte.port(1)
        matte --> collector
        matte --> PNGSink(name: "png", pattern: dir.appendingPathComponent("frame-%03d.png").path, every: 25)
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
        #expect(report.failure == nil, "\(String(describing: report.failure))")
        #expect(report.framesOut == 77)
        #expect(report.admitted == 77)
        let frames = collector.frames
        #expect(frames.count == 8)
        // The clip shows a person in the middle; the top corners are background.
        for f in frames {
            #expect(distance(f, x: 8, y: 8, to: (0, 177, 64)) < 20, "top-left corner should be the new green background")
            #expect(distance(f, x: f.width - 16, y: 8, to: (0, 177, 64)) < 20, "top-right corner should be green")
            #expect(distance(f, x: f.width / 2 - 4, y: f.height / 2, to: (0, 177, 64)) > 60, "the person in the centre is kept")
        }
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("frame-075.png").path))
    }

    @Test(.enabled(if: ready, needs))
    func liveModeAt30fpsKeepsEveryFrame() throws {
        let source = FileSource(name: "source", path: try TestClips.person())
        let net = NetworkNode(name: "net", model: Self.model ?? "", decoder: SegmentationDecoder(smoothing: 0.2))
        let matte = BackgroundComposite(name: "matte", mode: .blur(radius: 16))
        source --> matte.port(0)
        source --> net --> matte.port(1)
        matte --> NullSink(name: "null")
        let report = try GraphRunner(sources: [source], options: RunOptions(mode: .live)).run()
        #expect(report.framesIn == 77)
        // How many frames the network refuses while busy depends on the machine's speed and load
        // (no test asserts speed): every frame is either predicted or refused, only the network
        // refuses, most frames are predicted, and every frame still reaches the output, composited
        // with the newest mask.
        let network = try #require(report.nodes.first { $0.name == "net" })
        #expect(network.processed + network.droppedBusy == 77)
        #expect(network.processed > 77 / 2, "\(report.table())")
        #expect(report.droppedBusy == network.droppedBusy, "\(report.table())")
        #expect(report.framesOut >= 75)
    }
}
