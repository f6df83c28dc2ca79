// Which hand is raised: MediaPipe's pose landmarks (the pose-landmarks node) reach the program as an
// AsyncStream, and a hand counts as raised when its wrist is seen above its shoulder. The person's
// own left and right (landmarks 15 and 11 on the left, 16 and 12 on the right), not the picture's.
//
//   swift run -c release sample-raised-hand ../shared/media/webcam/bird.mkv
//
// Run from the repository root: the models are looked up by name in models/cache.
import FrameGraph
import FrameGraphBodies
import FrameGraphMedia
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: sample-raised-hand INPUT")
    exit(2)
}
let source = FileSource(name: "file", path: arguments[1])
let pose = PoseLandmarksNode(name: "pose")
source --> pose
let stream = pose.resultsStream()  // wired before the run; ends when the run ends

let runner: GraphRunner
do {
    runner = try GraphRunner(sources: [source], options: RunOptions(mode: .offline))
    try runner.validate()  // a bad input or model is reported here, before any frame
} catch {
    FileHandle.standardError.write(Data("sample-raised-hand: \(describe(error))\n".utf8))
    exit(2)
}
let outcome = Protected<RunReport?>(nil)
let done = Thread {
    outcome.withLock { $0 = try? runner.run() }
}
done.start()

/// Whether the wrist `wrist` is above the shoulder `shoulder` and both are seen.
func raised(_ points: [Landmark], wrist: Int, shoulder: Int) -> Bool {
    let w = points[wrist], s = points[shoulder]
    return w.y < s.y && (w.visibility ?? 0) > 0.5 && (s.visibility ?? 0) > 0.5
}

var frames = 0, raisedFrames = 0
for await item in stream {
    frames += 1
    guard let body = item.results.landmarks.first(where: { $0.label == "pose" }), body.points.count == PoseTopology.points else {
        print(String(format: "t=%.3f s  nobody", item.time))
        continue
    }
    let left = raised(body.points, wrist: 15, shoulder: PoseTopology.leftShoulder)
    let right = raised(body.points, wrist: 16, shoulder: PoseTopology.rightShoulder)
    let which = left && right ? "both hands raised" : left ? "left hand raised" : right ? "right hand raised" : "no hand raised"
    if left || right { raisedFrames += 1 }
    print(String(format: "t=%.3f s  %@", item.time, which))
}
while done.isExecuting { usleep(10_000) }
guard let report = outcome.withLock({ $0 }) else {
    FileHandle.standardError.write(Data("sample-raised-hand: the run did not complete\n".utf8))
    exit(1)
}
print("\(frames) frames, a hand raised on \(raisedFrames)")
exit(report.failure == nil ? 0 : 1)
