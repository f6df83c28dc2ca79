import CInterrupts
import FFmpegSupport
import Foundation
import FrameGraph

/// `framegraph probe FILE|URL`: what FrameGraph sees in a media file, in one screen; for a network
/// stream (only with `--allow-network`): container, codec, size, announced and measured rate, and the
/// time to connect and to the first frame.
struct ProbeCommand {
    let arguments: Arguments

    func execute() throws -> Int32 {
        let files = Array(arguments.positional.dropFirst())
        guard !files.isEmpty else { throw Arguments.UsageError(description: "probe needs a media file or stream, e.g. framegraph probe clip.mp4") }
        for file in files {
            if StreamURL.looksLikeURL(file) {
                print(try probeStream(file))
            } else {
                print(try MediaProbe(path: file).text)
            }
        }
        return 0
    }

    /// Connects to `address`, decodes for `--seconds`, and describes what came.
    private func probeStream(_ address: String) throws -> String {
        guard arguments.has("allow-network") else {
            throw Arguments.UsageError(description: "\(StreamURL.redact(address)) is a network stream; probing it needs --allow-network")
        }
        var credentials: String?
        if let file = arguments.value("credentials") {
            let data = try FileCheck.read(file, what: "credentials file", maxBytes: 4096)
            credentials = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        }
        let url: StreamURL
        do {
            url = try StreamURL(address, credentials: credentials)
        } catch let invalid as StreamURL.Invalid {
            throw Arguments.UsageError(description: invalid.description)
        }
        let timeout = arguments.number("timeout") ?? 10
        let seconds = arguments.number("seconds") ?? 2
        let transport = arguments.value("stream-transport").flatMap(NetworkInput.Transport.init(rawValue:)) ?? .tcp
        let input = NetworkInput(url: url, transport: transport, openTimeout: timeout, readTimeout: timeout,
                                 shouldStop: { fg_interrupts_count() > 0 })
        let clock = MonotonicClock()
        let started = clock.now()
        let reader = try MediaReader(path: url.redacted, options: MediaReader.Options(network: input))
        let connected = clock.now()
        var frames = 0
        var firstFrame: Double?
        var lastFrame = connected
        while let _ = try reader.nextFrame() {
            let now = clock.now()
            if firstFrame == nil { firstFrame = now }
            frames += 1
            lastFrame = now
            if now - (firstFrame ?? now) >= seconds { break }
        }
        var lines = ["\(url.redacted)",
                     "  container:      \(reader.formatName)",
                     "  video:          \(reader.codecName) \(reader.storedWidth)×\(reader.storedHeight) \(reader.storedPixelFormat)",
                     "  announced rate: " + (reader.frameRate > 0 ? String(format: "%.3f fps", reader.frameRate) : "unknown"),
                     String(format: "  connected in:   %.0f ms (header read)", (connected - started) * 1000)]
        if let firstFrame {
            lines.append(String(format: "  first frame:    %.0f ms after the request", (firstFrame - started) * 1000))
            let span = lastFrame - firstFrame
            lines.append(frames > 1 && span > 0 ? String(format: "  measured rate:  %.2f fps (%d frames in %.2f s)", Double(frames - 1) / span, frames, span)
                                                : "  measured rate:  \(frames) frame\(frames == 1 ? "" : "s") read")
        } else {
            lines.append("  first frame:    none arrived")
        }
        return lines.joined(separator: "\n")
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
