import CAVCodec
import CAVUtil
import Foundation
import FrameGraph

/// Writes single frames as PNG files with FFmpeg's PNG encoder.
public final class ImageWriter {
    private let scaler = Scaler(method: .bilinear)

    public init() { _ = FFmpegLog.configured }

    /// Encodes `frame` (any 8-bit format; converted to RGB24, or kept as gray8) and writes it to `path`.
    public func writePNG(_ frame: Frame, to path: String) throws {
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "find PNG encoder", path: path)
        }
        var codec = avcodec_alloc_context3(encoder)
        var picture = av_frame_alloc()
        var packet = av_packet_alloc()
        defer {
            avcodec_free_context(&codec)
            av_frame_free(&picture)
            av_packet_free(&packet)
        }
        guard let codec, let picture, let packet else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate PNG encoder", path: path) }
        let outFormat: PixelFormat = frame.format == .gray8 ? .gray8 : .rgb24
        guard let avOut = outFormat.avPixelFormat, let avIn = frame.format.avPixelFormat else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "write a \(frame.format) frame as PNG", path: path)
        }
        codec.pointee.width = Int32(frame.width)
        codec.pointee.height = Int32(frame.height)
        codec.pointee.pix_fmt = avOut
        codec.pointee.time_base = AVRational(num: 1, den: 1)
        try check(avcodec_open2(codec, encoder, nil), "open PNG encoder", path: path)
        picture.pointee.format = avOut.rawValue
        picture.pointee.width = Int32(frame.width)
        picture.pointee.height = Int32(frame.height)
        try check(av_frame_get_buffer(picture, 0), "allocate frame", path: path)
        try scaler.scale(from: (avIn, frame.width, frame.height),
                         planes: { $0 < frame.format.planeCount ? frame.base(plane: $0) : nil },
                         strides: { $0 < frame.format.planeCount ? frame.planes[$0].stride : 0 },
                         to: (avOut, frame.width, frame.height),
                         dst: { picture.plane($0).map(UnsafeMutableRawPointer.init) }, dstStrides: { picture.stride($0) })
        try check(avcodec_send_frame(codec, picture), "encode PNG", path: path)
        try check(avcodec_receive_packet(codec, packet), "encode PNG", path: path)
        let data = Data(bytes: packet.pointee.data, count: Int(packet.pointee.size))
        try OutputFile.write(data, to: path)  // beside the destination, then renamed into place
    }
}
