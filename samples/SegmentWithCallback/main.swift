// Portrait segmentation with a results callback: no file is written; a small sink node hands each
// mask's share of person pixels (and its timestamp) to a closure, the way an app would use results.
//
//   swift run -c release sample-segment-callback samples/media/portrait.mp4
//
// Run from the repository root: the model is looked up by name in models/cache.
import FrameGraph
import FrameGraphNetwork
import FrameGraphMedia
import Foundation

/// A sink that calls `onMask(time, coverage)` for every mask: coverage is the share of pixels whose
/// mask value is at least one half (the person).
final class MaskCallback: SinkNode, @unchecked Sendable {
    let onMask: @Sendable (Double, Double) -> Void

    init(name: String, onMask: @escaping @Sendable (Double, Double) -> Void) {
        self.onMask = onMask
        super.init(name: name)
    }

    override func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        if let mask = inputs.first { try require(format: mask.format, in: [.gray8]) }
        return nil
    }

    override func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        var person = 0
        withExtendedLifetime(frame) {
            for y in 0..<frame.height {
                for value in frame.row(y) where value >= 128 { person += 1 }
            }
        }
        onMask(frame.mediaTime, Double(person) / Double(frame.width * frame.height))
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: sample-segment-callback INPUT")
    exit(2)
}
let source = FileSource(name: "file", path: arguments[1])
let network = NetworkNode(name: "segment", model: "selfie_segmentation", decoder: SegmentationDecoder())
let results = MaskCallback(name: "results") { time, coverage in
    print(String(format: "t=%.3f s  person %.1f %%", time, coverage * 100))
}
source --> network --> results

do {
    let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
    print("\(report.framesOut) masks")
    exit(report.failure == nil ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("sample-segment-callback: \(describe(error))\n".utf8))
    exit(2)
}
