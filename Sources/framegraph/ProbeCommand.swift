import FFmpegSupport
import Foundation

/// `framegraph probe FILE`: what FrameGraph sees in a media file, in one screen.
struct ProbeCommand {
    let arguments: Arguments

    func execute() throws -> Int32 {
        let files = Array(arguments.positional.dropFirst())
        guard !files.isEmpty else { throw Arguments.UsageError(description: "probe needs a media file, e.g. framegraph probe clip.mp4") }
        for file in files { print(try MediaProbe(path: file).text) }
        return 0
    }

    /// The codec lines of `framegraph nodes`: what the encode node can write on this machine.
    static func codecListing() -> String {
        let available = VideoCodecChoice.available
        var lines = ["", "video codecs this machine's FFmpeg encodes (encode codec=…):"]
        for c in VideoCodecChoice.all {
            let encoder = available.first { $0.codec.name == c.name }?.encoder
            lines.append("  \(c.name.padding(toLength: 7, withPad: " ", startingAt: 0)) \(c.summary): " + (encoder.map { "yes (\($0))" } ?? "no (needs \(c.encoders.joined(separator: " or ")))"))
        }
        lines.append("containers: .mp4 .mov .mkv .webm; image sequences: %d patterns ending in .png .jpg")
        return lines.joined(separator: "\n")
    }
}
