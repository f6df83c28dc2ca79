extension Frame {
    /// Fills the frame with black (Y 16, chroma 128 for YUV; zeros otherwise).
    public func fillBlack() {
        for p in 0..<format.planeCount {
            let value: UInt8
            switch format {
            case .yuv420p, .nv12: value = p == 0 ? 16 : 128
            default: value = 0
            }
            let rows = format.planeGeometry(p, width: width, height: height).rows
            for y in 0..<rows {
                let r = row(y, plane: p)
                r.update(repeating: value)
            }
        }
    }
}
