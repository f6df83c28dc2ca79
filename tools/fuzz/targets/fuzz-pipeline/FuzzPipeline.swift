import Foundation
import FrameGraphPipelines
import FuzzSupport

/// Fuzz target: pipeline description text → parser → builder (node catalog, option specs, wiring),
/// and the same text as the one-line form (`framegraph run -e`), then the command line's typed
/// rewrites (results, preview). Nothing is run or opened: building only makes nodes and connects them.
func fuzzOne(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    for parse in [{ try PipelineParser.parse(text, file: "fuzz.fg") }, { try InlinePipeline.parse(text) }] {
        guard var document = try? parse() else { continue }
        _ = try? Pipeline.build(document)
        try? document.applyResults("r.jsonl")
        _ = try? document.applyPreview(title: "fuzz", writeFiles: false)
        _ = try? Pipeline.build(document)
    }
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
