// Image labeling in ML Kit's shape: a labeler from a local model file, its options (threshold,
// result count), the labels of photos (synchronously) and of a video's frames (asynchronously,
// with async/await), each label with its text, confidence and index.
//
//   swift run -c release sample-label-images photo.jpg [more photos or videos…]
//
// ML Kit's steps, and what each is here:
//   let localModel = LocalModel(path: path)                          → LocalModel(path:)
//   let options = CustomImageLabelerOptions(localModel: localModel)  → ImageLabelerOptions(localModel:)
//   options.confidenceThreshold = 0.5                                → options.confidenceThreshold = 0.5 (nil: the model's)
//   let labeler = ImageLabeler.imageLabeler(options: options)        → try ImageLabeler(options:)
//   labeler.results(in: image) / labeler.process(image) { … }        → results(inImageAt:), results(in:), process(_:) async
//
// The model: models/cache/efficientnet_lite0.onnx (the setup builds it from its PyPI wheel; labels and
// normalisation are in its metadata), or $LABEL_MODEL (a .tflite with metadata works the same).
import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphLabeling

let files = Array(CommandLine.arguments.dropFirst())
guard !files.isEmpty else {
    print("usage: sample-label-images PHOTO|VIDEO …")
    exit(2)
}
var options = ImageLabelerOptions(localModel: LocalModel(path: ProcessInfo.processInfo.environment["LABEL_MODEL"] ?? "efficientnet_lite0"))
options.maxResultCount = 3
do {
    let labeler = try ImageLabeler(options: options)
    print("model labels: \(labeler.info.labels.count), threshold in force: \(labeler.threshold)")
    for file in files {
        let reader = try MediaReader(path: file, options: .init())
        var frames: [Frame] = []
        while frames.count < 2, let f = try reader.nextFrame() { frames.append(f) }
        if frames.count == 1 {
            // A photo: synchronously.
            let labels = try labeler.results(inImageAt: file)
            print("\(file): " + labels.map { String(format: "%@ %.2f (#%d)", $0.text, $0.confidence, $0.index) }.joined(separator: ", "))
            continue
        }
        // A video: each second's first frame, asynchronously.
        var next = 0.0, count = 0
        while let frame = frames.isEmpty ? try reader.nextFrame() : frames.removeFirst() {
            count += 1
            guard frame.mediaTime >= next else { continue }
            next += 1
            let labels = try await labeler.process(frame)
            print(String(format: "%@ t=%.2f s: ", file, frame.mediaTime) + labels.map { String(format: "%@ %.2f", $0.text, $0.confidence) }.joined(separator: ", "))
        }
        print("\(file): \(count) frames")
    }
} catch {
    FileHandle.standardError.write(Data("sample-label-images: \(describe(error))\n".utf8))
    exit(2)
}
