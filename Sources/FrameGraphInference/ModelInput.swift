import FFmpegSupport
import FrameGraph
import FrameGraphFilters
import ModelStore
import XNNPACKRuntime

/// Turns a frame into a model's NHWC float input: scale (stretch, like MediaPipe's selfie
/// segmentation, or letterbox) to the model's size as RGB24, then normalise into the predictor's
/// input buffer. Reuses its scratch frame and scaler across frames.
public final class ModelInput {
    /// What the model's input holds.
    public enum Content: String, Sendable, Equatable {
        /// Red, green, blue bytes (or gray for one-channel models), normalised.
        case rgb
        /// CIE Lab lightness L (0…100) of each pixel, normalised.
        case lightness
    }

    let content: Content
    let width: Int
    let height: Int
    let channels: Int
    let normalization: InputNormalization
    private let scaler = Scaler(method: .bilinear)
    /// The one-pass path for yuv420p and rgb24 frames (swscale for the rest).
    private var resample = ResampleToRGB()
    private let rgb: Frame
    private var lightnessRows: LightnessRows

    init(width: Int, height: Int, channels: Int, content: Content = .rgb, normalization: InputNormalization) {
        self.content = content
        self.width = width
        self.height = height
        self.channels = channels
        self.normalization = normalization
        rgb = Frame.make(channels == 1 && content == .rgb ? .gray8 : .rgb24, width: width, height: height, pool: BufferPool())
        lightnessRows = LightnessRows(width: width)
    }

    /// Values in the model's input: width × height × channels.
    var count: Int { width * height * channels }

    /// Writes `frame` into `buffer` (count width × height × channels).
    func fill(_ buffer: TensorBuffer, from frame: Frame) throws {
        try fill(buffer.pointer, from: frame)
    }

    /// Writes `frame` into `count` floats at `destination`.
    func fill(_ destination: UnsafeMutablePointer<Float>, from frame: Frame) throws {
        if frame.format == rgb.format && frame.width == width && frame.height == height {
            normalize(frame, into: destination)
        } else {
            if !resample.convert(frame, into: rgb) { try scaler.scale(frame, into: rgb) }
            normalize(rgb, into: destination)
        }
    }

    private func normalize(_ frame: Frame, into destination: UnsafeMutablePointer<Float>) {
        if content == .lightness {
            let scale = normalization.scale, offset = normalization.offset
            for y in 0..<height {
                guard let src = frame.row(y).baseAddress else { continue }
                let dst = destination + y * width
                lightnessRows.convert(src, into: dst)  // L of the row (vectorised), then normalised in place
                for x in 0..<width { dst[x] = dst[x] * scale + offset }
            }
            return
        }
        let rowCount = width * channels
        let scale = normalization.scale, offset = normalization.offset
        for y in 0..<height {
            // Plain pointer loops: the compiler vectorises the byte-to-float multiply-add.
            guard let src = frame.row(y).baseAddress else { continue }
            let dst = destination + y * rowCount
            for i in 0..<rowCount { dst[i] = Float(src[i]) * scale + offset }
        }
    }
}
