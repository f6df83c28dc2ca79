import FrameGraph

/// Reads the frame number the emulated camera stamps across the top of every frame (layout in
/// Tests/FakeCamera/fakecam_pattern.h): 32 cells of `width / 32` pixels, 24 bits of frame number
/// then a check byte `~n & 0xFF`, most significant bit first, white = 1. Works on any frame whose
/// first plane is luma (yuv420p, nv12, gray8) or RGB (rgb24), at any width.
enum StampReader {
    /// The frame number, or nil when the check byte does not match (no stamp, or a damaged one).
    static func read(_ frame: Frame) -> UInt32? {
        let step: Int
        switch frame.format {
        case .yuv420p, .nv12, .gray8: step = 1
        case .rgb24: step = 3
        default: return nil
        }
        let c = frame.width / 32
        guard c >= 2, c <= frame.height else { return nil }
        let lo = c / 4, hi = c / 4 + (c + 1) / 2
        var bits: UInt32 = 0
        for i in 0..<32 {
            var sum = 0, count = 0
            for y in lo..<hi {
                let row = frame.row(y, plane: 0)
                for x in (i * c + lo)..<(i * c + hi) {
                    sum += Int(row[x * step])
                    count += 1
                }
            }
            bits = (bits << 1) | (sum > 128 * count ? 1 : 0)
        }
        let value = bits >> 8, check = bits & 0xFF
        return check == (~value & 0xFF) ? value : nil
    }
}
