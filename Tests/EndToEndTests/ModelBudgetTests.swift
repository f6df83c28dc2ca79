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

    /// The node types whose models are in the repository or made by the setup (scripts/test.sh fetches
    /// MediaPipe's and builds EfficientNet-Lite0).
    static let cases: [(type: String, element: String)] = [
        ("segment", "segment model=selfie_segmentation"),
        ("colorize", "colorize"),
        ("classify", "classify model=efficientnet_lite0"),
        ("label", "label"),
        ("detect-faces", "detect-faces"),
        ("face-landmarks", "face-landmarks"),
    ]
    static let setupModels = selfie != nil && faces != nil && FileManager.default.fileExists(atPath: classifier)

    @Test(.enabled(if: setupModels, "needs the setup's models in models/cache (scripts/test.sh fetches MediaPipe's and builds EfficientNet-Lite0)"),
          arguments: cases.map(\.type))
    func theBudgetAppliesToEveryModelLoadingNode(_ type: String) throws {
        let c = try #require(Self.cases.first { $0.type == type })
        try Self.check(type, element: c.element)
    }

    /// The MetalTensor faces node, whose models are MetalTensor's own files in ../shared.
    @Test(.enabled(if: metalTensor != nil, "needs ../shared/models/metaltensor"))
    func theBudgetAppliesToTheMetalTensorFacesNode() throws {
        let detector = try #require(Self.metalTensor)
        let landmarks = (detector as NSString).deletingLastPathComponent + "/Landmarks.plist"
        try Self.check("metaltensor-faces", element: "metaltensor-faces detector=\(detector) landmarks=\(landmarks)")
    }

    static func check(_ type: String, element: String) throws {
        let pipeline = "pattern width=320 height=240 frames=2 -> \(element) -> null"
        let fits = try runCommand(TestEnvironment.cli, ["check", "-e", pipeline])
        #expect(fits.status == 0, "\(type) within the default budget: \(fits.stderr)")
        let over = try runCommand(TestEnvironment.cli, ["check", "-e", pipeline, "--model-budget", "1"])
        #expect(over.status == 2, "\(type): \(over.stderr)")
        #expect(over.stderr.split(separator: "\n").count == 1 && over.stderr.contains("over the memory budget of 1 MiB"), "\(type): \(over.stderr)")
    }
}
