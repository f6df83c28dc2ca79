// A MetalTensor model used the way MetalTensor's README integrates it, on Linux: the network from
// its plist, the weights from its .bin and .json, the MetalImage-style chain (source → crop → net),
// drop-while-busy (synchronizedProcessing = false), and the output read by layer name.
//
//   swift run -c release sample-metaltensor samples/media/portrait.mp4 ../shared/models/metaltensor/PortraitSegmentNet.plist
//
// MetalTensor's steps, and what each is here:
//   1. MetalNeuralNetwork *net = [[MetalNeuralNetwork alloc] initWithPlist:plist];  → try MetalNeuralNetwork(plist:)
//   2. [net loadWeights:@"X.bin" mapFile:@"X.json"]; [net compile:device];          → try net.loadWeights(_:mapFile:)
//   3. net.synchronizedProcessing = NO;                                             → net.synchronizedProcessing = false
//   4. [camera addTarget:crop]; [crop addTarget:net];                              → source --> crop --> net
//   5. read the output image of layer "output" after each prediction              → net.onOutputs = { outputs, _ in outputs["output"] }
import FrameGraph
import FrameGraphFilters
import FrameGraphMetalTensor
import FrameGraphMedia
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: sample-metaltensor INPUT MODEL.plist   (MODEL.json and MODEL.bin beside it)")
    exit(2)
}
let plist = URL(fileURLWithPath: arguments[2])
let base = plist.deletingPathExtension()
let frames = Protected<[(time: Double, person: Double)]>([])
do {
    let net = try MetalNeuralNetwork(plist: plist, name: "net")
    try net.loadWeights(base.appendingPathExtension("bin"), mapFile: base.appendingPathExtension("json"))
    net.synchronizedProcessing = false
    let output = net.inputShape.map { "input \($0)" } ?? ""
    net.onOutputs = { outputs, frame in
        // The layer named "output": PortraitSegmentNet's 128×128 person mask.
        guard let mask = outputs["output"] else { return }
        let person = mask.values.reduce(0) { $0 + Double($1 > 0.5 ? 1 : 0) } / Double(max(mask.values.count, 1))
        frames.withLock { $0.append((frame.mediaTime, person)) }
    }
    let source = FileSource(name: "file", path: arguments[1])
    let square = Crop(name: "square", region: .centerSquare)
    source --> square --> net --> NullSink(name: "end")
    let report = try GraphRunner(sources: [source], options: RunOptions(mode: .offline)).run()
    for f in frames.withLock({ $0 }) where Int((f.time * 1000).rounded()) % 500 < 34 {
        print(String(format: "t=%.3f s  person covers %.1f %% of the square", f.time, 100 * f.person))
    }
    print("\(frames.withLock { $0.count }) frames through \(plist.lastPathComponent) (\(output)); \(report.failure == nil ? "completed" : "failed")")
    exit(report.failure == nil ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("sample-metaltensor: \(describe(error))\n".utf8))
    exit(2)
}
