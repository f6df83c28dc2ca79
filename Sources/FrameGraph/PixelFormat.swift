/// The pixel layouts a ``Frame`` can carry.
///
/// 8-bit formats are the ones cameras, decoders and encoders speak; `planarFloat32` is the layout
/// network nodes feed to a model (one plane per channel, 32-bit floats).
public enum PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// Packed 8-bit R, G, B.
    case rgb24
    /// Packed 8-bit R, G, B, A.
    case rgba
    /// Packed 8-bit B, G, R, A.
    case bgra
    /// Planar Y, then U and V at half width and half height (rounded up for odd sizes).
    case yuv420p
    /// Planar Y, then interleaved U/V at half width and half height.
    case nv12
    /// One 8-bit luma channel.
    case gray8
    /// `channels` planes of 32-bit floats, one per channel.
    case planarFloat32(channels: Int)

    /// Number of memory planes.
    public var planeCount: Int {
        switch self {
        case .rgb24, .rgba, .bgra, .gray8: return 1
        case .nv12: return 2
        case .yuv420p: return 3
        case .planarFloat32(let channels): return channels
        }
    }

    /// Whether chroma is stored at half resolution (crop offsets are then rounded down to even).
    public var isChromaSubsampled: Bool { self == .yuv420p || self == .nv12 }

    /// Bytes of real pixel data in one row of `plane`, and the number of rows, for a `width`×`height` image.
    public func planeGeometry(_ plane: Int, width: Int, height: Int) -> (rowBytes: Int, rows: Int) {
        let halfW = (width + 1) / 2, halfH = (height + 1) / 2
        switch self {
        case .rgb24: return (width * 3, height)
        case .rgba, .bgra: return (width * 4, height)
        case .gray8: return (width, height)
        case .yuv420p: return plane == 0 ? (width, height) : (halfW, halfH)
        case .nv12: return plane == 0 ? (width, height) : (halfW * 2, halfH)
        case .planarFloat32: return (width * 4, height)
        }
    }

    /// Bytes per pixel of a packed format's single plane (nil for planar formats).
    public var packedBytesPerPixel: Int? {
        switch self {
        case .rgb24: return 3
        case .rgba, .bgra: return 4
        case .gray8: return 1
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .rgb24: return "rgb24"
        case .rgba: return "rgba"
        case .bgra: return "bgra"
        case .yuv420p: return "yuv420p"
        case .nv12: return "nv12"
        case .gray8: return "gray8"
        case .planarFloat32(let c): return "float32x\(c)"
        }
    }

    /// Parses the names used in pipeline files and on the command line (`rgb24`, `yuv420p`, `float32x3` …).
    public init?(name: String) {
        switch name.lowercased() {
        case "rgb24", "rgb": self = .rgb24
        case "rgba": self = .rgba
        case "bgra": self = .bgra
        case "yuv420p", "i420": self = .yuv420p
        case "nv12": self = .nv12
        case "gray8", "gray", "grey": self = .gray8
        default:
            let lower = name.lowercased()
            if lower.hasPrefix("float32x"), let c = Int(lower.dropFirst(8)), (1...4).contains(c) {
                self = .planarFloat32(channels: c)
            } else {
                return nil
            }
        }
    }

    /// Every format name accepted by ``init(name:)``, for help texts and error messages.
    public static let knownNames = ["rgb24", "rgba", "bgra", "yuv420p", "nv12", "gray8", "float32xN (N = 1…4)"]

    /// Whether samples are float32 (planar float frames) rather than 8-bit.
    public var isFloat: Bool {
        if case .planarFloat32 = self { return true }
        return false
    }
}
