import Foundation
import FuzzSupport
import TFLiteImport

/// Fuzz target: TFLite flatbuffers → import → resource checks → compile → one prediction.
func fuzzOne(_ bytes: [UInt8]) {
    guard let graph = try? TFLiteImporter.load(bytes: bytes, fileName: "fuzz.tflite") else { return }
    ModelFuzzing.exercise(graph, fileName: "fuzz.tflite")
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
