import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// Writes single frames as PNG or JPEG files with FFmpeg's encoders, each beside its destination
/// under a temporary name and renamed into place.
public final class ImageWriter {
    /// The picture formats, by file extension.
    public enum Kind: Sendable {
        case png, jpeg
        public init?(path: String) {
            switch path.split(separator: ".").last?.lowercased() {
            case "png": self = .png
            case "jpg", "jpeg": self = .jpeg
            default: return nil
            }
        }
    }

    private let scaler = Scaler(method: .bilinear)

    public init() { _ = FFmpegLog.configured }

    /// Encodes `frame` (any 8-bit format; converted to RGB24, or kept as gray8) and writes it to `path`.
    public func writePNG(_ frame: Frame, to path: String) throws {
        try write(frame, to: path, kind: .png)
    }

    /// Writes `frame` as the kind `path`'s extension names (PNG, or JPEG at `quality` 2 best … 31).
    public func write(_ frame: Frame, to path: String, quality: Int = 3) throws {
        guard let kind = Kind(path: path) else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "choose a picture format (use .png, .jpg or .jpeg)", path: path)
        }
        try write(frame, to: path, kind: kind, quality: quality)
    }

    private func write(_ frame: Frame, to path: String, kind: Kind, quality: Int = 3) throws {
        let data = try encode(frame, kind: kind, quality: quality, path: path)
        try OutputFile.write(data, to: path)  // beside the destination, then renamed into place
    }

    /// `frame` as JPEG bytes in memory (quality 2 best … 31), for a picture served over HTTP.
    public func jpegData(_ frame: Frame, quality: Int = 5) throws -> Data {
        try encode(frame, kind: .jpeg, quality: quality, path: "(picture)")
    }

    private func encode(_ frame: Frame, kind: Kind, quality: Int, path: String) throws -> Data {
        let name = kind == .png ? "PNG" : "JPEG"
        guard let encoder = avcodec_find_encoder(kind == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_MJPEG) else {
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "find \(name) encoder", path: path)
        }
        var codec = avcodec_alloc_context3(encoder)
        var picture = av_frame_alloc()
        var packet = av_packet_alloc()
        defer {
            avcodec_free_context(&codec)
            av_frame_free(&picture)
            av_packet_free(&packet)
        }
        guard let codec, let picture, let packet else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate \(name) encoder", path: path) }
        let avOut: AVPixelFormat
        switch kind {
        case .png: avOut = frame.format == .gray8 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24
        case .jpeg: avOut = AV_PIX_FMT_YUVJ420P
        }
        guard let avIn = frame.format.avPixelFormat else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "write a \(frame.format) frame as \(name)", path: path)
        }
        codec.pointee.width = Int32(frame.width)
        codec.pointee.height = Int32(frame.height)
        codec.pointee.pix_fmt = avOut
        codec.pointee.time_base = AVRational(num: 1, den: 25)
        if kind == .jpeg {
            // Fixed quality: qscale in lambda units, as `ffmpeg -q:v N` sets it.
            codec.pointee.flags |= 0x0002  // AV_CODEC_FLAG_QSCALE
            codec.pointee.global_quality = Int32(max(2, min(31, quality))) * 118  // FF_QP2LAMBDA
            codec.pointee.color_range = AVCOL_RANGE_JPEG
        }
        try check(avcodec_open2(codec, encoder, nil), "open \(name) encoder", path: path)
        picture.pointee.format = avOut.rawValue
        picture.pointee.width = Int32(frame.width)
        picture.pointee.height = Int32(frame.height)
        try check(av_frame_get_buffer(picture, 0), "allocate frame", path: path)
        if kind == .jpeg { picture.pointee.quality = codec.pointee.global_quality }
        // JPEG holds full-range BT.601 (JFIF), whatever the video was.
        let target = kind == .jpeg ? ColorDescription(range: .full, matrix: ColorDescription.bt470bgCode, primaries: frame.color.primaries,
                                                      transfer: frame.color.transfer) : ColorDescription.unspecified
        try scaler.scale(from: (avIn, frame.width, frame.height),
                         planes: { $0 < frame.format.planeCount ? frame.base(plane: $0) : nil },
                         strides: { $0 < frame.format.planeCount ? frame.planes[$0].stride : 0 },
                         to: (avOut, frame.width, frame.height),
                         dst: { picture.plane($0).map(UnsafeMutableRawPointer.init) }, dstStrides: { picture.stride($0) },
                         color: (frame.color, target))
        try check(avcodec_send_frame(codec, picture), "encode \(name)", path: path)
        try check(avcodec_receive_packet(codec, packet), "encode \(name)", path: path)
        return Data(bytes: packet.pointee.data, count: Int(packet.pointee.size))
    }
}
