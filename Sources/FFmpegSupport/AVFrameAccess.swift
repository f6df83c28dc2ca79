import CAVUtil
import FrameGraph

/// Plane pointers and strides of an `AVFrame` (its fixed-size C arrays arrive in Swift as tuples).
extension UnsafeMutablePointer where Pointee == AVFrame {
    func plane(_ i: Int) -> UnsafeMutablePointer<UInt8>? {
        switch i {
        case 0: return pointee.data.0
        case 1: return pointee.data.1
        case 2: return pointee.data.2
        case 3: return pointee.data.3
        default: return nil
        }
    }

    func stride(_ i: Int) -> Int {
        switch i {
        case 0: return Int(pointee.linesize.0)
        case 1: return Int(pointee.linesize.1)
        case 2: return Int(pointee.linesize.2)
        case 3: return Int(pointee.linesize.3)
        default: return 0
        }
    }
}

extension PixelFormat {
    /// The matching FFmpeg pixel format (nil for float formats, which FFmpeg stores differently).
    public var avPixelFormat: AVPixelFormat? {
        switch self {
        case .rgb24: return AV_PIX_FMT_RGB24
        case .rgba: return AV_PIX_FMT_RGBA
        case .bgra: return AV_PIX_FMT_BGRA
        case .yuv420p: return AV_PIX_FMT_YUV420P
        case .nv12: return AV_PIX_FMT_NV12
        case .gray8: return AV_PIX_FMT_GRAY8
        case .planarFloat32: return nil
        }
    }

    /// The FrameGraph format for an FFmpeg pixel format, when there is one with the same layout.
    public init?(av: AVPixelFormat) {
        switch av {
        case AV_PIX_FMT_RGB24: self = .rgb24
        case AV_PIX_FMT_RGBA: self = .rgba
        case AV_PIX_FMT_BGRA: self = .bgra
        case AV_PIX_FMT_YUV420P: self = .yuv420p
        case AV_PIX_FMT_NV12: self = .nv12
        case AV_PIX_FMT_GRAY8: self = .gray8
        default: return nil
        }
    }
}

extension Frame {
    /// Copies the pixels of an AVFrame of the same format and size into this frame.
    func copyPixels(from av: UnsafeMutablePointer<AVFrame>) {
        Frame.copyPlanes(format: format, width: width, height: height,
                         from: { (av.plane($0).map(UnsafeRawPointer.init), av.stride($0)) },
                         to: { (base(plane: $0), planes[$0].stride) })
    }

    /// Copies this frame's pixels into an AVFrame of the same format and size.
    func copyPixels(into av: UnsafeMutablePointer<AVFrame>) {
        Frame.copyPlanes(format: format, width: width, height: height,
                         from: { (UnsafeRawPointer(base(plane: $0)), planes[$0].stride) },
                         to: { (av.plane($0).map(UnsafeMutableRawPointer.init), av.stride($0)) })
    }
}
