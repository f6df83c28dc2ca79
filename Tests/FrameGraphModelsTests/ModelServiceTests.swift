import Foundation
import FrameGraphModels
import ModelFormats
import NeuralGraph
import TestSupport
import Testing

/// The model service: a name found along the search path in its order, the places listed when it
/// is nowhere, formats told by content, and one import shared by every user of a file.
@Suite struct ModelServiceTests {
    /// A folder with a tiny "model" file (content does not matter for finding).
    func folder(_ name: String, holding files: [String]) throws -> String {
        let root = TestEnvironment.scratch(name)
        for f in files {
            let url = root.appendingPathComponent(f)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("x".utf8).write(to: url)
        }
        return root.path
    }

    static func notFoundPlaces(_ error: ModelError) -> [String]? {
        if case .notFound(_, let places, _) = error { return places }
        return nil
    }

    static func budget(_ error: ModelError) -> (needed: Int, budget: Int)? {
        if case .overBudget(_, let needed, let budget, _) = error { return (needed, budget) }
        return nil
    }

    @Test func aNameIsFoundAlongTheSearchPathInOrder() throws {
        let pipelineFolder = try folder("search-pipeline", holding: ["mine.onnx"])
        let extra = try folder("search-extra", holding: ["mine.tflite", "theirs/theirs.onnx"])
        let cwd = try folder("search-cwd", holding: [])
        let path = ModelSearchPath.standard(pipelineFile: pipelineFolder + "/x.fg", environment: ["FRAMEGRAPH_MODELS": "/nonexistent:" + extra],
                                            currentFolder: cwd, dataFolders: [])
        #expect(path.places.map(\.why) == ["the pipeline's folder", "the current folder", "$FRAMEGRAPH_MODELS", "$FRAMEGRAPH_MODELS"])
        let service = ModelService(.init(searchPath: path))
        // The pipeline's folder comes before $FRAMEGRAPH_MODELS; a name may live in a folder of its own.
        #expect(try service.locate("mine") == pipelineFolder + "/mine.onnx")
        #expect(try service.locate("theirs") == extra + "/theirs/theirs.onnx")
    }

    @Test func aMissingNameListsEveryPlaceAndTheVariable() throws {
        let cwd = try folder("search-missing", holding: [])
        let service = ModelService(.init(searchPath: .standard(pipelineFile: nil, environment: [:], currentFolder: cwd,
                                                               dataFolders: [.init(folder: "/opt/fg/models", why: "installed data")])))
        let error = #expect(throws: ModelError.self) { try service.locate("absent") }
        let places = error.flatMap(Self.notFoundPlaces)
        #expect(places == ["\(cwd) (the current folder)", "/opt/fg/models (installed data)"], "\(String(describing: error))")
        #expect("\(String(describing: error))".contains("FRAMEGRAPH_MODELS=DIR"))
        #expect("\(String(describing: error))".contains("looked for absent.tflite, absent.onnx"))
    }

    @Test func aRelativePathIsTriedBelowThePipelinesFolders() throws {
        let project = try folder("search-relative", holding: ["models/x/net.onnx"])
        let service = ModelService(.init(searchPath: .standard(pipelineFile: project + "/pipelines/p.fg", environment: [:],
                                                               currentFolder: "/", dataFolders: [])))
        #expect(try service.locate("models/x/net.onnx") == project + "/models/x/net.onnx")
        #expect(throws: ModelError.self) { try service.locate("models/x/other.onnx") }
    }

    @Test func formatsAreToldByContentNotByName() throws {
        #expect(ModelFormat.detect(Array("\u{1C}\0\0\0TFL3".utf8)) == .tflite)
        #expect(ModelFormat.detect(Array("FGARCHV1\u{2}\0\0\0".utf8)) == .archive)
        #expect(ModelFormat.detect([0x50, 0x4B, 0x03, 0x04]) == .zip)
        #expect(ModelFormat.detect(Array("bplist00".utf8)) == .metalTensor)
        #expect(ModelFormat.detect(Array("\u{FEFF}  <?xml version=\"1.0\"?>".utf8)) == .metalTensor)
        #expect(ModelFormat.detect([0x08, 0x07, 0x12, 0x04]) == .onnx)
        #expect(ModelFormat.detect(Array("hello".utf8)) == nil)
        // A text file called .tflite is refused as what it is, at byte 0.
        let root = TestEnvironment.scratch("format-by-content")
        let fake = root.appendingPathComponent("fake.tflite").path
        try Data("not a model\n".utf8).write(to: URL(fileURLWithPath: fake))
        #expect(throws: ModelError.malformed(file: fake, reason: "not a model FrameGraph reads (it is text; expected TFLite, ONNX, a MetalTensor plist, a .task bundle or a FrameGraph archive)", offset: 0)) {
            try ModelFormat.detect(path: fake)
        }
        // A FIFO is refused without blocking.
        let fifo = root.appendingPathComponent("pipe.onnx").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: ModelError.self) { try ModelFormat.detect(path: fifo) }
    }

    @Test(.enabled(if: TestEnvironment.mediaPipeModel("selfie_segmentation.tflite") != nil, "needs models/cache/selfie_segmentation.tflite (scripts/test.sh fetches it)"))
    func aModelRenamedIsStillReadAndTheBudgetIsTheServices() throws {
        let model = try #require(TestEnvironment.mediaPipeModel("selfie_segmentation.tflite"))
        let renamed = TestEnvironment.scratch("renamed-model").appendingPathComponent("segmenter.onnx").path
        try? FileManager.default.removeItem(atPath: renamed)
        try FileManager.default.copyItem(atPath: model, toPath: renamed)
        let service = ModelService(.init(searchPath: ModelSearchPath(places: [])))
        #expect(try service.format(of: renamed) == .tflite)
        let graph = try service.graph(at: renamed)
        #expect(graph.inputs.count == 1)
        // A budget of 1 MiB is the service's, for every model it loads.
        let error = #expect(throws: ModelError.self) { try service.with(limits: ModelLimits(memoryBudgetBytes: 1 << 20)).graph(at: renamed) }
        let budget = error.flatMap(Self.budget)
        #expect(budget?.budget == 1 << 20 && (budget?.needed ?? 0) > 1 << 20, "\(String(describing: error))")
    }
}
