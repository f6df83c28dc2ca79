// The MetalImage-style chain in code: camera (or a video file) → crop → resize → network →
// composite → encoder, wired with `-->` and run by a GraphRunner.
//
//   swift run -c release sample-chain samples/media/portrait.mp4 out/chain.mp4
//   swift run -c release sample-chain /dev/video0 out/chain.mp4 10      (a camera, live, 10 seconds)
//
// Run from the repository root: the model is looked up by name in models/cache.
import FrameGraph
import FrameGraphCamera
import FrameGraphFilters
import FrameGraphNetwork
import FrameGraphMedia
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: sample-chain INPUT.mp4|/dev/videoN OUTPUT.mp4 [SECONDS]")
    exit(2)
}
let input = arguments[1], output = arguments[2]
let isCamera = input.hasPrefix("/dev/video")

// Sources: a camera delivers in real time (live); a file is processed offline, every frame.
let source: SourceNode = isCamera ? CameraSource(name: "camera", settings: CameraSettings(path: input))
                                  : FileSource(name: "file", path: input)
let crop = Crop(name: "crop", region: .centerSquare)
let resize = Resize(name: "resize", width: 512, height: 512)
let network = NetworkNode(name: "segment", model: "selfie_segmentation", decoder: SegmentationDecoder(smoothing: 0.3))
let composite = BackgroundComposite(name: "matte", mode: .colour(0, 177, 64))
let encoder = FileSink(name: "encoder", path: output)

// camera --> crop --> resize --> network --> composite --> encoder; the composite also takes the
// resized frame itself on its first port.
source --> crop --> resize --> network --> composite.port(1)
resize --> composite.port(0)
composite --> encoder

var options = RunOptions(mode: isCamera ? .live : .offline)
if arguments.count > 3, let seconds = Double(arguments[3]) { options.duration = seconds }
do {
    let report = try GraphRunner(sources: [source], options: options).run()
    print(report.table())
    exit(report.failure == nil ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("sample-chain: \(describe(error))\n".utf8))
    exit(2)
}
