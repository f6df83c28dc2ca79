// Face detection whose results reach the program as an AsyncStream: no file is written; the
// program reads each frame's faces (in pixels) as the pipeline makes them, the way an app would.
//
//   swift run -c release sample-face-results samples/media/portrait.mp4
//
// Run from the repository root: the model is looked up by name in models/cache.
import FrameGraph
import FrameGraphFaces
import FrameGraphMedia
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: sample-face-results INPUT")
    exit(2)
}
let source = FileSource(name: "file", path: arguments[1])
let faces = FaceDetection.node(name: "faces")
source --> faces
let stream = faces.resultsStream()  // wired before the run; ends when the run ends

let runner: GraphRunner
do {
    runner = try GraphRunner(sources: [source], options: RunOptions(mode: .offline))
    try runner.validate()  // a bad input or model is reported here, before any frame
} catch {
    FileHandle.standardError.write(Data("sample-face-results: \(describe(error))\n".utf8))
    exit(2)
}
let outcome = Protected<RunReport?>(nil)
let done = Thread {
    outcome.withLock { $0 = try? runner.run() }
}
done.start()

var frames = 0
for await item in stream {
    frames += 1
    let boxes = item.results.detections.map { face in
        String(format: "%.0f,%.0f %.0fx%.0f px (%.2f)", face.box.x * Float(item.width), face.box.y * Float(item.height),
               face.box.width * Float(item.width), face.box.height * Float(item.height), face.score)
    }
    print(String(format: "t=%.3f s  faces %d", item.time, item.results.detections.count) + (boxes.isEmpty ? "" : "  " + boxes.joined(separator: "  ")))
}
while done.isExecuting { usleep(10_000) }
guard let report = outcome.withLock({ $0 }) else {
    FileHandle.standardError.write(Data("sample-face-results: the run did not complete\n".utf8))
    exit(1)
}
print("\(frames) frames with results")
exit(report.failure == nil ? 0 : 1)
