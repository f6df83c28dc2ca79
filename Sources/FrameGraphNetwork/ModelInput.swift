import FFmpegSupport
import FrameGraph
import FrameGraphFilters
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

    /// How a frame of another shape is fitted to the model's input.
    public enum Fit: String, Sendable, Equatable {
        /// Scaled to the input's size, aspect ignored (MediaPipe's selfie segmentation).
        case stretch
        /// Scaled to fit inside it, aspect kept, centred, black around (MediaPipe's face detection);
        /// results are mapped back to the frame (``Letterbox``).
        case letterbox
        /// Stretched, sampled bilinearly at each input pixel's centre and rounded to 8 bits, as
        /// MetalImage's render passes feed MetalTensor's networks (``PixelCentreSampler``).
        case pixelCentres
        /// The largest centred rectangle of the input's aspect (a square for a square input),
        /// stretched to the input (ML Kit's and most classifiers' centre crop).
        case centreCrop
    }

    /// Where a frame lands inside the model's input when letterboxed, in normalised input
    /// coordinates: a frame point (fx, fy) is at (x + fx·width, y + fy·height).
    public struct Letterbox: Sendable, Equatable {
        public var x: Float, y: Float, width: Float, height: Float

        public init(x: Float, y: Float, width: Float, height: Float) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// Results in input coordinates, re-expressed in the frame's.
        public func unproject(_ results: Results) -> Results {
            results.mapped(scaleX: 1 / width, scaleY: 1 / height, offsetX: -x / width, offsetY: -y / height)
        }
    }

    public let content: Content
    public let fit: Fit
    public let width: Int
    public let height: Int
    public let channels: Int
    public let normalization: InputNormalization
    private let scaler = Scaler(method: .bilinear)
    /// The one-pass path for yuv420p and rgb24 frames (swscale for the rest).
    private var resample = ResampleToRGB()
    private let rgb: Frame
    private var lightnessRows: LightnessRows

    public init(width: Int, height: Int, channels: Int, content: Content = .rgb, normalization: InputNormalization, fit: Fit = .stretch) {
        self.content = content
        self.fit = fit
        self.width = width
        self.height = height
        self.channels = channels
        self.normalization = normalization
        rgb = Frame.make(channels == 1 && content == .rgb ? .gray8 : .rgb24, width: width, height: height, pool: BufferPool())
        lightnessRows = LightnessRows(width: width)
    }

    /// Values in the model's input: width × height × channels.
    public var count: Int { width * height * channels }

    /// Writes `frame` into `buffer` (count width × height × channels).
    public func fill(_ buffer: TensorBuffer, from frame: Frame) throws {
        try fill(buffer.pointer, from: frame)
    }

    /// The frame as RGB as common decoders make it (for the letterboxed path: MediaPipe's models).
    private let commonRGB = CommonDecoderRGB()

    /// Whether letterboxing samples the frame directly (MediaPipe's way: bilinear at each input
    /// pixel's centre, black outside), rather than scaling it with an area filter first.
    private var samplesDirectly: Bool { fit == .letterbox && content == .rgb && channels == 3 && width == height }

    /// Where a `frameWidth`×`frameHeight` frame lands in the input (the whole input when stretched).
    public func letterbox(frameWidth: Int, frameHeight: Int) -> Letterbox {
        if samplesDirectly {
            let side = Float(max(frameWidth, frameHeight))
            return Letterbox(x: (side - Float(frameWidth)) / (2 * side), y: (side - Float(frameHeight)) / (2 * side),
                             width: Float(frameWidth) / side, height: Float(frameHeight) / side)
        }
        let r = placement(frameWidth: frameWidth, frameHeight: frameHeight)
        return Letterbox(x: Float(r.x) / Float(width), y: Float(r.y) / Float(height),
                         width: Float(r.width) / Float(width), height: Float(r.height) / Float(height))
    }

    /// The pixel rectangle of the input that the frame is scaled into.
    private func placement(frameWidth: Int, frameHeight: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        guard fit == .letterbox, frameWidth > 0, frameHeight > 0 else { return (0, 0, width, height) }
        let scale = min(Double(width) / Double(frameWidth), Double(height) / Double(frameHeight))
        let w = max(1, min(width, Int((Double(frameWidth) * scale).rounded()))), h = max(1, min(height, Int((Double(frameHeight) * scale).rounded())))
        return ((width - w) / 2, (height - h) / 2, w, h)
    }

    /// The rectangle the last letterboxed frame was scaled into (its borders are black already).
    private var lastPlacement: (x: Int, y: Int, width: Int, height: Int)?

    /// Writes `frame` into `count` floats at `destination`.
    public func fill(_ destination: UnsafeMutablePointer<Float>, from original: Frame) throws {
        let frame = fit == .centreCrop ? Self.centreCrop(original, aspect: Double(width) / Double(height)) : original
        if fit == .pixelCentres && content == .rgb && channels == 3 && normalization.perChannel == nil {
            let sampler = PixelCentreSampler(width: width, height: height, scale: normalization.scale, offset: normalization.offset)
            let source = try commonRGB.rgb(of: frame)
            if sampler.sample(source, x: 0, y: 0, width: Double(source.width), height: Double(source.height), into: destination) { return }
        }
        if samplesDirectly && normalization.perChannel == nil {
            // As MediaPipe's ImageToTensor letterboxes: the frame's centred square (its longer side)
            // sampled bilinearly at each input pixel, black where the square leaves the frame.
            let square = RotatedRegion(centerX: Float(frame.width) / 2, centerY: Float(frame.height) / 2,
                                    side: Float(max(frame.width, frame.height)), rotation: 0)
            let sampler = RegionSampler(size: width, scale: normalization.scale, offset: normalization.offset, blackOutside: true)
            if sampler.sample(square, of: try commonRGB.rgb(of: frame), into: destination) { return }
        }
        if frame.format == rgb.format && frame.width == width && frame.height == height {
            normalize(frame, into: destination)
            return
        }
        let r = placement(frameWidth: frame.width, frameHeight: frame.height)
        var target = rgb
        if r.width != width || r.height != height {
            if !(lastPlacement.map { $0 == r } ?? false) {
                // Black around the picture (MediaPipe pads with zero pixels, before normalising).
                for y in 0..<height { rgb.row(y).update(repeating: 0) }
                lastPlacement = r
            }
            target = rgb.cropped(x: r.x, y: r.y, width: r.width, height: r.height)
        }
        if !resample.convert(frame, into: target) { try scaler.scale(frame, into: target) }
        normalize(rgb, into: destination)
    }

    /// The largest centred rectangle of `aspect` (width / height), on even coordinates (4:2:0 chroma).
    public static func centreCrop(_ frame: Frame, aspect: Double) -> Frame {
        var w = frame.width, h = frame.height
        if Double(w) / Double(h) > aspect { w = Int((Double(h) * aspect).rounded()) } else { h = Int((Double(w) / aspect).rounded()) }
        w = max(2, min(frame.width, w & ~1))
        h = max(2, min(frame.height, h & ~1))
        let x = ((frame.width - w) / 2) & ~1, y = ((frame.height - h) / 2) & ~1
        guard w < frame.width || h < frame.height, frame.width >= 2, frame.height >= 2 else { return frame }
        return frame.cropped(x: x, y: y, width: w, height: h)
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
        if let perChannel = normalization.perChannel, perChannel.count == channels {
            for y in 0..<height {
                guard let src = frame.row(y).baseAddress else { continue }
                let dst = destination + y * rowCount
                for x in 0..<width {
                    for c in 0..<channels { dst[x * channels + c] = Float(src[x * channels + c]) * perChannel[c].scale + perChannel[c].offset }
                }
            }
            return
        }
        let scale = normalization.scale, offset = normalization.offset
        for y in 0..<height {
            // Plain pointer loops: the compiler vectorises the byte-to-float multiply-add.
            guard let src = frame.row(y).baseAddress else { continue }
            let dst = destination + y * rowCount
            for i in 0..<rowCount { dst[i] = Float(src[i]) * scale + offset }
        }
    }
}
