import Foundation
import FuzzSupport
import ONNXImport

/// Fuzz target: ONNX protobuf → import → resource checks → compile → one prediction.
func fuzzOne(_ bytes: [UInt8]) {
    guard let graph = try? ONNXImporter.load(bytes: bytes, fileName: "fuzz.onnx") else { return }
    ModelFuzzing.exercise(graph, fileName: "fuzz.onnx")
}

@main
struct Fuzz {
    static func main() { FuzzHarness.main(fuzzOne) }
}
