extension Frame {
    /// A copy turned clockwise by `degrees` (0, 90, 180 or 270; other values are rounded to the
    /// nearest quarter turn), the way a player applies a phone video's display matrix. Works for
    /// every 8-bit format but nv12 (rotate before converting to it); 4:2:0 frames need an even size.
    public func rotated(clockwise degrees: Int, pool: BufferPool = .shared) -> Frame {
        let quarter = ((Int((Double(degrees) / 90).rounded()) % 4) + 4) % 4
        guard quarter != 0, format != .nv12 else { return self }
        if case .planarFloat32 = format { return self }
        let swaps = quarter % 2 == 1
        var out = Frame.make(format, width: swaps ? height : width, height: swaps ? width : height, pool: pool)
        out.copyTiming(from: self)
        for p in 0..<format.planeCount {
            let bytesPerPixel = format == .yuv420p ? 1 : (format.packedBytesPerPixel ?? 1)
            let g = format.planeGeometry(p, width: width, height: height)
            let w = g.rowBytes / bytesPerPixel, h = g.rows
            let src = UnsafeRawPointer(base(plane: p)), dst = out.base(plane: p)
            let srcStride = planes[p].stride, dstStride = out.planes[p].stride
            for y in 0..<h {
                let srcRow = src + y * srcStride
                for x in 0..<w {
                    // Where source pixel (x, y) lands after the turn.
                    let (nx, ny): (Int, Int)
                    switch quarter {
                    case 1: (nx, ny) = (h - 1 - y, x)
                    case 2: (nx, ny) = (w - 1 - x, h - 1 - y)
                    default: (nx, ny) = (y, w - 1 - x)
                    }
                    let target = dst + ny * dstStride + nx * bytesPerPixel, from = srcRow + x * bytesPerPixel
                    for b in 0..<bytesPerPixel { target.storeBytes(of: from.load(fromByteOffset: b, as: UInt8.self), toByteOffset: b, as: UInt8.self) }
                }
            }
        }
        return out
    }
}

extension Frame {
    /// A copy mirrored left to right (a selfie camera's picture; EXIF orientations 2, 4, 5, 7).
    /// Works for every 8-bit format but nv12; 4:2:0 frames need an even width.
    public func mirrored(pool: BufferPool = .shared) -> Frame {
        guard format != .nv12 else { return self }
        if case .planarFloat32 = format { return self }
        var out = Frame.make(format, width: width, height: height, pool: pool)
        out.copyTiming(from: self)
        for p in 0..<format.planeCount {
            let bytesPerPixel = format == .yuv420p ? 1 : (format.packedBytesPerPixel ?? 1)
            let g = format.planeGeometry(p, width: width, height: height)
            let w = g.rowBytes / bytesPerPixel
            for y in 0..<g.rows {
                let src = UnsafeRawPointer(base(plane: p)) + y * planes[p].stride, dst = out.base(plane: p) + y * out.planes[p].stride
                for x in 0..<w {
                    (dst + (w - 1 - x) * bytesPerPixel).copyMemory(from: src + x * bytesPerPixel, byteCount: bytesPerPixel)
                }
            }
        }
        return out
    }
}
