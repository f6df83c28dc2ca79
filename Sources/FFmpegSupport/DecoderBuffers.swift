import CAVCodec
import CAVUtil
import FrameGraph

/// Pictures decoded straight into FrameGraph's pooled memory: the decoder's `get_buffer2` takes a
/// ``PixelBuffer`` from a ``BufferPool`` for every yuv420p picture (one block, three planes, rows
/// 64-byte aligned), so a decoded frame becomes a ``Frame`` without copying its pixels (1080p: 3 MB
/// a frame). Other pixel formats get FFmpeg's own buffers and are copied or converted as before.
///
/// Who holds what: FFmpeg holds a ``Lease`` per buffer it uses (a picture being decoded, a reference
/// picture) and lets it go through the release callback; a ``Frame`` made from a decoded picture
/// holds the pixel buffer itself. The memory goes back to the pool when both have let go, and only
/// the decoder writes into it, before the picture comes out.
final class DecoderBuffers: @unchecked Sendable {
    /// One buffer lent to FFmpeg.
    final class Lease {
        let pixels: PixelBuffer
        let owner: DecoderBuffers
        init(pixels: PixelBuffer, owner: DecoderBuffers) {
            self.pixels = pixels
            self.owner = owner
        }
    }

    /// Where the memory comes from (and goes back to).
    let pool: BufferPool
    /// The leases FFmpeg holds now (by address) and how many pictures were served, behind one lock
    /// (the decoder's frame threads ask concurrently).
    private let lent = Protected((addresses: Set<UInt>(), served: 0))

    /// Pictures decoded into pooled memory so far.
    var served: Int { lent.withLock { $0.served } }

    init(pool: BufferPool) {
        self.pool = pool
    }

    /// Installs the callback on a decoder that lets its callers provide picture memory.
    func install(on codec: UnsafeMutablePointer<AVCodecContext>, decoder: UnsafePointer<AVCodec>) {
        guard decoder.pointee.capabilities & Int32(AV_CODEC_CAP_DR1) != 0 else { return }
        codec.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        codec.pointee.get_buffer2 = decoderGetBuffer
    }

    /// The frame that a decoded picture of `width`×`height` is, when the decoder wrote it into one
    /// of these buffers (nil otherwise: FFmpeg's own memory, to be copied).
    func frame(of av: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, path: String) throws -> Frame? {
        guard let reference = av.pointee.buf.0, av.pointee.buf.1 == nil, let opaque = av_buffer_get_opaque(reference) else { return nil }
        let address = UInt(bitPattern: opaque)
        guard lent.withLock({ $0.addresses.contains(address) }) else { return nil }
        let pixels = Unmanaged<Lease>.fromOpaque(opaque).takeUnretainedValue().pixels
        var layouts = PlaneLayouts(count: 3)
        for p in 0..<3 {
            guard let plane = av.plane(p) else { throw FFmpegError(code: fg_averror_invaliddata(), operation: "read a decoded picture", path: path) }
            layouts[p] = PlaneLayout(offset: UnsafeMutableRawPointer(plane) - pixels.bytes, stride: av.stride(p))
        }
        return Frame(format: .yuv420p, width: width, height: height, planes: layouts, buffer: pixels)
    }

    /// Lays out and attaches a pooled block to `frame`; false for formats it does not serve.
    fileprivate func attach(to frame: UnsafeMutablePointer<AVFrame>, codec: UnsafeMutablePointer<AVCodecContext>) -> Bool {
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P, frame.pointee.width > 0, frame.pointee.height > 0 else { return false }
        var w = frame.pointee.width, h = frame.pointee.height
        var strideAlign = [Int32](repeating: 0, count: 8)
        strideAlign.withUnsafeMutableBufferPointer { avcodec_align_dimensions2(codec, &w, &h, $0.baseAddress) }
        // Rows of 64-byte multiples (every decoder's stride alignment divides 64); after each plane,
        // room for the overreads FFmpeg's own pools allow (16 + its 64-byte alignment).
        let padding = 128
        let lumaStride = Frame.alignedStride(Int(w)), chromaStride = Frame.alignedStride((Int(w) + 1) / 2)
        guard strideAlign.allSatisfy({ $0 <= 0 || (lumaStride % Int($0) == 0 && chromaStride % Int($0) == 0) }) else { return false }
        let chromaRows = (Int(h) + 1) / 2
        let offsets = [0, lumaStride * Int(h) + padding, lumaStride * Int(h) + padding + chromaStride * chromaRows + padding]
        let capacity = offsets[2] + chromaStride * chromaRows + padding
        let lease = Lease(pixels: pool.buffer(capacity: capacity), owner: self)
        let opaque = Unmanaged.passRetained(lease).toOpaque()
        let bytes = lease.pixels.bytes.assumingMemoryBound(to: UInt8.self)
        guard let reference = av_buffer_create(bytes, capacity, releaseDecoderBuffer, opaque, 0) else {
            Unmanaged<Lease>.fromOpaque(opaque).release()
            return false
        }
        lent.withLock {
            $0.addresses.insert(UInt(bitPattern: opaque))
            $0.served += 1
        }
        frame.pointee.buf.0 = reference
        frame.pointee.data.0 = bytes + offsets[0]
        frame.pointee.data.1 = bytes + offsets[1]
        frame.pointee.data.2 = bytes + offsets[2]
        frame.pointee.linesize.0 = Int32(lumaStride)
        frame.pointee.linesize.1 = Int32(chromaStride)
        frame.pointee.linesize.2 = Int32(chromaStride)
        fg_frame_point_extended_data(frame)
        return true
    }

    fileprivate func returned(_ opaque: UnsafeMutableRawPointer) {
        lent.withLock { _ = $0.addresses.remove(UInt(bitPattern: opaque)) }
    }
}

/// FFmpeg's request for picture memory: a pooled block where ``DecoderBuffers`` serves the format,
/// else FFmpeg's default allocator.
private let decoderGetBuffer: @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafeMutablePointer<AVFrame>?, Int32) -> Int32 = { codec, frame, flags in
    if let codec, let frame, let opaque = codec.pointee.opaque,
       Unmanaged<DecoderBuffers>.fromOpaque(opaque).takeUnretainedValue().attach(to: frame, codec: codec) {
        return 0
    }
    return avcodec_default_get_buffer2(codec, frame, flags)
}

/// FFmpeg lets go of a block: the lease ends (the pixels stay while a Frame holds them).
private let releaseDecoderBuffer: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?) -> Void = { opaque, _ in
    guard let opaque else { return }
    let lease = Unmanaged<DecoderBuffers.Lease>.fromOpaque(opaque).takeRetainedValue()
    lease.owner.returned(opaque)
}
