import FFmpegSupport
import Foundation
import FrameGraph

extension ImageLabeler {
    /// Labels a media file as `framegraph label` does: a photo (a file with one picture) once, with
    /// `index` and `time` nil; a video frame by frame, at most `maxFrames`, until `shouldStop` says so.
    /// `each` gets every picture's labels as they are made.
    ///
    /// ```swift
    /// try labeler.labelFile("photo.jpg") { index, time, labels in print(labels.first?.text ?? "-") }
    /// ```
    public func labelFile(_ path: String, maxFrames: Int = .max, shouldStop: () -> Bool = { false },
                          each: (_ index: Int?, _ time: Double?, _ labels: [ImageLabel]) throws -> Void) throws {
        let reader = try MediaReader(path: path, options: .init())
        var frames: [Frame] = []
        // A photo has one picture: read two to tell a photo from a video.
        while frames.count < 2, let f = try reader.nextFrame() { frames.append(f) }
        guard let first = frames.first else { throw GraphError.io(path: path, reason: "holds no picture") }
        if frames.count == 1 { return try each(nil, nil, try results(in: first)) }
        var index = 0
        func label(_ frame: Frame) throws {
            try each(index, frame.mediaTime, try results(in: frame))
            index += 1
        }
        for f in frames where index < maxFrames { try label(f) }
        while index < maxFrames, !shouldStop(), let f = try reader.nextFrame() { try label(f) }
    }
}
