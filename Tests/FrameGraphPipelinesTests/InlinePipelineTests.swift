import FrameGraphPipelines
import Testing

/// The one-line form (`framegraph run -e`): what parses, and where errors point.
@Suite struct InlinePipelineTests {
    func column(_ text: String) -> Int? {
        do {
            _ = try InlinePipeline.parse(text)
            return nil
        } catch let e as PipelineError {
            return e.column
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func aChainParsesIntoDeclarationsAndConnections() throws {
        let doc = try InlinePipeline.parse("pattern frames=3 -> grayscale -> png path=f-%02d.png")
        #expect(doc.declarations.map(\.type) == ["pattern", "grayscale", "png"])
        #expect(doc.connections.count == 2)
    }

    /// A bare dot, or a reference with an empty name or port, was an out-of-range index (a trap,
    /// found by fuzz-pipeline on `. -> g th -.t`); each is one error at its column.
    @Test(arguments: [(". -> grayscale", 1), ("pattern -> .mask", 12), ("pattern -> x.", 12), ("pattern -> grayscale ; . -> png", 24)])
    func anEmptyNameOrPortIsAnErrorAtItsColumn(_ text: String, _ expected: Int) {
        #expect(column(text) == expected, "\(text)")
    }
}
