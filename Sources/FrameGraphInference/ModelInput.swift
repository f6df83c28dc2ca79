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

    init(width: Int, height: Int, channels: Int, normalization: InputNormalization) {
        self.width = width
        self.height = height
        self.channels = channels
        self.normalization = normalization
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
        let scale = normalization.scale, offset = normalization.offset
        for y in 0..<height {
            // Plain pointer loops: the compiler vectorises the byte-to-float multiply-add.
            let src = UnsafePointer(frame.row(y).baseAddress ?? UnsafeMutablePointer<UInt8>(bitPattern: 1)!)
            let dst = buffer.pointer + y * rowCount
            for i in 0..<rowCount { dst[i] = Float(src[i]) * scale + offset }
        }
    }
}
