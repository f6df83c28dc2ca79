import Foundation
import FrameGraphPipelines
import FuzzSupport

/// Fuzz target: pipeline description text → parser → builder (node catalog, option specs, wiring).
/// Nothing is run or opened: building only makes nodes and connects them.
func fuzzOne(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let document = try? PipelineParser.parse(text, file: "fuzz.fg") else { return }
    _ = try? Pipeline.build(document)
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
