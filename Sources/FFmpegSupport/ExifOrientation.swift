import Foundation
import FrameGraph

/// The EXIF orientation of a JPEG photo (tag 0x0112 of the first image directory in the APP1
/// "Exif" segment): how the stored picture must be turned and mirrored to be seen upright, as
/// phones record it. FFmpeg 5 does not apply it, so photos are turned here. The reader walks the
/// JPEG's marker segments up to the first scan and checks every offset and length against the
/// bytes it has; anything unexpected means "no orientation".
public enum ExifOrientation {
    /// The orientation value 1…8 in `bytes` (the start of a JPEG file), or nil.
    public static func read(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var p = 2
        while p + 4 <= bytes.count {
            guard bytes[p] == 0xFF else { return nil }
            let marker = bytes[p + 1]
            if marker == 0xFF { p += 1; continue }  // fill bytes
            if marker == 0xDA || marker == 0xD9 { return nil }  // start of scan / end of image: no EXIF before the data
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { p += 2; continue }  // markers without a length
            let length = Int(bytes[p + 2]) << 8 | Int(bytes[p + 3])
            guard length >= 2, p + 2 + length <= bytes.count else { return nil }
            if marker == 0xE1, length >= 8, Array(bytes[(p + 4)..<(p + 10)]) == Array("Exif\0\0".utf8) {
                return tiffOrientation(Array(bytes[(p + 10)..<(p + 2 + length)]))
            }
            p += 2 + length
        }
        return nil
    }

    /// Tag 0x0112 of IFD0 in a TIFF structure (either byte order).
    static func tiffOrientation(_ t: [UInt8]) -> Int? {
        guard t.count >= 8 else { return nil }
        let little: Bool
        switch (t[0], t[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ i: Int) -> Int? {
            guard i >= 0, i + 2 <= t.count else { return nil }
            return little ? Int(t[i]) | Int(t[i + 1]) << 8 : Int(t[i]) << 8 | Int(t[i + 1])
        }
        func u32(_ i: Int) -> Int? {
            guard let a = u16(i), let b = u16(i + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for k in 0..<count {
            let entry = ifd + 2 + 12 * k
            guard let tag = u16(entry), let type = u16(entry + 2) else { return nil }
            if tag == 0x0112 {
                guard type == 3, let value = u16(entry + 8), (1...8).contains(value) else { return nil }
                return value
            }
        }
        return nil
    }

    /// The photo's first bytes (the EXIF segment comes before the image data).
    public static func read(path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 256 << 10) else { return nil }
        return read([UInt8](data))
    }

    /// `frame` turned upright for `orientation` (1 or nil: as it is).
    public static func apply(_ orientation: Int?, to frame: Frame, pool: BufferPool = .shared) -> Frame {
        switch orientation {
        case 2: return frame.mirrored(pool: pool)
        case 3: return frame.rotated(clockwise: 180, pool: pool)
        case 4: return frame.rotated(clockwise: 180, pool: pool).mirrored(pool: pool)
        case 5: return frame.rotated(clockwise: 90, pool: pool).mirrored(pool: pool)
        case 6: return frame.rotated(clockwise: 90, pool: pool)
        case 7: return frame.rotated(clockwise: 270, pool: pool).mirrored(pool: pool)
        case 8: return frame.rotated(clockwise: 270, pool: pool)
        default: return frame
        }
    }
}
