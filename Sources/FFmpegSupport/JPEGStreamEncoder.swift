import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// Encodes a stream of frames of one size as JPEG pictures (a live view's MJPEG), keeping FFmpeg's
/// MJPEG encoder, its picture and the converter open between pictures: ``ImageWriter/jpegData(_:quality:)``
/// opens and frees them for every picture, which a picture every 66 ms pays again and again. A
/// change of size reopens them. Made for speed over the last byte: the standard Huffman tables
/// (one pass, not FFmpeg's default second pass for optimal tables: pictures about 5 % larger), and
/// a decoded BT.601 video frame (yuv420p, limited range: SD video) has its range stretched to the
/// JPEG's full range by a table, without the general converter. Not thread-safe: one encoding thread.
///
/// ```swift
/// let encoder = JPEGStreamEncoder(quality: 5)
/// let bytes = try encoder.encode(frame)
/// ```
public final class JPEGStreamEncoder {
    /// FFmpeg's `-q:v` scale: 2 best … 31 smallest.
    public let quality: Int
    private let scaler = Scaler(method: .bilinear)
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var picture: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var opened: (width: Int, height: Int)?

    public init(quality: Int = 5) {
        _ = FFmpegLog.configured
        self.quality = max(2, min(31, quality))
    }

    deinit { close() }

    private func close() {
        avcodec_free_context(&codec)
        av_frame_free(&picture)
        av_packet_free(&packet)
        opened = nil
    }

    private func open(width: Int, height: Int) throws {
        close()
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else {
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "find JPEG encoder", path: "(picture)")
        }
        codec = avcodec_alloc_context3(encoder)
        picture = av_frame_alloc()
        packet = av_packet_alloc()
        guard let codec, let picture, packet != nil else {
            close()
            throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate JPEG encoder", path: "(picture)")
        }
        codec.pointee.width = Int32(width)
        codec.pointee.height = Int32(height)
        codec.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        codec.pointee.time_base = AVRational(num: 1, den: 25)
        codec.pointee.flags |= 0x0002  // AV_CODEC_FLAG_QSCALE: fixed quality, as `ffmpeg -q:v N`
        codec.pointee.global_quality = Int32(quality) * 118  // FF_QP2LAMBDA
        codec.pointee.color_range = AVCOL_RANGE_JPEG
        var settings: OpaquePointer?
        av_dict_set(&settings, "huffman", "default", 0)
        defer { av_dict_free(&settings) }
        do {
            try check(avcodec_open2(codec, encoder, &settings), "open JPEG encoder", path: "(picture)")
            picture.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
            picture.pointee.width = Int32(width)
            picture.pointee.height = Int32(height)
            try check(av_frame_get_buffer(picture, 0), "allocate frame", path: "(picture)")
        } catch {
            close()
            throw error
        }
        opened = (width, height)
    }

    /// `frame` (any 8-bit format) as JPEG bytes: full-range BT.601 (JFIF) 4:2:0.
    public func encode(_ frame: Frame) throws -> [UInt8] {
        guard let avIn = frame.format.avPixelFormat else {
            throw FFmpegError(code: fg_averror(EINVAL), operation: "write a \(frame.format) frame as JPEG", path: "(picture)")
        }
        if opened?.width != frame.width || opened?.height != frame.height { try open(width: frame.width, height: frame.height) }
        guard let codec, let picture, let packet else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "encode JPEG", path: "(picture)") }
        try check(av_frame_make_writable(picture), "encode JPEG", path: "(picture)")
        picture.pointee.quality = codec.pointee.global_quality
        let source = frame.color.resolved(height: frame.height)
        if frame.format == .yuv420p, source.range == .limited,
           source.matrix == ColorDescription.bt601Code || source.matrix == ColorDescription.bt470bgCode {
            withExtendedLifetime(frame) { stretchRange(frame, into: picture) }
        } else {
            try convert(frame, from: avIn, into: picture)
        }
        try check(avcodec_send_frame(codec, picture), "encode JPEG", path: "(picture)")
        try check(avcodec_receive_packet(codec, packet), "encode JPEG", path: "(picture)")
        defer { av_packet_unref(packet) }
        return [UInt8](UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }

    /// Limited-range levels to full range, as swscale maps them: luma (y − 16) × 255 / 219, chroma
    /// (c − 128) × 255 / 224 + 128, rounded and clamped.
    static let lumaTable: [UInt8] = (0..<256).map { UInt8(max(0, min(255, (Double($0 - 16) * 255 / 219).rounded()))) }
    static let chromaTable: [UInt8] = (0..<256).map { UInt8(max(0, min(255, (Double($0 - 128) * 255 / 224 + 128).rounded()))) }

    private func stretchRange(_ frame: Frame, into picture: UnsafeMutablePointer<AVFrame>) {
        for plane in 0..<3 {
            let table = plane == 0 ? Self.lumaTable : Self.chromaTable
            let w = plane == 0 ? frame.width : (frame.width + 1) / 2, h = plane == 0 ? frame.height : (frame.height + 1) / 2
            guard let dst = picture.plane(plane) else { continue }
            let dstStride = picture.stride(plane), srcStride = frame.planes[plane].stride
            let src = frame.base(plane: plane).assumingMemoryBound(to: UInt8.self)
            table.withUnsafeBufferPointer { t in
                for y in 0..<h {
                    let s = src + y * srcStride, d = dst + y * dstStride
                    for x in 0..<w { d[x] = t[Int(s[x])] }
                }
            }
        }
    }

    private func convert(_ frame: Frame, from avIn: AVPixelFormat, into picture: UnsafeMutablePointer<AVFrame>) throws {
        let target = ColorDescription(range: .full, matrix: ColorDescription.bt470bgCode, primaries: frame.color.primaries, transfer: frame.color.transfer)
        try withExtendedLifetime(frame) {
            try scaler.scale(from: (avIn, frame.width, frame.height),
                             planes: { $0 < frame.format.planeCount ? frame.base(plane: $0) : nil },
                             strides: { $0 < frame.format.planeCount ? frame.planes[$0].stride : 0 },
                             to: (AV_PIX_FMT_YUVJ420P, frame.width, frame.height),
                             dst: { picture.plane($0).map(UnsafeMutableRawPointer.init) }, dstStrides: { picture.stride($0) },
                             color: (frame.color, target))
        }
    }
}
