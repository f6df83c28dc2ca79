import FFmpegSupport
import FuzzSupport

/// Fuzz target: a JPEG photo's marker segments and the EXIF (TIFF) directory in its APP1 segment,
/// read for the orientation tag.
func fuzzOne(_ bytes: [UInt8]) {
    _ = ExifOrientation.read(bytes)
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
