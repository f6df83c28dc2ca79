import FuzzSupport
import MetalTensorImport

/// Fuzz target: MetalTensor's files. The first byte picks what the rest is:
/// 0 a property list (XML or binary), 1 a weight map (.json), 2 a PNG (secondary images),
/// 3 a whole model — plist, then `\n--json--\n` and the map, then `\n--bin--\n` and the blob —
/// imported (a file the plist names reads as absent), checked, compiled and run once.
func fuzzOne(_ bytes: [UInt8]) {
    guard let mode = bytes.first else { return }
    let rest = Array(bytes.dropFirst())
    switch mode % 4 {
    case 0: _ = try? PropertyList.read(rest)
    case 1: _ = try? WeightMap(bytes: rest)
    case 2: _ = try? PNGImage(bytes: rest)
    default:
        let (plist, afterPlist) = split(rest, at: Array("\n--json--\n".utf8))
        let (map, blob) = split(afterPlist ?? [], at: Array("\n--bin--\n".utf8))
        guard let graph = try? MetalTensorImporter.load(plist: plist, fileName: "fuzz.plist", map: afterPlist == nil ? nil : map,
                                                        weights: blob, resource: { _ in nil }) else { return }
        ModelFuzzing.exercise(graph, fileName: "fuzz.plist")
    }
}

/// The bytes before the first `separator` and those after it (nil when there is none).
func split(_ bytes: [UInt8], at separator: [UInt8]) -> ([UInt8], [UInt8]?) {
    guard bytes.count >= separator.count else { return (bytes, nil) }
    for i in 0...(bytes.count - separator.count) where bytes[i] == separator[0] && Array(bytes[i..<i + separator.count]) == separator {
        return (Array(bytes[..<i]), Array(bytes[(i + separator.count)...]))
    }
    return (bytes, nil)
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
