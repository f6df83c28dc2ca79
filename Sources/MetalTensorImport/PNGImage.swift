import CZlib

/// An 8-bit PNG decoded to RGB (the secondary images of MetalTensor's `arithmetic` layers, such as
/// Landmarks' `mean96.png`). Reads the chunks IHDR, PLTE, IDAT and IEND, non-interlaced images of
/// bit depth 8 in grey, grey + alpha, RGB, RGBA or palette colour, and undoes the five row filters.
/// Alpha is premultiplied into the colour, as UIKit decodes it. Every length is checked; the image
/// must fit `maxPixels`.
public struct PNGImage: Sendable {
    public let width: Int
    public let height: Int
    /// width × height × 3 bytes, RGB, rows top to bottom.
    public let rgb: [UInt8]

    /// The reason, with the byte offset, when the file is not a PNG this reader takes.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let reason: String
        public let offset: Int
        public var description: String { "\(reason) (at byte \(offset))" }
    }

    public static let maxPixels = 1 << 24

    public init(bytes: [UInt8]) throws(Failure) {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.starts(with: signature) else { throw Failure(reason: "not a PNG file (no PNG signature)", offset: 0) }
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        var p = 8
        var header: (w: Int, h: Int, depth: UInt8, colour: UInt8, interlace: UInt8)?
        var palette: [UInt8] = []
        var compressed: [UInt8] = []
        var ended = false
        while p + 8 <= bytes.count {
            let length = u32(p)
            let type = String(decoding: bytes[p + 4..<p + 8], as: UTF8.self)
            guard length <= bytes.count - p - 12 else { throw Failure(reason: "chunk '\(type)' of \(length) bytes runs past the end of the file", offset: p) }
            let body = bytes[p + 8..<p + 8 + length]
            switch type {
            case "IHDR":
                guard length == 13 else { throw Failure(reason: "IHDR is \(length) bytes, expected 13", offset: p) }
                let b = Array(body)
                header = (Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3]),
                          Int(b[4]) << 24 | Int(b[5]) << 16 | Int(b[6]) << 8 | Int(b[7]), b[8], b[9], b[12])
            case "PLTE":
                palette = Array(body)
            case "IDAT":
                compressed.append(contentsOf: body)
            case "IEND":
                ended = true
            default:
                break
            }
            p += 12 + length
            if ended { break }
        }
        guard let h = header else { throw Failure(reason: "no IHDR chunk", offset: 8) }
        guard ended else { throw Failure(reason: "no IEND chunk (truncated file)", offset: p) }
        guard h.w >= 1, h.h >= 1, h.w <= Self.maxPixels, h.h <= Self.maxPixels, h.w * h.h <= Self.maxPixels else {
            throw Failure(reason: "image is \(h.w)×\(h.h) pixels (at most \(Self.maxPixels) pixels are read)", offset: 16)
        }
        guard h.depth == 8, h.interlace == 0 else {
            throw Failure(reason: "bit depth \(h.depth)\(h.interlace != 0 ? ", interlaced" : ""): only non-interlaced 8-bit PNGs are read", offset: 24)
        }
        let channels: Int
        switch h.colour {
        case 0: channels = 1
        case 2: channels = 3
        case 3: channels = 1
        case 4: channels = 2
        case 6: channels = 4
        default: throw Failure(reason: "colour type \(h.colour) is not a PNG colour type", offset: 25)
        }
        if h.colour == 3, palette.isEmpty || palette.count % 3 != 0 { throw Failure(reason: "palette image without a valid PLTE chunk", offset: 8) }
        let stride = h.w * channels
        let expected = h.h * (stride + 1)
        var raw = [UInt8](repeating: 0, count: expected)
        var rawLength = uLongf(expected)
        let status = raw.withUnsafeMutableBufferPointer { target in
            compressed.withUnsafeBufferPointer { source in
                uncompress(target.baseAddress, &rawLength, source.baseAddress, uLong(source.count))
            }
        }
        guard status == Z_OK, Int(rawLength) == expected else {
            throw Failure(reason: "image data does not inflate to \(h.w)×\(h.h) pixels (zlib status \(status))", offset: 8)
        }
        // Undo the row filters (PNG spec §9), in place, row by row.
        var pixels = [UInt8](repeating: 0, count: h.h * stride)
        let bpp = channels
        for y in 0..<h.h {
            let filter = raw[y * (stride + 1)]
            let src = y * (stride + 1) + 1, dst = y * stride
            for x in 0..<stride {
                let a = x >= bpp ? Int(pixels[dst + x - bpp]) : 0
                let b = y > 0 ? Int(pixels[dst - stride + x]) : 0
                let c = x >= bpp && y > 0 ? Int(pixels[dst - stride + x - bpp]) : 0
                let v = Int(raw[src + x])
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c)
                    predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: throw Failure(reason: "row \(y) has filter type \(filter) (PNG has 0…4)", offset: 8)
                }
                pixels[dst + x] = UInt8(truncatingIfNeeded: v + predicted)
            }
        }
        var out = [UInt8](repeating: 0, count: h.w * h.h * 3)
        for i in 0..<(h.w * h.h) {
            let s = i * channels
            var (r, g, b, alpha) = (0, 0, 0, 255)
            switch h.colour {
            case 0: (r, g, b) = (Int(pixels[s]), Int(pixels[s]), Int(pixels[s]))
            case 4: (r, g, b, alpha) = (Int(pixels[s]), Int(pixels[s]), Int(pixels[s]), Int(pixels[s + 1]))
            case 2: (r, g, b) = (Int(pixels[s]), Int(pixels[s + 1]), Int(pixels[s + 2]))
            case 6: (r, g, b, alpha) = (Int(pixels[s]), Int(pixels[s + 1]), Int(pixels[s + 2]), Int(pixels[s + 3]))
            default:
                let k = Int(pixels[s]) * 3
                guard k + 2 < palette.count else { throw Failure(reason: "palette index \(pixels[s]) is outside the palette", offset: 8) }
                (r, g, b) = (Int(palette[k]), Int(palette[k + 1]), Int(palette[k + 2]))
            }
            if alpha != 255 { (r, g, b) = ((r * alpha + 127) / 255, (g * alpha + 127) / 255, (b * alpha + 127) / 255) }
            out[i * 3] = UInt8(r)
            out[i * 3 + 1] = UInt8(g)
            out[i * 3 + 2] = UInt8(b)
        }
        width = h.w
        height = h.h
        rgb = out
    }
}
