import FrameGraph

/// A colour to draw with: 8-bit R, G, B and the Y', Cb, Cr it has in one frame's colour space
/// (its matrix's ``ColorDescription/lumaCoefficients``, limited or full range, as the frame says), so boxes look the same
/// colour on RGB and Y'CbCr frames.
public struct Paint: Sendable, Equatable {
    public let r: UInt8, g: UInt8, b: UInt8
    public let y: UInt8, cb: UInt8, cr: UInt8

    /// `rgb` as 0xRRGGBB, for a frame described by `color` of height `height`.
    public init(rgb: UInt32, for color: ColorDescription = .unspecified, height: Int = 480) {
        r = UInt8(truncatingIfNeeded: rgb >> 16)
        g = UInt8(truncatingIfNeeded: rgb >> 8)
        b = UInt8(truncatingIfNeeded: rgb)
        let resolved = color.resolved(height: height)
        let (kr, kb) = (Double(resolved.lumaCoefficients.kr), Double(resolved.lumaCoefficients.kb))
        let (R, G, B) = (Double(r) / 255, Double(g) / 255, Double(b) / 255)
        let luma = kr * R + (1 - kr - kb) * G + kb * B
        let pb = (B - luma) / (2 * (1 - kb)), pr = (R - luma) / (2 * (1 - kr))
        let full = resolved.range == .full
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
        y = byte(full ? luma * 255 : 16 + luma * 219)
        cb = byte(128 + pb * (full ? 255 : 224))
        cr = byte(128 + pr * (full ? 255 : 224))
    }

    /// The same colour for another frame's colour space.
    public func converted(for color: ColorDescription, height: Int) -> Paint {
        Paint(rgb: rgb, for: color, height: height)
    }

    /// 0xRRGGBB.
    public var rgb: UInt32 { UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b) }

    /// Parses `RRGGBB` (hex, an optional leading `#`).
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let v = UInt32(digits, radix: 16) else { return nil }
        self.init(rgb: v)
    }

    public static let white = Paint(rgb: 0xFFFFFF)
    public static let black = Paint(rgb: 0x000000)

    /// Ten colours far apart from one another (a label's colour is chosen from them by its index
    /// or name, so the same class keeps its colour across frames and runs).
    public static let palette: [UInt32] = [0x00E676, 0xFF3D00, 0x2979FF, 0xFFEA00, 0xD500F9,
                                           0x00E5FF, 0xFF9100, 0x76FF03, 0xF50057, 0x1DE9B6]

    /// The palette colour for a class: by `index` when given, else by a stable hash of `label`.
    public static func forClass(index: Int?, label: String?) -> UInt32 {
        if let index { return palette[((index % palette.count) + palette.count) % palette.count] }
        guard let label else { return palette[0] }
        var hash: UInt32 = 2_166_136_261  // FNV-1a: the same on every run, unlike Swift's Hasher
        for byte in label.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return palette[Int(hash % UInt32(palette.count))]
    }
}
