import Foundation
import Testing
import TestSupport

/// `--model-budget` is the model service's, so it applies to every node that loads a model — the
/// CLI knows no node class. One check per model-loading node type, each refused with the budget named.
@Suite struct ModelBudgetTests {
    static let selfie = TestEnvironment.mediaPipeModel("selfie_segmentation.tflite")
    static let faces = TestEnvironment.mediaPipeModel("face_detection_short_range.tflite")
    static let classifier = TestEnvironment.root.appendingPathComponent("models/cache/efficientnet_lite0.onnx").path
    static let metalTensor = TestEnvironment.sharedFile("models/metaltensor/RapidFaceDetect.plist")

    static let cases: [(type: String, element: String, available: Bool)] = [
        ("segment", "segment model=selfie_segmentation", selfie != nil),
        ("colorize", "colorize", true),
        ("classify", "classify model=efficientnet_lite0", FileManager.default.fileExists(atPath: classifier)),
        ("label", "label", FileManager.default.fileExists(atPath: classifier)),
        ("detect-faces", "detect-faces", faces != nil),
        ("face-landmarks", "face-landmarks", faces != nil),
        ("metaltensor-faces", "metaltensor-faces detector=\(metalTensor ?? "") landmarks=\(((metalTensor ?? "") as NSString).deletingLastPathComponent)/Landmarks.plist",
         metalTensor != nil),
    ]

    @Test(arguments: cases.map(\.type))
    func theBudgetAppliesToEveryModelLoadingNode(_ type: String) throws {
        let c = try #require(Self.cases.first { $0.type == type })
        guard c.available else {
            print("skipped \(type): its model is absent (scripts/test.sh fetches MediaPipe's and EfficientNet-Lite0; MetalTensor's are in ../shared)")
            return
        }
        let pipeline = "pattern width=320 height=240 frames=2 -> \(c.element) -> null"
        let fits = try runCommand(TestEnvironment.cli, ["check", "-e", pipeline])
        #expect(fits.status == 0, "\(type) within the default budget: \(fits.stderr)")
        let over = try runCommand(TestEnvironment.cli, ["check", "-e", pipeline, "--model-budget", "1"])
        #expect(over.status == 2, "\(type): \(over.stderr)")
        #expect(over.stderr.split(separator: "\n").count == 1 && over.stderr.contains("over the memory budget of 1 MiB"), "\(type): \(over.stderr)")
    }
}
