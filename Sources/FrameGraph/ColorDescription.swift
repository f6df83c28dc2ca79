/// What the numbers of a frame's pixels mean: the range of its Y'CbCr values, the matrix between
/// Y'CbCr and R'G'B', and the colour primaries and transfer function of its R'G'B'.
///
/// Values are the code points of ITU-T H.273 (the numbers containers and codecs store, and FFmpeg's
/// `AVCOL_*` values), so a tag read from a file goes back into the output unchanged. A file that says
/// nothing gets the conventional guess for its size (``resolved(height:)``): BT.601 below 720 rows,
/// BT.709 from 720 rows up, limited range.
public struct ColorDescription: Hashable, Sendable, CustomStringConvertible {
    /// Y'CbCr range: limited ("TV", 16–235 for Y') or full ("PC"/JPEG, 0–255).
    public enum Range: Int32, Sendable, CaseIterable {
        case unspecified = 0, limited = 1, full = 2
        public var name: String { ["unspecified", "limited (tv)", "full (pc)"][Int(rawValue)] }
    }

    public var range: Range
    /// Matrix coefficients (H.273 table 4): 1 BT.709, 5/6 BT.601 (BT.470BG / SMPTE 170M), 9 BT.2020 NCL, 2 unspecified.
    public var matrix: Int32
    /// Colour primaries (H.273 table 2): 1 BT.709, 5 BT.470BG, 6 SMPTE 170M, 9 BT.2020, 2 unspecified.
    public var primaries: Int32
    /// Transfer characteristics (H.273 table 3): 1 BT.709, 6 SMPTE 170M, 13 sRGB, 16 PQ, 18 HLG, 2 unspecified.
    public var transfer: Int32

    public static let unspecifiedCode: Int32 = 2
    public static let bt709Code: Int32 = 1
    public static let bt601Code: Int32 = 6
    public static let bt470bgCode: Int32 = 5

    /// Nothing known.
    public static let unspecified = ColorDescription(range: .unspecified, matrix: unspecifiedCode, primaries: unspecifiedCode,
                                                     transfer: unspecifiedCode)
    /// HD video: BT.709 everything, limited range.
    public static let bt709 = ColorDescription(range: .limited, matrix: bt709Code, primaries: bt709Code, transfer: bt709Code)
    /// SD video: BT.601 (SMPTE 170M), limited range.
    public static let bt601 = ColorDescription(range: .limited, matrix: bt601Code, primaries: bt601Code, transfer: bt601Code)

    public init(range: Range, matrix: Int32, primaries: Int32, transfer: Int32) {
        self.range = range
        self.matrix = matrix
        self.primaries = primaries
        self.transfer = transfer
    }

    /// Whether the matrix says which coefficients to use.
    public var hasMatrix: Bool { matrix != ColorDescription.unspecifiedCode && matrix != 0 && matrix != 3 }

    /// This description with what it leaves open filled in by convention for a picture `height` rows
    /// tall: BT.709 from 720 rows, BT.601 below; limited range.
    public func resolved(height: Int) -> ColorDescription {
        filled(from: height >= 720 ? ColorDescription.bt709 : ColorDescription.bt601)
    }

    /// This description with what it leaves open taken from `fallback` (a frame's own tags over its
    /// stream's, a stream's over the convention).
    public func filled(from fallback: ColorDescription) -> ColorDescription {
        func open(_ code: Int32) -> Bool { code == ColorDescription.unspecifiedCode || code == 0 }
        var out = self
        if out.range == .unspecified { out.range = fallback.range }
        if !out.hasMatrix { out.matrix = fallback.matrix }
        if open(out.primaries) { out.primaries = fallback.primaries }
        if open(out.transfer) { out.transfer = fallback.transfer }
        return out
    }

    /// Short H.273 names, for `probe` and messages.
    public static func matrixName(_ code: Int32) -> String {
        switch code {
        case 0: return "rgb"
        case 1: return "bt709"
        case 2: return "unspecified"
        case 4: return "fcc"
        case 5: return "bt470bg"
        case 6: return "smpte170m"
        case 7: return "smpte240m"
        case 8: return "ycgco"
        case 9: return "bt2020nc"
        case 10: return "bt2020c"
        default: return "code \(code)"
        }
    }

    public static func primariesName(_ code: Int32) -> String {
        switch code {
        case 1: return "bt709"
        case 2: return "unspecified"
        case 4: return "bt470m"
        case 5: return "bt470bg"
        case 6: return "smpte170m"
        case 7: return "smpte240m"
        case 9: return "bt2020"
        case 12: return "smpte432 (P3)"
        default: return "code \(code)"
        }
    }

    public static func transferName(_ code: Int32) -> String {
        switch code {
        case 1: return "bt709"
        case 2: return "unspecified"
        case 4: return "gamma22"
        case 5: return "gamma28"
        case 6: return "smpte170m"
        case 8: return "linear"
        case 13: return "iec61966-2-1 (sRGB)"
        case 14, 15: return "bt2020"
        case 16: return "smpte2084 (PQ)"
        case 18: return "arib-std-b67 (HLG)"
        default: return "code \(code)"
        }
    }

    public var description: String {
        "range \(range.name), matrix \(Self.matrixName(matrix)), primaries \(Self.primariesName(primaries)), transfer \(Self.transferName(transfer))"
    }
}

extension ColorDescription {
    /// Kr and Kb of the matrix (Y' = Kr·R' + (1 − Kr − Kb)·G' + Kb·B'): BT.709, BT.2020, SMPTE 240M, and
    /// BT.601 for anything unnamed. Every Y'CbCr ↔ R'G'B' conversion of FrameGraph's own reads it.
    public var lumaCoefficients: (kr: Float, kb: Float) {
        switch matrix {
        case 1: return (0.2126, 0.0722)  // BT.709
        case 9, 10: return (0.2627, 0.0593)  // BT.2020
        case 7: return (0.212, 0.087)  // SMPTE 240M
        default: return (0.299, 0.114)  // BT.601
        }
    }
}
