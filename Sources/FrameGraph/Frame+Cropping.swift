extension Frame {
    /// A zero-copy view of the rectangle at (`x`, `y`) of size `width`×`height`: the same buffer with
    /// moved plane offsets. For 4:2:0 formats pass even coordinates and sizes.
    public func cropped(x: Int, y: Int, width newWidth: Int, height newHeight: Int) -> Frame {
        precondition(x >= 0 && y >= 0 && newWidth > 0 && newHeight > 0 && x + newWidth <= width && y + newHeight <= height,
                     "crop rectangle outside the frame")
        var layout = planes
        for p in 0..<format.planeCount {
            let (dx, dy): (Int, Int)
            switch format {
            case .yuv420p where p > 0: (dx, dy) = (x / 2, y / 2)
            case .nv12 where p > 0: (dx, dy) = (x, y / 2)  // interleaved U/V: 2 bytes per chroma sample
            case .planarFloat32: (dx, dy) = (x * 4, y)
            default: (dx, dy) = (x * (format.packedBytesPerPixel ?? 1), y)
            }
            layout[p].offset += dy * layout[p].stride + dx
        }
        var out = Frame(format: format, width: newWidth, height: newHeight, planes: layout, buffer: buffer)
        out.copyTiming(from: self)
        // Results follow the picture: re-expressed in the rectangle's own normalised coordinates.
        out.results = results?.mapped(scaleX: Float(width) / Float(newWidth), scaleY: Float(height) / Float(newHeight),
                                      offsetX: -Float(x) / Float(newWidth), offsetY: -Float(y) / Float(newHeight))
        return out
    }
}
