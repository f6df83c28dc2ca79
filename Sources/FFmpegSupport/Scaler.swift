import CAVUtil
import CSWScale
import FrameGraph

/// Resizes and converts 8-bit frames with libswscale. One scaler keeps one cached context, so reuse it
/// for a stream of frames of the same size and format.
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
    private var context: OpaquePointer?

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
                  dstStrides: { $0 < destination.format.planeCount ? destination.planes[$0].stride : 0 })
    }

    /// Scales raw planes (up to four; nil past the last) between any two FFmpeg pixel formats.
    func scale(from: (format: AVPixelFormat, width: Int, height: Int),
               planes: (Int) -> UnsafeMutableRawPointer?, strides: (Int) -> Int,
               to: (format: AVPixelFormat, width: Int, height: Int),
               dst: (Int) -> UnsafeMutableRawPointer?, dstStrides: (Int) -> Int) throws {
        context = sws_getCachedContext(context, Int32(from.width), Int32(from.height), from.format,
                                       Int32(to.width), Int32(to.height), to.format, method.flags, nil, nil, nil)
        guard let context else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "create scaler \(from.width)x\(from.height) -> \(to.width)x\(to.height)")
        }
        let src: [UnsafePointer<UInt8>?] = (0..<4).map { planes($0).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) } }
        let srcStride: [Int32] = (0..<4).map { Int32(strides($0)) }
        let dstPlanes: [UnsafeMutablePointer<UInt8>?] = (0..<4).map { dst($0)?.assumingMemoryBound(to: UInt8.self) }
        let dstStride: [Int32] = (0..<4).map { Int32(dstStrides($0)) }
        let rows = sws_scale(context, src, srcStride, 0, Int32(from.height), dstPlanes, dstStride)
        try check(rows, "scale \(from.width)x\(from.height) -> \(to.width)x\(to.height)")
    }
}
