import NeuralGraph
import Testing
@testable import TFLiteImport

/// `TFLiteBuiltin.supported` (what `framegraph model check --supported` and docs/MODELS.md's
/// coverage table list) is exactly what the importer maps: a one-operator model of every builtin code
/// is refused as an unknown operator exactly when its code is not in the list.
@Suite struct SupportedBuiltinTests {
    @Test func theSupportedListIsExactlyWhatTheImporterMaps() throws {
        var wronglyListed: [String] = [], missing: [String] = []
        for code in 0..<TFLiteBuiltin.names.count where code != TFLiteBuiltin.custom {
            var m = TestModel()
            let x = m.tensor("x", [1, 4])
            let y = m.tensor("y", [1, 4])
            m.op(Int32(code), [x], [y])
            m.inputs = [x]
            m.outputs = [y]
            let name = TFLiteBuiltin.name(code)
            var unknown = false
            do {
                _ = try TFLiteImporter.load(bytes: m.bytes(), fileName: "probe.tflite")
            } catch let ModelError.unsupportedOperations(_, operations) {
                unknown = operations == [name]
            } catch {
                // Refused for its inputs or options: the importer knows the operator.
            }
            if unknown && TFLiteBuiltin.supported.contains(code) { wronglyListed.append(name) }
            if !unknown && !TFLiteBuiltin.supported.contains(code) { missing.append(name) }
        }
        #expect(wronglyListed.isEmpty, "listed as supported but refused as unknown: \(wronglyListed)")
        #expect(missing.isEmpty, "mapped but not listed: \(missing)")
        #expect(TFLiteBuiltin.supported.count >= 30)
    }
}
