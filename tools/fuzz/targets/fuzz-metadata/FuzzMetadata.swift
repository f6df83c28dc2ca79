import FuzzSupport
import TFLiteImport

/// Fuzz target: a TFLite file's metadata (the TFLITE_METADATA FlatBuffer) and the zip archive of
/// associated files behind it: metadata decoded, every packed file read (stored or inflated).
func fuzzOne(_ bytes: [UInt8]) {
    _ = try? TFLiteMetadata.read(bytes: bytes, fileName: "fuzz.tflite")
    _ = try? TFLiteMetadata.packedFiles(bytes: bytes, fileName: "fuzz.tflite")
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
