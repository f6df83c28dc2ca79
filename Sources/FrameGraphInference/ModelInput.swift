import FFmpegSupport
import FrameGraph
import XNNPACKRuntime

/// Turns a frame into a model's NHWC float input: scale (stretch, like MediaPipe's selfie
/// segmentation, or letterbox) to the model's size as RGB24, then normalise into the predictor's
/// input buffer. Reuses its scratch frame and scaler across frames.
final class ModelInput {
    let width: Int
    let height: Int
    let channels: Int
    let normalization: InputNormalization
    private let scaler = Scaler(method: .bilinear)
    private let rgb: Frame
    /// The float for each of the 256 byte values: one load per value instead of a multiply-add.
    private let table: [Float]

    init(width: Int, height: Int, channels: Int, normalization: InputNormalization) {
        self.width = width
        self.height = height
        self.channels = channels
        self.normalization = normalization
        table = (0..<256).map { Float($0) * normalization.scale + normalization.offset }
        rgb = Frame.make(channels == 1 ? .gray8 : .rgb24, width: width, height: height, pool: BufferPool())
    }

    /// Writes `frame` into `buffer` (count width × height × channels).
    func fill(_ buffer: TensorBuffer, from frame: Frame) throws {
        if frame.format == rgb.format && frame.width == width && frame.height == height {
            normalize(frame, into: buffer)
        } else {
            try scaler.scale(frame, into: rgb)
            normalize(rgb, into: buffer)
        }
    }

    private func normalize(_ frame: Frame, into buffer: TensorBuffer) {
        let rowCount = width * channels
        table.withUnsafeBufferPointer { t in
            for y in 0..<height {
                let src = frame.row(y)
                let dst = buffer.pointer + y * rowCount
                for i in 0..<rowCount { dst[i] = t[Int(src[i])] }
            }
        }
    }
}
