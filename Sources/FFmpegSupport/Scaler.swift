import CAVUtil
import CSWScale
import FrameGraph

/// Resizes and converts 8-bit frames with libswscale. One scaler keeps one cached context, so reuse it
/// for a stream of frames of the same size and format.
///
/// Conversions between Y'CbCr and RGB use the frames' ``ColorDescription``: the source's matrix and
/// range (BT.709 for HD, BT.601 for SD when the file says nothing), and the destination's when it has
/// one (an encoder's output), else the source's.
public final class Scaler {
    /// Interpolation used when the size changes.
    public enum Method: String, Sendable, CaseIterable {
        case bilinear, area, bicubic, nearest

        var flags: Int32 {
            switch self {
            case .bilinear: return SWS_BILINEAR
            case .area: return SWS_AREA
            case .bicubic: return SWS_BICUBIC
            case .nearest: return SWS_POINT
            }
        }
    }

    public let method: Method
    /// Use swscale's default (fast) Y'CbCr ↔ RGB path, as the ffmpeg tool and OpenCV's video reader
    /// do, instead of the accurate one: for feeding models the same pixels their reference
    /// pipelines saw (MediaPipe's face models, fed by OpenCV or ffmpeg). Default false.
    public var matchesCommonDecoders = false
    private var context: OpaquePointer?
    /// The colour settings given to `context` (set again when either changes).
    private var appliedColor: (context: OpaquePointer, source: ColorDescription, destination: ColorDescription)?

    public init(method: Method = .bilinear) {
        self.method = method
    }

    deinit {
        sws_freeContext(context)
    }

    /// Scales `source` (a rectangle of a larger frame is fine: crops are plane offsets) into
    /// `destination`, converting the pixel format. Both must be 8-bit formats.
    public func scale(_ source: Frame, into destination: Frame) throws {
        guard let inFormat = source.format.avPixelFormat, let outFormat = destination.format.avPixelFormat else {
            throw FFmpegError(code: fg_averror(EINVAL),
                              operation: "scale \(source.format) to \(destination.format) (float formats are not handled by swscale)")
        }
        try scale(from: (inFormat, source.width, source.height), planes: { $0 < source.format.planeCount ? source.base(plane: $0) : nil },
                  strides: { $0 < source.format.planeCount ? source.planes[$0].stride : 0 },
                  to: (outFormat, destination.width, destination.height),
                  dst: { $0 < destination.format.planeCount ? destination.base(plane: $0) : nil },
                  dstStrides: { $0 < destination.format.planeCount ? destination.planes[$0].stride : 0 },
                  color: (source.color, destination.color))
    }

    /// Scales raw planes (up to four; nil past the last) between any two FFmpeg pixel formats.
    func scale(from: (format: AVPixelFormat, width: Int, height: Int),
               planes: (Int) -> UnsafeMutableRawPointer?, strides: (Int) -> Int,
               to: (format: AVPixelFormat, width: Int, height: Int),
               dst: (Int) -> UnsafeMutableRawPointer?, dstStrides: (Int) -> Int,
               color: (source: ColorDescription, destination: ColorDescription) = (.unspecified, .unspecified)) throws {
        // Accurate rounding and full chroma interpolation where the colour model changes: swscale's
        // fast paths are off by up to 3-5 levels in Y'CbCr ↔ RGB (measured on colour bars), more than
        // a round trip may lose. Scaling within one format (a mask, a resize) keeps the fast path.
        let flags = from.format == to.format || matchesCommonDecoders ? method.flags : method.flags | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP
        context = sws_getCachedContext(context, Int32(from.width), Int32(from.height), from.format,
                                       Int32(to.width), Int32(to.height), to.format, flags, nil, nil, nil)
        guard let context else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "create scaler \(from.width)x\(from.height) -> \(to.width)x\(to.height)")
        }
        applyColor(context, from: from, to: to, color: color)
        let src: [UnsafePointer<UInt8>?] = (0..<4).map { planes($0).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) } }
        let srcStride: [Int32] = (0..<4).map { Int32(strides($0)) }
        let dstPlanes: [UnsafeMutablePointer<UInt8>?] = (0..<4).map { dst($0)?.assumingMemoryBound(to: UInt8.self) }
        let dstStride: [Int32] = (0..<4).map { Int32(dstStrides($0)) }
        let rows = sws_scale(context, src, srcStride, 0, Int32(from.height), dstPlanes, dstStride)
        try check(rows, "scale \(from.width)x\(from.height) -> \(to.width)x\(to.height)")
    }

    /// Gives swscale the matrices and ranges of both sides (its default is BT.601 limited for every
    /// picture, which shifts the colours of HD video and of full-range pictures).
    private func applyColor(_ context: OpaquePointer, from: (format: AVPixelFormat, width: Int, height: Int),
                            to: (format: AVPixelFormat, width: Int, height: Int),
                            color: (source: ColorDescription, destination: ColorDescription)) {
        var source = color.source.resolved(height: from.height)
        if Self.isFullRangeFormat(from.format) { source.range = .full }
        var destination = color.destination
        if !destination.hasMatrix { destination.matrix = source.matrix }
        if destination.range == .unspecified { destination.range = source.range }
        if Self.isFullRangeFormat(to.format) { destination.range = .full }
        if let applied = appliedColor, applied.context == context, applied.source == source, applied.destination == destination { return }
        let sourceTable = sws_getCoefficients(Self.swsColorspace(source.matrix))
        let destinationTable = sws_getCoefficients(Self.swsColorspace(destination.matrix))
        // Brightness 0, contrast and saturation 1.0 in 16.16 fixed point: swscale's neutral values.
        _ = sws_setColorspaceDetails(context, sourceTable, source.range == .full ? 1 : 0, destinationTable,
                                     destination.range == .full ? 1 : 0, 0, 1 << 16, 1 << 16)
        appliedColor = (context, source, destination)
    }

    /// swscale's coefficient tables are indexed by the H.273 matrix code (1 BT.709, 5/6 BT.601,
    /// 7 SMPTE 240M, 9/10 BT.2020, 4 FCC); anything else is BT.601.
    static func swsColorspace(_ matrix: Int32) -> Int32 {
        [1, 4, 5, 6, 7, 9, 10].contains(matrix) ? matrix : 5
    }

    /// The JPEG-style formats whose Y'CbCr is full range by definition.
    static func isFullRangeFormat(_ format: AVPixelFormat) -> Bool {
        [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUVJ411P].contains(format)
    }
}

/// swscale's 16-bit fixed-point Y'CbCr → R'G'B' coefficients, as its unscaled (fast) converter holds
/// them: `R = Y' + hi16(V · vToR)` and so on (see `fg_yuv_fixed` in CFrameGraphKernels for the whole
/// arithmetic). Made from the context's own colour settings by the formulas of swscale's
/// `ff_yuv2rgb_c_init_tables`; a caller that computes with them checks once that its bytes equal
/// swscale's (``FrameGraphMedia/RGBConverter`` does).
public struct SwscaleFixedPoint: Hashable, Sendable {
    public var yOffset: Int16
    public var yScale: Int16
    public var uvOffset: Int16
    public var vToR: Int16
    public var uToG: Int16
    public var vToG: Int16
    public var uToB: Int16
}

extension Scaler {
    /// The fixed-point coefficients of the conversion this scaler last did (nil before its first
    /// frame, or when swscale does not report its settings).
    public func fixedPointCoefficients() -> SwscaleFixedPoint? {
        guard let context else { return nil }
        var inverse: UnsafeMutablePointer<Int32>?, table: UnsafeMutablePointer<Int32>?
        var sourceRange: Int32 = 0, destinationRange: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        guard sws_getColorspaceDetails(context, &inverse, &sourceRange, &table, &destinationRange, &brightness, &contrast, &saturation) >= 0,
              let inverse else { return nil }
        var crv = Int64(inverse[0]), cbu = Int64(inverse[1]), cgu = -Int64(inverse[2]), cgv = -Int64(inverse[3])
        var cy: Int64 = 1 << 16, oy: Int64 = 0
        if sourceRange == 0 {
            cy = cy * 255 / 219
            oy = 16 << 16
        } else {
            crv = crv * 224 / 255
            cbu = cbu * 224 / 255
            cgu = cgu * 224 / 255
            cgv = cgv * 224 / 255
        }
        let c = Int64(contrast), s = Int64(saturation)
        cy = (cy * c) >> 16
        crv = (crv * c * s) >> 32
        cbu = (cbu * c * s) >> 32
        cgu = (cgu * c * s) >> 32
        cgv = (cgv * c * s) >> 32
        oy -= 256 * Int64(brightness)
        /// swscale's rounding of a 16.16 value to 16 bits (saturating).
        func round16(_ f: Int64) -> Int16 {
            let r = (f + (1 << 15)) >> 16
            return r < -0x7FFF ? Int16.min : Int16(min(r, 0x7FFF))
        }
        return SwscaleFixedPoint(yOffset: round16(oy * 8), yScale: round16(cy * 8192), uvOffset: 0x400,
                                 vToR: round16(crv * 8192), uToG: round16(cgu * 8192), vToG: round16(cgv * 8192), uToB: round16(cbu * 8192))
    }
}
