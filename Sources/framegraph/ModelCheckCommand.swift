import Foundation
import FrameGraph
import FrameGraphModels
import ModelFormats
import NeuralGraph
import ONNXImport
import TFLiteImport
import XNNPACKRuntime

/// `framegraph model check MODEL`: every operator of the file with whether FrameGraph runs it (and
/// why not), the share it runs, and where and in what arithmetic each runs (XNNPACK's int8 kernels,
/// FrameGraph's own, float32 …). A `.task` bundle is checked part by part. Exit status 1 when
/// something is unsupported, so scripts can ask.
struct ModelCheckCommand {
    let arguments: Arguments
    let models: ModelService
    let limits: ModelLimits

    func execute(_ reference: String) throws -> Int32 {
        let file = try models.locate(reference)
        if !reference.contains("#"), try models.format(of: file) == .zip {
            let bundle = try ModelBundle(path: file, limits: limits)
            print("bundle \(reference): \(bundle.parts.count) models")
            var status: Int32 = 0
            for part in bundle.parts {
                let name = part.hasSuffix(".tflite") ? String(part.dropLast(7)) : part
                status = max(status, try check("\(file)#\(name)", shown: "\(reference)#\(name)"))
            }
            return status
        }
        return try check(reference, shown: reference)
    }

    private func check(_ reference: String, shown: String) throws -> Int32 {
        let path = try models.resolve(reference).path
        let format = try ModelFormat.detect(path: path)
        let name = (path as NSString).lastPathComponent
        let result: ImportCheck
        switch format {
        case .tflite:
            result = try TFLiteImporter.check(bytes: [UInt8](try ModelFile.read(path, maxBytes: limits.maxFileBytes)), fileName: name)
        case .onnx:
            result = try ONNXImporter.check(bytes: [UInt8](try ModelFile.read(path, maxBytes: limits.maxFileBytes)), fileName: name)
        default:
            // MetalTensor models: all of a file imports or it is refused as a whole.
            let graph = try models.graph(at: path)
            result = ImportCheck(operators: graph.nodes.enumerated().map { ImportedOperator(index: $0, type: $1.operation.name, name: $1.name, outcome: .imported) },
                                 graph: graph, failure: nil)
        }
        for line in Self.report(result, title: "model \(shown) (\(format))", threads: arguments.integer("threads"), all: arguments.has("all")) {
            print(line)
        }
        return result.failure == nil ? 0 : 1
    }

    /// The report's lines: the file's operators (run, folded, unsupported with why), the share run,
    /// and per operation type where it runs; with `all`, every operation.
    static func report(_ result: ImportCheck, title: String, threads: Int, all: Bool) -> [String] {
        var lines = [title]
        let ops = result.operators
        let unsupported = ops.filter { if case .unsupported = $0.outcome { return true } else { return false } }
        let folded = ops.filter { if case .folded = $0.outcome { return true } else { return false } }
        let share = ops.isEmpty ? 100 : Double(ops.count - unsupported.count) / Double(ops.count) * 100
        lines.append(String(format: "  operators: %d in the file; %d supported (%.1f %%), %d of them folded at import; %d unsupported",
                            ops.count, ops.count - unsupported.count, share, folded.count, unsupported.count))
        // Per type in the file: how many, and how many are supported.
        var byType: [(type: String, count: Int, unsupported: Int)] = []
        for op in ops {
            let isUnsupported: Bool = { if case .unsupported = op.outcome { return true } else { return false } }()
            if let k = byType.firstIndex(where: { $0.type == op.type }) {
                byType[k].count += 1
                byType[k].unsupported += isUnsupported ? 1 : 0
            } else {
                byType.append((op.type, 1, isUnsupported ? 1 : 0))
            }
        }
        lines.append("  in the file, by type:")
        for t in byType.sorted(by: { $0.count != $1.count ? $0.count > $1.count : $0.type < $1.type }) {
            let verdict = t.unsupported == 0 ? "supported" : t.unsupported == t.count ? "UNSUPPORTED" : "\(t.count - t.unsupported) supported, \(t.unsupported) not"
            lines.append("    \(t.type.padding(toLength: 32, withPad: " ", startingAt: 0)) ×\(String(t.count).padding(toLength: 5, withPad: " ", startingAt: 0)) \(verdict)")
        }
        if !unsupported.isEmpty {
            lines.append("  unsupported:")
            for op in unsupported {
                if case .unsupported(let why) = op.outcome { lines.append("    #\(op.index) \(op.type) '\(op.name)': \(why)") }
            }
            return lines
        }
        guard let graph = result.graph else { return lines }
        do {
            let predictor = try Predictor(graph: graph, options: .init(threads: threads))
            var runs: [(type: String, where: String, count: Int)] = []
            for (node, place) in predictor.placements {
                if let k = runs.firstIndex(where: { $0.type == node.operation.name && $0.where == place }) {
                    runs[k].count += 1
                } else {
                    runs.append((node.operation.name, place, 1))
                }
            }
            lines.append("  how the \(predictor.graph.nodes.count) operations run (plan: \(predictor.planSummary.prefix(120))\(predictor.planSummary.count > 120 ? "…" : "")):")
            for r in runs {
                lines.append("    \(r.type.padding(toLength: 28, withPad: " ", startingAt: 0)) ×\(String(r.count).padding(toLength: 5, withPad: " ", startingAt: 0)) \(r.where)")
            }
            if all {
                lines.append("  every operation:")
                for (k, (node, place)) in predictor.placements.enumerated() {
                    lines.append("    \(k) \(node.operation.name) '\(node.name)': \(place)")
                }
            }
        } catch {
            lines.append("  it imports, but cannot be compiled: \(FrameGraph.describe(error))")
        }
        return lines
    }
}
