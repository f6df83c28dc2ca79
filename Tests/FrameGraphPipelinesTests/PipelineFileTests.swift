import Foundation
import FrameGraph
import FrameGraphPipelines
import Testing
import TestSupport

/// The pipeline description format: what parses, and where errors point.
@Suite struct PipelineFileTests {
    func error(_ text: String) -> PipelineError? {
        do {
            _ = try Pipeline.build(try PipelineParser.parse(text, file: "p.fg"))
            return nil
        } catch let e as PipelineError {
            return e
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func parsesDeclarationsConnectionsPortsAndComments() throws {
        let text = """
        # a comment
        src  = pattern frames=10 width=320 height=240   # trailing comment
        gray = grayscale
        rgb  = convert to=rgb24
        mix  = blend pairing=same
        out  = png path="out dir/frame #%03d.png" every=5

        src -> rgb -> mix.foreground
        src -> gray -> mix.mask
        rgb -> mix.1
        mix -> out
        """
        let doc = try PipelineParser.parse(text, file: "p.fg")
        #expect(doc.declarations.map(\.name) == ["src", "gray", "rgb", "mix", "out"])
        #expect(doc.declarations[4].options.first { $0.key == "path" }?.value == "out dir/frame #%03d.png")
        #expect(doc.connections.count == 6)
        #expect(doc.connections[1].to.port == "foreground")
        let pipeline = try Pipeline.build(doc)
        #expect(pipeline.sources.count == 1)
        let rgb = try #require(pipeline.node("rgb"))
        #expect(rgb.targets.map(\.port) == [0, 1])
    }

    @Test func unknownTypeIsLocatedWithASuggestion() throws {
        let e = try #require(error("src = pattern\nsmall = resise width=10 height=10\nsrc -> small\n"))
        #expect(e.line == 2 && e.column == 9)
        #expect(e.message.contains("unknown node type 'resise' (did you mean 'resize'?)"))
        #expect(e.description.hasPrefix("p.fg:2:9: "))
    }

    @Test func unknownOptionListsTheValidOnes() throws {
        let e = try #require(error("src = pattern\nsmall = resize widht=10 height=10\n"))
        #expect(e.line == 2 && e.column == 16)
        #expect(e.message.contains("has no option 'widht' (did you mean 'width'?)"))
    }

    @Test func badValueIsLocatedAtTheValue() throws {
        let e = try #require(error("src = pattern\nsmall = resize width=ten height=10\n"))
        #expect(e.line == 2 && e.column == 22)
        #expect(e.message.contains("expected an integer, got 'ten'"))
    }

    @Test func colorizeVividnessIsCheckedAgainstItsRange() throws {
        let e = try #require(error("src = pattern\ncolorizer = colorize vividness=1.5\nsrc -> colorizer\n"))
        #expect(e.line == 2 && e.message.contains("option 'vividness': must be from 0 to 1, got 1.5"))
        #expect(error("src = pattern\ncolorizer = colorize vividness=0.3\nsrc -> colorizer\n")?.message.contains("vividness") != true)
    }

    @Test func missingRequiredOptionIsNamed() throws {
        let e = try #require(error("src = pattern\nsmall = resize width=10\n"))
        #expect(e.line == 2 && e.message.contains("needs option 'height'"))
    }

    @Test func unknownNodeInAConnectionIsLocated() throws {
        let e = try #require(error("src = pattern\nout = null\nsrc -> ou\n"))
        #expect(e.line == 3 && e.column == 8)
        #expect(e.message.contains("unknown node 'ou' (did you mean 'out'?)"))
    }

    @Test func unknownPortListsThePorts() throws {
        let e = try #require(error("src = pattern\nmix = blend\nsrc -> mix.mask2\n"))
        #expect(e.line == 3 && e.message.contains("no input port 'mask2' (did you mean 'mask'?)"))
        #expect(e.message.contains("foreground, background, mask"))
    }

    @Test func syntaxErrorsHaveLineAndColumn() throws {
        let unterminated = try #require(error("src = file path=\"abc\n"))
        #expect(unterminated.line == 1 && unterminated.column == 17 && unterminated.message.contains("unterminated string"))
        let dangling = try #require(error("src = pattern\nsrc ->\n"))
        #expect(dangling.line == 2 && dangling.message.contains("cannot end with '->'"))
        let garbage = try #require(error("src = pattern\nhello world\n"))
        #expect(garbage.line == 2 && garbage.column == 1)
        let twice = try #require(error("a = pattern\na = null\n"))
        #expect(twice.line == 2 && twice.message.contains("already declared on line 1"))
    }

    /// Every file in pipelines/ (today's and those to come) is built, and validated as a run
    /// validates it (models loaded, formats negotiated) unless it reads a camera. Pipelines that use
    /// MetalTensor's example files from ../shared need them.
    @Test func everyShippedPipelineParsesBuildsAndValidates() throws {
        let folder = TestEnvironment.root.appendingPathComponent("pipelines").path
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".fg") }.sorted()
        #expect(names.count >= 15, "\(names)")
        var validated = 0
        for name in names {
            let path = folder + "/" + name
            let text = try String(contentsOfFile: path, encoding: .utf8)
            if text.contains("../shared/"), TestEnvironment.sharedFile("models/metaltensor") == nil { continue }
            let pipeline = try Pipeline.load(path: path)
            #expect(!pipeline.sources.isEmpty, "\(name)")
            guard !pipeline.nodes.contains(where: { $0.type == "camera" }), !text.contains("MobileNetV2_1.0.plist") else { continue }
            // MobileNetV2's weights are not distributed: that pipeline is built, not validated.
            let runner = try GraphRunner(sources: pipeline.sources, options: RunOptions(mode: .offline))
            do {
                try runner.validate()
                validated += 1
            } catch {
                Issue.record("\(name): \(error)")
            }
            for source in pipeline.sources { try? source.finish(context: runner.context) }
        }
        #expect(validated >= 9, "validated \(validated)")
    }
}
