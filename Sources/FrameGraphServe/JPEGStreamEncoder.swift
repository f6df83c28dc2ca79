import CJPEGTurbo
import FFmpegSupport
import FrameGraph

/// Encodes a stream of frames as JPEG pictures (a live view's MJPEG) with libjpeg-turbo, straight from
/// the frame's Y'CbCr planes: a decoded BT.601 video frame (yuv420p, limited range: SD video) goes
/// in as it is, its levels stretched to the JPEG's full range by a table on the way into the DCT (one
/// pass over the picture, no converted copy); a full-range BT.601 frame goes in unchanged; any other
/// frame (RGB, NV12, BT.709 video) is first converted to full-range BT.601 4:2:0 by swscale into a
/// frame the encoder keeps. The compressor, its output buffer and its rows are kept between pictures.
/// Not thread-safe: one encoding thread.
///
/// ```swift
/// let encoder = JPEGStreamEncoder(quality: 80)
/// let bytes = try encoder.encode(frame)
/// ```
public final class JPEGStreamEncoder {
    /// What went wrong making a picture.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// libjpeg's quality, 1 … 100.
    public let quality: Int
    private let encoder: OpaquePointer?
    private let scaler = Scaler(method: .bilinear)
    private var converted: Frame?

    /// The live view's quality: libjpeg's 75 (its default), about as large as FFmpeg's `-q:v 5` picture.
    public static let liveQuality = 75

    public init(quality: Int = JPEGStreamEncoder.liveQuality) {
        self.quality = max(1, min(100, quality))
        encoder = fg_jpeg_encoder_new()
    }

    deinit { fg_jpeg_encoder_free(encoder) }

    /// `frame` (any 8-bit format) as JPEG bytes: full-range BT.601 (JFIF) 4:2:0.
    public func encode(_ frame: Frame) throws(Failure) -> [UInt8] {
        let source = frame.color.resolved(height: frame.height)
        let isBT601 = source.matrix == ColorDescription.bt601Code || source.matrix == ColorDescription.bt470bgCode
        if frame.format == .yuv420p && isBT601 && source.range != .unspecified {
            return try encodePlanes(frame, stretch: source.range == .limited)
        }
        guard frame.format.avPixelFormat != nil else { throw Failure(description: "a \(frame.format) frame cannot be shown as JPEG") }
        if converted?.width != frame.width || converted?.height != frame.height {
            var made = Frame.make(.yuv420p, width: frame.width, height: frame.height)
            made.color = ColorDescription(range: .full, matrix: ColorDescription.bt470bgCode, primaries: source.primaries, transfer: source.transfer)
            converted = made
        }
        guard let converted else { throw Failure(description: "no picture to convert into") }
        do {
            try scaler.scale(frame, into: converted)
        } catch {
            throw Failure(description: "\(error)")
        }
        return try encodePlanes(converted, stretch: false)
    }

    /// Limited-range levels to full range, as swscale maps them: luma (y − 16) × 255 / 219, chroma
    /// (c − 128) × 255 / 224 + 128, rounded and clamped.
    static let lumaTable: [UInt8] = (0..<256).map { UInt8(max(0, min(255, (Double($0 - 16) * 255 / 219).rounded()))) }
    static let chromaTable: [UInt8] = (0..<256).map { UInt8(max(0, min(255, (Double($0 - 128) * 255 / 224 + 128).rounded()))) }

    private func encodePlanes(_ frame: Frame, stretch: Bool) throws(Failure) -> [UInt8] {
        guard let encoder else { throw Failure(description: "no memory for the JPEG encoder") }
        var error = [CChar](repeating: 0, count: 256)
        var out: UnsafePointer<UInt8>?
        var size = 0
        let status = withExtendedLifetime(frame) { () -> Int32 in
            let planes: [UnsafePointer<UInt8>?] = (0..<3).map { UnsafePointer(frame.base(plane: $0).assumingMemoryBound(to: UInt8.self)) }
            let strides: [Int32] = (0..<3).map { Int32(frame.planes[$0].stride) }
            return Self.lumaTable.withUnsafeBufferPointer { luma in
                Self.chromaTable.withUnsafeBufferPointer { chroma in
                    fg_jpeg_encode_420(encoder, planes, strides, Int32(frame.width), Int32(frame.height), Int32(quality),
                                       stretch ? luma.baseAddress : nil, stretch ? chroma.baseAddress : nil,
                                       &out, &size, &error, 256)
                }
            }
        }
        guard status == 0, let out else {
            throw Failure(description: "JPEG: " + String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return [UInt8](UnsafeBufferPointer(start: out, count: size))
    }
}
