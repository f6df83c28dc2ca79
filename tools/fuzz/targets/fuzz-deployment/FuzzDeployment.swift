import Foundation
import FuzzSupport
import ModelDeployment

/// Fuzz target: everything a machine reads from a model server or the user before trusting it — an
/// archive (header, manifest, payload, files), a collection manifest and its signature file, a team
/// key (a key service's answer), a machine config. The first byte picks the reader.
let key = try? TeamKey(id: "0123456789abcdef", key: [UInt8](repeating: 7, count: 32))

func fuzzOne(_ input: [UInt8]) {
    guard let mode = input.first else { return }
    let bytes = Array(input.dropFirst())
    switch mode % 5 {
    case 0:
        _ = try? ModelArchive.open(bytes: bytes, name: "fuzz.fgarchive", key: key)
    case 1:
        _ = try? CollectionManifest.parse(Data(bytes), name: "index.json")
    case 2:
        // A signature file over a fixed manifest, checked against a fixed trusted key.
        try? ManifestSignature.verify(manifest: Data("{}".utf8), signature: Data(bytes),
                                      trustedKey: String(repeating: "ab", count: 32), collection: "Fuzz")
    case 3:
        _ = try? TeamKey(data: Data(bytes), name: "key service answer")
    default:
        _ = try? MachineConfig.parse(Data(bytes), path: "machine.json")
    }
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
