// Colorize a video file: each frame's Lab lightness goes through FrameGraph's colorizer, and the
// predicted a/b (48×48 for the shipped model, smoothed over time) is upsampled and joined with the frame's own lightness.
//
//   swift run -c release sample-colorize samples/media/portrait.mp4 out/colorized.mp4
//
// Run from the repository root: the model is models/colorizer/colorizer.onnx.
import FrameGraph
import FrameGraphFilters
import FrameGraphNetwork
import FrameGraphMedia
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: sample-colorize INPUT OUTPUT.mp4")
    exit(2)
}
let source = FileSource(name: "file", path: arguments[1])
let colorizer = NetworkNode(name: "colorizer", model: "colorizer", decoder: ColorizerDecoder(smoothing: 0.6, sceneCut: 6),
                            options: .init(normalization: .lightness, input: .lightness))
let recombine = LabRecombine(name: "recombine")
let encoder = FileSink(name: "encoder", path: arguments[2])

source --> recombine.port(0)            // the frame: full-resolution lightness
source --> colorizer --> recombine.port(1)  // its predicted a/b
recombine --> encoder

do {
    let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
    print(report.table())
    exit(report.failure == nil ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("sample-colorize: \(describe(error))\n".utf8))
    exit(2)
}
