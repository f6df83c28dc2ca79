import Foundation
import FrameGraph
import FrameGraphDraw
import FuzzSupport

/// Fuzz target: a results file line (JSON) → ResultsLines.decode → written again → drawn by the
/// annotate node onto small frames of two layouts (hostile coordinates, sizes and topologies).
let annotate: Annotate = {
    let node = Annotate(name: "fuzz", style: .init(textSize: 12), resultPorts: 0)
    _ = try? node.negotiate(inputs: [FrameDescription(format: .yuv420p, width: 64, height: 48)])
    return node
}()
let frames = [Frame.make(.yuv420p, width: 64, height: 48), Frame.make(.bgra, width: 33, height: 17)]

func fuzzOne(_ bytes: [UInt8]) {
    guard let record = try? ResultsLines.decode(Data(bytes)) else { return }
    _ = try? ResultsLines.encode(record)
    for frame in frames { annotate.draw([record.results], on: frame, hudLine: record.results.producer) }
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
