import Foundation
import FrameGraphInference
import ModelStore
import NeuralGraph
import TestSupport
import Testing

/// Finding models by name, from any working directory.
@Suite struct ModelLoaderTests {
    @Test func bareNamesAreFoundBelowTheGivenRootsAndMissingOnesListWhereTheyWereLookedFor() throws {
        let root = TestEnvironment.scratch("model-roots")
        let cache = root.appendingPathComponent("models/cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let model = cache.appendingPathComponent("tiny.tflite").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: model))
        #expect(try ModelLoader.resolve("tiny", roots: [root.path]) == model)
        #expect(throws: ModelError.self) { try ModelLoader.resolve("tiny") }
        do {
            _ = try ModelLoader.resolve("absent", roots: [root.path])
            Issue.record("an absent model must not resolve")
        } catch {
            #expect("\(error)".contains("\(root.path)/models/cache/absent.tflite"))
            #expect("\(error)".contains("scripts/test.sh"))
        }
    }
}
