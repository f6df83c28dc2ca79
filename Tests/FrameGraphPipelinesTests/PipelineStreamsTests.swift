import Foundation
import FrameGraph
import FrameGraphNetwork
import FrameGraphPipelines
import Testing
import TestSupport

/// Several streams in one pipeline: the `streams` list, `--input` given more than once, outputs per
/// stream, and one shared worker per network.
@Suite struct PipelineStreamsTests {
    let portrait = """
    source = file        path=in.mp4
    net    = segment     model=selfie_segmentation
    matte  = background  mode=colour
    output = encode      path=out/{stream}.mp4

    source -> matte.frame
    source -> net -> matte.mask
    matte -> output
    """

    func option(_ doc: PipelineDocument, _ node: String, _ key: String) -> String? {
        doc.declarations.first { $0.name == node }?.options.first { $0.key == key }?.value
    }

    @Test func inputsGivenTwiceRepeatTheChainPerStream() throws {
        var doc = try PipelineParser.parse(portrait, file: "p.fg")
        var changes = PipelineChanges()
        changes.inputs = ["cams/front.mkv", "cams/back door.mkv", "other/front.mkv"]
        changes.batch = 2
        _ = try changes.apply(to: &doc)
        #expect(doc.streamNames == ["front", "back-door", "front-2"])
        #expect(doc.declarations.map(\.name).prefix(4) == ["front/source", "front/net", "front/matte", "front/output"])
        #expect(doc.declarations.count == 12 && doc.connections.count == 12)
        #expect(option(doc, "back-door/source", "path") == "cams/back door.mkv")
        #expect(option(doc, "front-2/output", "path") == "out/front-2.mp4")
        #expect(doc.streamBatch == 2)
        // Built: the three networks share one worker group (one model), each source names its stream.
        let pipeline = try Pipeline.build(doc)
        let nets = doc.streamNames.compactMap { pipeline.node("\($0)/net") as? NetworkNode }
        #expect(nets.count == 3)
        let group = try #require(nets[0].workerGroup)
        #expect(nets.allSatisfy { $0.workerGroup === group } && group.batchLimit == 2)
        #expect(pipeline.sources.map(\.streamName) == ["front", "back-door", "front-2"])
    }

    @Test func networkAddressesAmongTheInputsBecomeStreamSourcesNamedWithoutCredentials() throws {
        var doc = try PipelineParser.parse(portrait, file: "p.fg")
        var changes = PipelineChanges()
        changes.inputs = ["rtsp://admin:hunter2@10.0.0.7:554/front", "rtsp://10.0.0.8/front?token=hunter2", "udp://127.0.0.1:5000", "clips/yard.mkv",
                          "rtsp://admin:hunter2@10.0.0.9:8554"]
        // Without the opt-in: one line, no password in it.
        var refused = doc
        #expect(throws: PipelineError.self) { _ = try changes.apply(to: &refused) }
        do { _ = try changes.apply(to: &refused) } catch {
            #expect("\(error)".contains("--allow-network") && !"\(error)".contains("hunter2"), "\(error)")
        }
        changes.network.allow = true
        changes.network.reconnect = false
        let applied = try changes.apply(to: &doc)
        #expect(applied.hasStream)
        #expect(doc.streamNames == ["front", "front-2", "127.0.0.1-5000", "yard", "10.0.0.9-8554"])
        #expect(!doc.streamNames.joined().contains("hunter2") && !doc.streamNames.joined().contains("admin"))
        for (stream, url) in [("front", "rtsp://admin:hunter2@10.0.0.7:554/front"), ("127.0.0.1-5000", "udp://127.0.0.1:5000")] {
            let source = try #require(doc.declarations.first { $0.name == "\(stream)/source" })
            #expect(source.type == "stream")
            #expect(option(doc, "\(stream)/source", "url") == url)
            #expect(option(doc, "\(stream)/source", "network") == "allow" && option(doc, "\(stream)/source", "reconnect") == "false")
            #expect(option(doc, "\(stream)/source", "path") == nil)
        }
        // A file among them stays a file source.
        #expect(doc.declarations.first { $0.name == "yard/source" }?.type == "file")
        #expect(option(doc, "yard/source", "path") == "clips/yard.mkv")
    }

    @Test func aDeclaredSizeGivenWithSetReachesEveryCamera() throws {
        var doc = try PipelineParser.parse(portrait.replacingOccurrences(of: "path=in.mp4", with: "path=in.mp4 loop=true"), file: "p.fg")
        var changes = PipelineChanges()
        changes.inputs = ["rtsp://10.0.0.7/front", "rtsp://10.0.0.8/back"]
        changes.network.allow = true
        changes.settings = ["source.width=640", "source.height=480"]
        _ = try changes.apply(to: &doc)
        for stream in ["front", "back"] {
            // The file's own options (loop) are not a stream's; what --set gave is kept.
            let source = try #require(doc.declarations.first { $0.name == "\(stream)/source" })
            #expect(source.options.map(\.key).sorted() == ["height", "network", "url", "width"], "\(source.options.map(\.key))")
            #expect(option(doc, "\(stream)/source", "width") == "640" && option(doc, "\(stream)/source", "height") == "480")
        }
        // And it builds: two stream sources with a declared 640×480.
        let pipeline = try Pipeline.build(doc)
        #expect(pipeline.sources.count == 2 && pipeline.sources.allSatisfy { $0.kind == "stream" })
    }

    @Test func theStreamsListInThePipelineFileAndOutputFolders() throws {
        let text = portrait.replacingOccurrences(of: "output = encode      path=out/{stream}.mp4", with: "output = encode      path=out/all.mp4")
            + "\ncameras = streams  lobby=clips/lobby.mkv  yard=clips/yard.mkv\n"
        var doc = try PipelineParser.parse(text, file: "p.fg")
        var changes = PipelineChanges()
        changes.output = "recordings/"
        _ = try changes.apply(to: &doc)
        #expect(doc.streamNames == ["lobby", "yard"])
        #expect(option(doc, "yard/source", "path") == "clips/yard.mkv")
        #expect(option(doc, "lobby/output", "path") == "recordings/lobby.mp4")
        #expect(!doc.declarations.contains { $0.type == PipelineDocument.streamsType })
    }

    @Test func oneOutputFileForSeveralStreamsIsAOneLineError() throws {
        var doc = try PipelineParser.parse(portrait, file: "p.fg")
        var changes = PipelineChanges()
        changes.inputs = ["a.mkv", "b.mkv"]
        changes.output = "one.mp4"
        #expect(throws: PipelineError(origin: "--output", message: "'one.mp4' names one file for 2 streams: put {stream} in it (out/{stream}.mp4) or name a folder (out/)")) {
            _ = try changes.apply(to: &doc)
        }
        // The pipeline's own output without {stream}: named at its place in the file.
        var plain = try PipelineParser.parse(portrait.replacingOccurrences(of: "{stream}", with: "x"), file: "p.fg")
        var two = PipelineChanges()
        two.inputs = ["a.mkv", "b.mkv"]
        #expect(throws: PipelineError(file: "p.fg", line: 4, column: 27,
                                      message: "node 'output' (encode) would write out/x.mp4 for each of 2 streams: put {stream} in its path (out/{stream}.mp4), or give --output with {stream} or a folder")) {
            _ = try two.apply(to: &plain)
        }
        // One --input stays a one-stream run, exactly as before.
        var single = try PipelineParser.parse(portrait, file: "p.fg")
        var one = PipelineChanges()
        one.inputs = ["a.mkv"]
        _ = try one.apply(to: &single)
        #expect(single.streamNames.isEmpty && option(single, "source", "path") == "a.mkv")
    }

    @Test func aStreamsListFileSkipsCommentsAndBlankLines() throws {
        let dir = TestEnvironment.scratch("streams-list")
        let list = dir.appendingPathComponent("streams.txt")
        try "# lobby cameras\ncams/a.mkv\n\n  cams/b.mkv  \n#cams/c.mkv\n".write(to: list, atomically: true, encoding: .utf8)
        #expect(try StreamInput.readList(list.path) == ["cams/a.mkv", "cams/b.mkv"])
        try "# nothing\n".write(to: list, atomically: true, encoding: .utf8)
        #expect(throws: PipelineError.self) { _ = try StreamInput.readList(list.path) }
    }
}
