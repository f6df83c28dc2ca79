import CFreeType
import Foundation
import FrameGraph

/// One rendered character: an 8-bit coverage bitmap (0 = background, 255 = ink) and where it sits
/// relative to the pen (FreeType's bitmap_left/top) and how far the pen moves after it.
public struct Glyph: Sendable {
    public let width: Int
    public let rows: Int
    /// Pixels from the pen to the bitmap's left edge.
    public let left: Int
    /// Pixels from the baseline up to the bitmap's top row.
    public let top: Int
    /// Pen advance in pixels.
    public let advance: Int
    /// `rows` × `width` coverage values, row after row.
    public let coverage: [UInt8]
}

/// A TrueType/OpenType font at one pixel size, through FreeType (anti-aliased rendering), with the
/// glyphs it has rendered cached. Owns its FreeType library and face and frees them in deinit.
/// Not for concurrent use: one node uses it from one thread at a time.
public final class FontFace: @unchecked Sendable {
    /// The font file.
    public let path: String
    /// Requested size: pixels from one baseline to the next, roughly.
    public let pixelSize: Int
    /// Pixels from the baseline up to the top of the tallest glyphs.
    public let ascender: Int
    /// Pixels from one baseline to the next.
    public let lineHeight: Int
    private var library: FT_Library?
    private var face: FT_Face?
    private var cache: [UInt32: Glyph] = [:]

    /// Largest font file read.
    public static let maxFileBytes: Int64 = 64 << 20
    /// Sizes accepted, in pixels.
    public static let sizes = 4...512

    /// Where Debian's fonts-dejavu-core puts its sans-serif face (the default font).
    public static let defaultFontCandidates = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/local/share/fonts/DejaVuSans.ttf",
    ]

    /// The first default font that exists (nil when none is installed).
    public static var defaultFontPath: String? {
        defaultFontCandidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Opens `path` at `pixelSize`. Throws ``DrawError/font(path:reason:)`` when the file is missing,
    /// not a regular file, too large, or not a font FreeType can read.
    public init(path: String, pixelSize: Int) throws {
        self.path = path
        guard Self.sizes.contains(pixelSize) else {
            throw DrawError.font(path: path, reason: "size \(pixelSize) px is outside \(Self.sizes.lowerBound)…\(Self.sizes.upperBound)")
        }
        self.pixelSize = pixelSize
        do {
            _ = try FileCheck.regularFile(path, what: "font file", maxBytes: Self.maxFileBytes)
        } catch {
            throw DrawError.font(path: path, reason: describe(error))
        }
        var lib: FT_Library?
        guard FT_Init_FreeType(&lib) == 0, let lib else { throw DrawError.font(path: path, reason: "FreeType could not start") }
        library = lib
        var f: FT_Face?
        let opened = FT_New_Face(lib, path, 0, &f)
        guard opened == 0, let f else {
            FT_Done_FreeType(lib)
            library = nil
            throw DrawError.font(path: path, reason: "not a font FreeType can read (FreeType error \(opened))")
        }
        face = f
        guard FT_Set_Pixel_Sizes(f, 0, FT_UInt(pixelSize)) == 0, let size = f.pointee.size else {
            FT_Done_Face(f)
            FT_Done_FreeType(lib)
            face = nil
            library = nil
            throw DrawError.font(path: path, reason: "cannot be set to \(pixelSize) px (a bitmap-only font?)")
        }
        ascender = Int(size.pointee.metrics.ascender >> 6)
        lineHeight = max(1, Int(size.pointee.metrics.height >> 6))
    }

    deinit {
        if let face { FT_Done_Face(face) }
        if let library { FT_Done_FreeType(library) }
    }

    /// The glyph for `scalar` (the font's missing-glyph box when it has none).
    public func glyph(_ scalar: Unicode.Scalar) -> Glyph {
        if let g = cache[scalar.value] { return g }
        let g = render(scalar)
        if cache.count < 4096 { cache[scalar.value] = g }
        return g
    }

    /// Width of `text` in pixels, drawn on one line.
    public func width(of text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + glyph($1).advance }
    }

    private func render(_ scalar: Unicode.Scalar) -> Glyph {
        let empty = Glyph(width: 0, rows: 0, left: 0, top: 0, advance: pixelSize / 3, coverage: [])
        guard let face, FT_Load_Char(face, FT_ULong(scalar.value), FT_Int32(fg_ft_load_render_flags())) == 0,
              let slot = face.pointee.glyph else { return empty }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width), rows = Int(bitmap.rows), pitch = Int(bitmap.pitch)
        let advance = Int(slot.pointee.advance.x >> 6)
        guard width > 0, rows > 0, let buffer = bitmap.buffer, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) else {
            return Glyph(width: 0, rows: 0, left: 0, top: 0, advance: advance, coverage: [])
        }
        var coverage = [UInt8](repeating: 0, count: width * rows)
        for y in 0..<rows {
            // A negative pitch means the rows are stored bottom-up.
            let row = pitch >= 0 ? buffer + y * pitch : buffer + (rows - 1 - y) * -pitch
            for x in 0..<width { coverage[y * width + x] = row[x] }
        }
        return Glyph(width: width, rows: rows, left: Int(slot.pointee.bitmap_left), top: Int(slot.pointee.bitmap_top),
                     advance: advance, coverage: coverage)
    }
}

/// Drawing could not be set up: a font that cannot be used, a frame format that cannot be drawn on.
public enum DrawError: Error, Sendable, CustomStringConvertible, Equatable {
    case font(path: String, reason: String)

    public var description: String {
        switch self {
        case .font(let path, let reason): return "font \(path): \(reason)"
        }
    }
}
