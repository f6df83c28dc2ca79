import FFmpegSupport
import Foundation
import FrameGraph
import FrameGraphLabeling
import FrameGraphModels
import FrameGraphNetwork
import MetalTensorImport
import ModelDeployment
import ModelFormats
import TFLiteImport
import NeuralGraph
import ONNXImport
import XNNPACKRuntime

/// `framegraph model info|bench|run|compare MODEL …`.
struct ModelCommand {
    let arguments: Arguments

    func execute() throws -> Int32 {
        let words = arguments.positional
        if words.count == 2, words[1] == "check", arguments.has("supported") {
            print("tflite builtins (\(TFLiteBuiltin.supported.count) of \(TFLiteBuiltin.names.count)): "
                  + TFLiteBuiltin.supported.map { TFLiteBuiltin.name($0) }.sorted().joined(separator: " "))
            print("tflite custom: " + TFLiteBuiltin.supportedCustom.joined(separator: " "))
            print("onnx: " + ONNXImporter.supportedOperators.joined(separator: " "))
            return 0
        }
        guard words.count >= 3, ["info", "check", "bench", "run", "compare"].contains(words[1]) else {
            throw Arguments.UsageError(description: "usage: framegraph model info|check|bench|run|compare MODEL … (see framegraph --help)")
        }
        if words[1] == "check" {
            let limits = ModelCommand.limits(arguments)
            return try ModelCheckCommand(arguments: arguments, models: service(limits: limits), limits: limits).execute(words[2])
        }
        if words[1] == "compare" { return try compare(model: words[2], media: Array(words.dropFirst(3))) }
        let runs = arguments.integer("runs")
        let warmup = arguments.integer("warmup")
        let threads = arguments.integer("threads")
        let stages = arguments.integer("stages")
        let kernelsName = arguments.value("conv-kernels") ?? Predictor.ConvolutionKernels.auto.rawValue
        guard let convolutions = Predictor.ConvolutionKernels(rawValue: kernelsName) else {
            throw Arguments.UsageError(description: "--conv-kernels '\(kernelsName)': expected one of "
                                       + Predictor.ConvolutionKernels.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let limits = ModelCommand.limits(arguments)
        let start = Date()
        // An archive (.fgarchive) or a hosted model (collection:NAME/ENTRY) is opened in memory first.
        var archiveLines: [String] = []
        let models = service(limits: limits)
        if !ModelReference.isCollection(words[2]), let file = try? models.locate(words[2]), (try? models.format(of: file)) == .archive {
            let m = try ModelArchive.manifest(path: file)
            archiveLines = ["archive \(words[2]): \(m.name) \(m.version), \(m.modelFormat), files \(m.files.map(\.name).joined(separator: ", "))"
                            + (m.encryption.map { ", encrypted (\($0.algorithm), team key \($0.keyID))" } ?? ", not encrypted")]
            archiveLines += m.inputs.map { "  input '\($0.name)': \($0.shape)" } + m.outputs.map { "  output '\($0.name)': \($0.shape)" }
        }
        // A MediaPipe Tasks bundle named without a part: what it holds, each model's inputs and outputs.
        if words[1] == "info", !words[2].contains("#"), let file = try? models.locate(words[2]), (try? models.format(of: file)) == .zip {
            let bundle = try ModelBundle(path: file, limits: limits)
            print("bundle \(file): \(bundle.files.count) files (\(bundle.files.joined(separator: ", ")))")
            for part in bundle.parts {
                let graph = try models.graph(at: try models.resolve("\(file)#\(part)").path)
                let io = { (list: [Int]) in list.map { "'\(graph.tensors[$0].name)' \(graph.tensors[$0].shape)" }.joined(separator: ", ") }
                print("  \(part): inputs \(io(graph.inputs)); outputs \(io(graph.outputs)); \(graph.nodes.count) operations"
                      + " — framegraph model info \(words[2])#\(part.hasSuffix(".tflite") ? String(part.dropLast(7)) : part)")
            }
            return 0
        }
        let resolved: ResolvedModel
        do {
            resolved = try models.resolve(words[2])
        } catch where words[1] == "info" && !archiveLines.isEmpty {
            // The manifest is readable without the key: show it, and say why the model itself is not.
            for line in archiveLines { print(line) }
            print("  the model inside cannot be opened on this machine: \(FrameGraph.describe(error))")
            return 0
        }
        if ModelReference.isCollection(words[2]) { archiveLines = ["source: \(resolved.source)"] }
        let path = resolved.path
        let graph = try load(path, limits: limits)
        let loadSeconds = Date().timeIntervalSince(start)
        if words[1] == "info" {
            for line in archiveLines { print(line) }
            print(info(graph, path: path))
            return 0
        }
        if words[1] == "run" {
            try run(graph, path: path, reference: words[2], threads: threads)
            return 0
        }
        let batch = arguments.integer("batch")
        print(try bench(try graph.batched(batch), path: path, loadSeconds: loadSeconds, runs: runs, warmup: warmup, stages: stages,
                        options: Predictor.Options(threads: threads, convolutions: convolutions,
                                                   precision: try precision().predictor)))
        return 0
    }

    /// `--precision` (default `fallback`) read through the nodes' own table, ``NetworkPrecision``: fp32,
    /// fp16 (a MetalTensor storage, see `load`) or int8 (the predictor's arithmetic).
    func precision(default fallback: NetworkPrecision = .float32) throws -> NetworkPrecision {
        let text = arguments.value("precision") ?? fallback.rawValue
        guard let precision = NetworkPrecision(rawValue: text) else {
            throw Arguments.UsageError(description: "--precision '\(text)': expected fp32, fp16 (MetalTensor models), bf16 or int8")
        }
        return precision
    }

    /// `framegraph model compare MODEL CLIP|PHOTO… [--precision int8] [--frames N] [--threads N]`: the
    /// model in float32 and in `--precision` on the same frames (every frame of each clip, at most
    /// N of each): the outputs' differences, the masks' IoU for a segmentation model, both times.
    func compare(model: String, media: [String]) throws -> Int32 {
        guard !media.isEmpty else {
            throw Arguments.UsageError(description: "usage: framegraph model compare MODEL CLIP|PHOTO… [--precision int8] [--frames N]")
        }
        let candidate = try precision(default: .int8), text = candidate.rawValue
        guard candidate != .float16 else { throw Arguments.UsageError(description: "--precision '\(text)': expected int8 or fp32") }
        let frames = arguments.integer("frames")
        let threads = arguments.integer("threads")
        let path = try service(limits: ModelCommand.limits(arguments)).resolve(model).path
        let comparison = try PrecisionComparison(model: path, precision: candidate.predictor, threads: threads)
        var low: [String] = []
        /// Per clip with a mask: its name and the IoU of all its frames together (Σ intersection / Σ union).
        var clips: [(name: String, iou: Double)] = []
        for file in media {
            let reader = try MediaReader(path: file, options: .init())
            let name = (file as NSString).lastPathComponent
            var read = 0, intersection = 0, union = 0
            comparison.beginClip()
            while read < frames, let frame = try reader.nextFrame() {
                if Interrupts.shared.interrupted { return 130 }
                if let mask = try comparison.add(frame) {
                    intersection += mask.intersection
                    union += mask.union
                    if mask.iou < 0.99 {
                        low.append(String(format: "    %@ frame %d: IoU %.4f, float mask %d pixels", name, read, mask.iou, mask.pixels))
                    }
                }
                read += 1
            }
            guard read > 0 else { throw GraphError.io(path: file, reason: "holds no picture") }
            if union > 0 { clips.append((name, Double(intersection) / Double(union))) }
        }
        let r = comparison.report
        print("model \(model): float32 against \(text), \(r.frames) frames of \(media.count) file(s), \(threads) thread(s)")
        print("  \(text): \(r.candidateKernels)")
        print(String(format: "  prediction, median (alternated frame by frame): float32 %.3f ms, %@ %.3f ms (%.2f×)", r.referenceMilliseconds, text,
                     r.candidateMilliseconds, r.candidateMilliseconds / max(r.referenceMilliseconds, 1e-9)))
        for o in r.outputs {
            print(String(format: "  output '%@': |difference| mean %.6f, 99th percentile %.4f, largest %.4f", o.name, o.meanAbs, o.p99, o.maxAbs))
        }
        if let same = r.sameTopClass { print("  best class the same in \(same) of \(r.frames) frames") }
        if !r.maskIoU.isEmpty {
            let sorted = r.maskIoU.sorted()
            print(String(format: "  mask IoU at 0.5, per frame: lowest %.4f, median %.4f, mean %.4f; frames below 0.99: %d", sorted[0],
                         sorted[sorted.count / 2], sorted.reduce(0, +) / Double(sorted.count), sorted.filter { $0 < 0.99 }.count))
            for line in low.prefix(20) { print(line) }
            if let lowest = clips.min(by: { $0.iou < $1.iou }) {
                print(String(format: "  mask IoU per clip (its frames together): lowest %.4f (%@); clips below 0.99: %d of %d", lowest.iou,
                             lowest.name, clips.filter { $0.iou < 0.99 }.count, clips.count))
            }
            if !r.maskChange.isEmpty {
                let change = r.maskChange.sorted()
                print(String(format: "  for scale, float32's own mask from one frame to the next: IoU median %.4f, lowest %.4f",
                             change[change.count / 2], change[0]))
            }
        }
        return 0
    }

    /// The model at `path`; `--precision int8` (any model: the predictor's dense convolutions in 8-bit
    /// integers); a MetalTensor plist with `--precision fp32|fp16`, `--weights BIN`,
    /// `--map JSON` (default: beside the plist) and `--all-layers` (every node's result an output).
    func load(_ path: String, limits: ModelLimits) throws -> NeuralGraph {
        let precision = try precision()
        let options = MetalTensorImporter.Options(precision: precision.metalTensorStorage, exposeAllLayers: arguments.has("all-layers"),
                                                  weights: arguments.value("weights"), map: arguments.value("map"))
        if (try ModelFormat.detect(path: path)) != .metalTensor {
            if precision == .float16 { throw Arguments.UsageError(description: "--precision fp16 applies to MetalTensor models (.plist) only") }
            for key in ["weights", "map"] where arguments.value(key) != nil {
                throw Arguments.UsageError(description: "--\(key) applies to MetalTensor models (.plist) only")
            }
            if arguments.has("all-layers") { throw Arguments.UsageError(description: "--all-layers applies to MetalTensor models (.plist) only") }
        }
        return try service(limits: limits).graph(at: path, metalTensor: options)
    }

    func info(_ graph: NeuralGraph, path: String) -> String {
        var lines = ["model \(path)"]
        for (label, list) in [("input", graph.inputs), ("output", graph.outputs)] {
            for t in list {
                let v = graph.tensors[t]
                lines.append("  \(label) '\(v.name)': \(v.shape) \(v.elementType.rawValue)")
            }
        }
        lines.append("  operations: \(graph.nodes.count) — " + graph.operationCounts.map { "\($0.name) ×\($0.count)" }.joined(separator: ", "))
        lines.append("  parameters: \(graph.parameterCount)")
        lines.append(String(format: "  FLOPs per prediction: %.3f G (multiply-add = 2)", Double(graph.flops) / 1e9))
        for key in graph.metadata.keys.sorted() { lines.append("  \(key): \(graph.metadata[key] ?? "")") }
        lines += ModelUse.lines(for: graph)
        if path.hasSuffix(".tflite") {
            do {
                if let m = try TFLiteMetadata.read(path: path) { lines += Self.metadataLines(m) }
            } catch {
                lines.append("  metadata: \(FrameGraph.describe(error))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The lines `model info` prints for a TFLite model's metadata and packed files.
    static func metadataLines(_ m: TFLiteMetadata) -> [String] {
        var lines = ["TFLite metadata:"]
        for (label, value) in [("name", m.name), ("description", m.description), ("version", m.version), ("author", m.author),
                               ("license", m.license), ("min parser version", m.minParserVersion)] {
            if let value, !value.isEmpty { lines.append("  \(label): \(value)") }
        }
        func list(_ v: [Float]) -> String { v.map { String(format: "%g", $0) }.joined(separator: ", ") }
        for (kind, tensors) in [("input", m.inputs), ("output", m.outputs)] {
            for (i, t) in tensors.enumerated() {
                var parts: [String] = []
                if let s = t.colorSpace { parts.append("colour space \(s)") }
                if !t.mean.isEmpty || !t.std.isEmpty { parts.append("normalisation (x − [\(list(t.mean))]) / [\(list(t.std))]") }
                if !t.min.isEmpty || !t.max.isEmpty { parts.append("range [\(list(t.min))] … [\(list(t.max))]") }
                if let s = t.scoreThreshold { parts.append("score threshold \(String(format: "%g", s))") }
                if let c = t.scoreCalibration { parts.append("score calibration \(c)") }
                for f in t.files { parts.append("file '\(f.name)' (\(f.type)\(f.locale.map { ", \($0)" } ?? ""))") }
                lines.append("  \(kind) \(i) '\(t.name ?? "")': " + (parts.isEmpty ? "—" : parts.joined(separator: "; ")))
            }
        }
        for f in m.files { lines.append("  file '\(f.name)' (\(f.type))") }
        if !m.packedFiles.isEmpty { lines.append("  packed files: " + m.packedFiles.joined(separator: ", ")) }
        return lines
    }

    /// `model run`: one prediction on an input file; each output written as raw float32 (FrameGraph's
    /// NHWC layout) to `--output-dir`/NAME.f32, for tools/models/validate.py.
    /// The model service `model` commands use: the standard search path (from the current folder),
    /// `limits`, and `--machine-config` for hosted models.
    func service(limits: ModelLimits) -> ModelService {
        var configuration = ModelService.Configuration.standard()
        configuration.limits = limits
        configuration.machineConfigPath = arguments.value("machine-config")
        return ModelService(configuration)
    }

    /// The input normalisation FrameGraph's nodes use for a model of this shape (MediaPipe's face
    /// detector: −1…1), recognised by content as ``ModelUse`` does; nil: none known.
    static func knownNormalization(_ graph: NeuralGraph) -> InputNormalization? {
        ModelUse.lines(for: graph).first?.contains("face detection") == true ? .signed : nil
    }

    /// `--model-budget MB`: the memory budget models are checked against (default 2048 MiB).
    static func limits(_ arguments: Arguments) -> ModelLimits {
        let megabytes = arguments.integer("model-budget")
        return ModelLimits(memoryBudgetBytes: megabytes << 20)
    }

    func run(_ graph: NeuralGraph, path: String, reference: String, threads: Int) throws {
        guard let directory = arguments.value("output-dir") else {
            throw Arguments.UsageError(description: "model run needs --output-dir DIR")
        }
        let predictor = try Predictor(graph: graph, options: .init(threads: threads, precision: try precision().predictor))
        let input = predictor.input(0)
        if let file = arguments.value("input-f32") {
            let data = try FileCheck.read(file, what: "input", maxBytes: Int64(input.count * 4))
            guard data.count == input.count * 4 else {
                throw ModelError.inputMismatch(input: predictor.inputInfo(0).name, expected: "\(input.count) float32 values \(input.shape) (NHWC)",
                                               got: "\(data.count) bytes in \(file)")
            }
            data.withUnsafeBytes { raw in
                for i in 0..<input.count { input.pointer[i] = raw.loadUnaligned(fromByteOffset: 4 * i, as: Float.self) }
            }
        } else if let file = arguments.value("input-rgb") {
            let data = try FileCheck.read(file, what: "input", maxBytes: Int64(input.count))
            guard data.count == input.count else {
                throw ModelError.inputMismatch(input: predictor.inputInfo(0).name, expected: "\(input.count) bytes (\(input.shape), uint8 HWC)",
                                               got: "\(data.count) bytes in \(file)")
            }
            // A quantized input takes the bytes as its integers; else the model's metadata (TFLite
            // metadata, ONNX normalization_mean/std), else what FrameGraph's nodes use, else 0…1.
            let metadata = try? ClassifierInfo.read(modelAt: path, graph: graph).normalization
            let known = InputNormalization.forQuantizedInput(predictor.inputInfo(0)) ?? metadata ?? ModelCommand.knownNormalization(graph) ?? .unit
            let scale = Float(arguments.number("scale") ?? Double(known.scale))
            let offset = Float(arguments.number("offset") ?? Double(known.offset))
            for (i, b) in data.enumerated() { input.pointer[i] = Float(b) * scale + offset }
        } else {
            throw Arguments.UsageError(description: "model run needs --input-rgb FILE (uint8 HWC) or --input-f32 FILE (float32 NHWC)")
        }
        try predictor.predict()
        // No output may replace the model or the input file (`--output-dir` beside them is fine).
        let inputs = [(path, "the model")] + ["input-f32", "input-rgb"].compactMap { key in arguments.value(key).map { ($0, "--\(key)") } }
        let raw = arguments.has("raw")
        var outputs = (0..<predictor.outputCount).map { i in (outputFile(directory, predictor.outputInfo(i).name), "model run output") }
        if raw {
            outputs += (0..<predictor.outputCount).filter { predictor.outputInfo($0).isQuantized }.map { i in
                (outputFile(directory, predictor.outputInfo(i).name, extension: "raw"), "model run output")
            }
        }
        try FileCheck.checkOutputs(outputs, inputs: inputs)
        for i in 0..<predictor.outputCount {
            let out = predictor.output(i), info = predictor.outputInfo(i)
            let file = outputFile(directory, info.name)
            // Quantized outputs' buffers hold their real values: the f32 file is dequantized already.
            try OutputFile.write(Data(bytes: out.pointer, count: out.count * 4), to: file)
            print("\(info.name) \(out.shape) → \(file)")
            if raw, let q = info.quantization {
                let stored = Self.storedBytes(UnsafeBufferPointer(start: out.pointer, count: out.count), quantization: q, type: info.elementType,
                                              shape: info.shape)
                let rawFile = outputFile(directory, info.name, extension: "raw")
                try OutputFile.write(stored, to: rawFile)
                print("\(info.name) \(info.elementType) as stored → \(rawFile)")
            }
        }
    }

    /// The integers a quantized tensor stores for its real `values` (int8/uint8 bytes, int32
    /// little-endian), per channel where it has several scales.
    static func storedBytes(_ values: UnsafeBufferPointer<Float>, quantization q: Quantization, type: ElementType, shape: [Int]) -> Data {
        let inner = q.axis.map { a in shape.count > a ? shape[(a + 1)...].reduce(1, *) : 1 } ?? values.count
        let channels = q.axis.map { a in shape.count > a ? shape[a] : 1 } ?? 1
        var data = Data()
        for (i, v) in values.enumerated() {
            let (scale, zero) = q.parameters(channel: q.isPerChannel ? (i / max(1, inner)) % max(1, channels) : 0)
            let k = Quantization(scale: scale, zeroPoint: zero).quantize(v, type: type)
            switch type {
            case .int8: data.append(UInt8(bitPattern: Int8(clamping: k)))
            case .uint8: data.append(UInt8(clamping: k))
            default: withUnsafeBytes(of: Int32(clamping: k).littleEndian) { data.append(contentsOf: $0) }
            }
        }
        return data
    }

    /// Where output `name` is written: DIR/NAME.f32 (or .raw), the name made safe for a file name.
    func outputFile(_ directory: String, _ name: String, extension ext: String = "f32") -> String {
        "\(directory)/\(String(name.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" })).\(ext)"
    }

    func bench(_ graph: NeuralGraph, path: String, loadSeconds: Double, runs: Int, warmup: Int, stages: Int = 6,
               options: Predictor.Options) throws -> String {
        let predictor = try Predictor(graph: graph, options: options)
        let threads = options.threads
        // Seeded pseudo-random input in 0…1, held apart from the predictor's buffers.
        var seed: UInt64 = 42
        let inputs: [[Float]] = (0..<predictor.inputCount).map { i in
            (0..<predictor.input(i).count).map { _ in
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                return Float(seed >> 40) / Float(1 << 24)
            }
        }
        var outputs: [[Float]] = (0..<predictor.outputCount).map { [Float](repeating: 0, count: predictor.output($0).count) }
        // One step as a caller takes it, and as the peers' scripts time it (LiteRT's set_tensor,
        // invoke, get_tensor; onnxruntime's run with its feed): the input written, the prediction,
        // the output read.
        func step() throws {
            for i in 0..<inputs.count {
                inputs[i].withUnsafeBufferPointer { if let from = $0.baseAddress { predictor.input(i).pointer.update(from: from, count: $0.count) } }
            }
            try predictor.predict()
            for i in 0..<outputs.count {
                outputs[i].withUnsafeMutableBufferPointer { $0.baseAddress?.update(from: predictor.output(i).pointer, count: $0.count) }
            }
        }
        for _ in 0..<warmup { try step() }
        var times: [Double] = []
        times.reserveCapacity(runs)
        for _ in 0..<runs {
            let t0 = DispatchTime.now().uptimeNanoseconds
            try step()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
        }
        times.sort()
        func pct(_ p: Double) -> Double { times[min(times.count - 1, Int((p * Double(times.count)).rounded(.up)) - 1)] }

        // Per operation type: the same graph with one stage per operation, timed stage by stage.
        let split = try Predictor(graph: graph, options: .init(threads: threads, stagePerOperation: true,
                                                               convolutions: predictor.usesOwnKernels ? .own : .xnnpack,
                                                               precision: options.precision))
        for i in 0..<split.inputCount { split.input(i).pointer.update(from: predictor.input(i).pointer, count: split.input(i).count) }
        var byType: [String: [Double]] = [:]
        var byStage: [Int: (name: String, flops: Int, times: [Double])] = [:]
        let profileRuns = max(5, min(runs, 50))
        // The plan's stages first, run after run, then the split graph's: alternated, each would
        // evict the other's weights, and every stage would be timed on cold caches.
        for _ in 0..<profileRuns {
            for (index, stage) in try predictor.predictTimed().enumerated() {
                byStage[index, default: (stage.operations.joined(separator: "+") + " " + stage.node, stage.flops, [])].times.append(stage.seconds * 1000)
            }
        }
        for _ in 0..<3 { try split.predict() }
        var totals: [Double] = []
        for _ in 0..<profileRuns {
            var perType: [String: Double] = [:]
            var total = 0.0
            for stage in try split.predictTimed() {
                perType[stage.operations.first ?? "?", default: 0] += stage.seconds * 1000
                total += stage.seconds * 1000
            }
            for (k, v) in perType { byType[k, default: []].append(v) }
            totals.append(total)
        }
        func median(_ v: [Double]) -> Double { let s = v.sorted(); return s[s.count / 2] }
        var lines = ["model \(path)"]
        lines.append(String(format: "  load (import) %.1f ms, compile %.1f ms, threads %d, convolutions: %@", loadSeconds * 1000,
                            predictor.compileSeconds * 1000, threads,
                            predictor.kernelChoice))
        lines.append("  plan: \(predictor.planSummary)")
        let middle = predictor.intermediateBytes
        lines.append(String(format: "  intermediate tensors: %.2f MB in one shared arena (%.2f MB with a buffer each)",
                            Double(middle.shared) / 1_048_576, Double(middle.unshared) / 1_048_576))
        lines.append(String(format: "  prediction over %d runs: median %.3f ms, p95 %.3f ms, min %.3f ms, max %.3f ms",
                            runs, pct(0.5), pct(0.95), times[0], times[times.count - 1]))
        if let batch = graph.inputs.first.flatMap({ graph.tensors[$0].shape.first }), batch > 1 {
            lines.append(String(format: "  batch of %d images: median %.3f ms per image", batch, pct(0.5) / Double(batch)))
        }
        lines.append(String(format: "  time per operation type (one stage per operation, fusion across operations off; sum of medians %.3f ms):",
                            median(totals)))
        let rows = byType.map { ($0.key, median($0.value)) }.sorted { $0.1 > $1.1 }
        let counts = Dictionary(graph.operationCounts.map { ($0.name, $0.count) }, uniquingKeysWith: +)
        for (name, ms) in rows {
            lines.append("    " + name.padding(toLength: 22, withPad: " ", startingAt: 0) + String(format: " ×%-3d %8.3f ms  %5.1f %%", counts[name] ?? 0, ms, 100 * ms / max(median(totals), 1e-9)))
        }
        if stages > 0 { lines.append("  slowest stages of the plan (fused as it runs; GFLOP/s: multiply-adds count 2):") }
        for stage in byStage.values.map({ ($0.name, $0.flops, median($0.times)) }).sorted(by: { $0.2 > $1.2 }).prefix(stages) {
            let name = stage.0.count > 110 ? String(stage.0.prefix(60)) + "…" + String(stage.0.suffix(49)) : stage.0
            let rate = stage.2 > 0 ? Double(stage.1) / (stage.2 * 1e6) : 0
            lines.append(String(format: "    %8.3f ms %6.1f GFLOP/s  ", stage.2, rate) + name)
        }
        return lines.joined(separator: "\n")
    }
}
