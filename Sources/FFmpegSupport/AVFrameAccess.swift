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

/// Gives a ``PixelBuffer`` back when FFmpeg lets go of the last reference to it (see
/// ``Frame/wrappedAVFrame(like:)``).
private let releasePixelBuffer: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?) -> Void = { opaque, _ in
    if let opaque { Unmanaged<PixelBuffer>.fromOpaque(opaque).release() }
}

extension Frame {
    /// Whether every plane starts on a 64-byte boundary with a stride that is a multiple of 64: what
    /// FFmpeg's own frames guarantee and its SIMD code may assume.
    var planesAligned64: Bool {
        (0..<format.planeCount).allSatisfy { Int(bitPattern: base(plane: $0)) % 64 == 0 && planes[$0].stride % 64 == 0 }
    }

    /// A reference-counted AVFrame over this frame's pixels, without copying them: its buffer holds
    /// the ``PixelBuffer`` (read-only) until FFmpeg unreferences it, so an encoder that keeps the
    /// frame keeps the pixels; fields other than the pixels are copied from `template`. Nil when
    /// FFmpeg cannot allocate; the caller frees the result with `av_frame_free`.
    func wrappedAVFrame(like template: UnsafeMutablePointer<AVFrame>) -> UnsafeMutablePointer<AVFrame>? {
        guard format.planeCount <= 4, let wrapped = av_frame_alloc() else { return nil }
        let retained = Unmanaged.passRetained(buffer)
        guard let reference = av_buffer_create(buffer.bytes.assumingMemoryBound(to: UInt8.self), buffer.capacity, releasePixelBuffer,
                                               retained.toOpaque(), Int32(AV_BUFFER_FLAG_READONLY)) else {
            retained.release()
            var doomed: UnsafeMutablePointer<AVFrame>? = wrapped
            av_frame_free(&doomed)
            return nil
        }
        _ = av_frame_copy_props(wrapped, template)
        wrapped.pointee.format = template.pointee.format
        wrapped.pointee.width = template.pointee.width
        wrapped.pointee.height = template.pointee.height
        wrapped.pointee.buf.0 = reference
        let p = (0..<4).map { $0 < format.planeCount ? base(plane: $0).assumingMemoryBound(to: UInt8.self) : nil }
        let s = (0..<4).map { $0 < format.planeCount ? Int32(planes[$0].stride) : 0 }
        wrapped.pointee.data.0 = p[0]; wrapped.pointee.data.1 = p[1]; wrapped.pointee.data.2 = p[2]; wrapped.pointee.data.3 = p[3]
        wrapped.pointee.linesize.0 = s[0]; wrapped.pointee.linesize.1 = s[1]; wrapped.pointee.linesize.2 = s[2]; wrapped.pointee.linesize.3 = s[3]
        return wrapped
    }
}
