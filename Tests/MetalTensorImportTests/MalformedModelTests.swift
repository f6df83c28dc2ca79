import Foundation
import MetalTensorImport
import NeuralGraph
import Testing
import TestSupport
import XNNPACKRuntime

/// Each class of malformed MetalTensor model gives one error naming the file, the node and the key
/// (and the byte offset for unreadable files), never a crash; the CLI prints it as one line.
@Suite struct MalformedModelTests {
    /// input (4×4×3) → conv (3×3, 2 filters) → output.
    static func small() -> SyntheticModel {
        var m = SyntheticModel()
        m.node("input", [("type", "input"), ("inputs", "4,4,3"), ("targets", "conv")])
        m.node("conv", [("inputs", "4,4,3"), ("kernel", "3"), ("filters", "2"), ("weight", "conv_w"), ("targets", "output")])
        m.node("output", [("type", "output"), ("inputs", "4,4,2")])
        m.weight("conv_w", count: 3 * 3 * 3 * 2 + 2, fanIn: 27)
        return m
    }

    /// Imports a model changed by `change`; the error's text.
    func failure(_ name: String, _ change: (inout SyntheticModel) -> Void, edit: ((URL) throws -> Void)? = nil) throws -> String {
        let dir = TestEnvironment.scratch("metaltensor-bad-\(name)")
        var m = Self.small()
        change(&m)
        let plist = try m.write(to: dir, name: name)
        try edit?(dir)
        do {
            _ = try MetalTensorImporter.load(path: plist)
            Issue.record("\(name): imported without an error")
            return ""
        } catch {
            return "\(error)"
        }
    }

    static func set(_ m: inout SyntheticModel, _ node: String, _ key: String, _ value: String?) {
        guard let i = m.nodes.firstIndex(where: { $0.name == node }) else { return }
        m.nodes[i].keys.removeAll { $0.0 == key }
        if let value { m.nodes[i].keys.append((key, value)) }
    }

    @Test func theSmallModelImports() throws {
        let dir = TestEnvironment.scratch("metaltensor-good")
        let graph = try MetalTensorImporter.load(path: try Self.small().write(to: dir))
        #expect(graph.tensors[graph.outputs[0]].shape == [1, 4, 4, 2])
        #expect(graph.tensors[graph.inputs[0]].name == "input")
    }

    @Test func aMissingKeyNamesNodeAndKey() throws {
        let e = try failure("missing", { Self.set(&$0, "conv", "kernel", nil) })
        #expect(e.contains("missing.plist") && e.contains("node 'conv'") && e.contains("key 'kernel'") && e.contains("missing"), "\(e)")
    }

    @Test func anUnknownTypeIsRefused() throws {
        let e = try failure("type", { Self.set(&$0, "conv", "type", "convolutional") })
        #expect(e.contains("type.plist") && e.contains("node 'conv'") && e.contains("key 'type'") && e.contains("convolutional"), "\(e)")
        let empty = try failure("emptytype", { Self.set(&$0, "conv", "type", "") })
        #expect(empty.contains("key 'type'"), "\(empty)")
    }

    @Test func aWeightRangeOutsideTheBlobIsRefused() throws {
        let e = try failure("range", { _ in }, edit: { dir in
            try "{ \"conv_w\": \"16, 224\", }".write(to: dir.appendingPathComponent("range.json"), atomically: true, encoding: .utf8)
        })
        #expect(e.contains("range.plist") && e.contains("node 'conv'") && e.contains("key 'weight'") && e.contains("runs past the end of range.bin"), "\(e)")
    }

    @Test func aWrongWeightCountForTheDeclaredShapeIsRefused() throws {
        // The declared input depth fixes the kernel: 4 instead of 3 wants 72 (+2) floats, the range has 56.
        let e = try failure("count", { Self.set(&$0, "conv", "filters", "3") })
        #expect(e.contains("node 'conv'") && e.contains("key 'weight'") && e.contains("expected 81 (kernel) or 84 (kernel + bias)"), "\(e)")
    }

    @Test func aMissingWeightNameAndAMissingBlobAreNamed() throws {
        let e = try failure("name", { Self.set(&$0, "conv", "weight", "conv_weights") })
        #expect(e.contains("key 'weight'") && e.contains("'conv_weights' is not in name.json"), "\(e)")
        let blob = try failure("blob", { _ in }, edit: { try FileManager.default.removeItem(at: $0.appendingPathComponent("blob.bin")) })
        #expect(blob.contains("node 'conv'") && blob.contains("blob.bin is missing"), "\(blob)")
    }

    @Test func cyclesAreRefused() throws {
        let e = try failure("cycle", { m in
            Self.set(&m, "conv", "targets", "conv2, output")
            m.node("conv2", [("inputs", "4,4,2"), ("kernel", "1"), ("filters", "2"), ("weight", "conv_w"), ("targets", "conv")])
        })
        #expect(e.contains("cycle.plist") && e.contains("cycle") && e.contains("conv → conv2 → conv"), "\(e)")
    }

    @Test func anUnknownTargetIsRefused() throws {
        let e = try failure("target", { Self.set(&$0, "conv", "targets", "output, ouptut") })
        #expect(e.contains("node 'conv'") && e.contains("key 'targets'") && e.contains("'ouptut' is not a node"), "\(e)")
    }

    @Test func aDeclaredShapeThatDoesNotFitIsRefused() throws {
        let e = try failure("shape", { Self.set(&$0, "conv", "inputs", "4,5,3") })
        #expect(e.contains("node 'conv'") && e.contains("key 'inputs'") && e.contains("4,4,3"), "\(e)")
    }

    @Test func badActivationsAndPaddingAreRefused() throws {
        let e = try failure("activation", { Self.set(&$0, "conv", "activation", "Relu") })
        #expect(e.contains("key 'activation'") && e.contains("'Relu' is not an activation"), "\(e)")
        let p = try failure("padding", { Self.set(&$0, "conv", "padding", "SAME") })
        #expect(p.contains("key 'padding'"), "\(p)")
    }

    @Test func slotsFedTwiceOrNeverAreRefused() throws {
        let twice = try failure("twice", { m in
            Self.set(&m, "input", "targets", "conv, output")
            Self.set(&m, "input", "indices", "0,0")
        })
        #expect(twice.contains("node 'conv', key 'targets'") && twice.contains("target 'output' has no free input slot"), "\(twice)")
        let never = try failure("never", { m in
            Self.set(&m, "conv", "targets", "cat")
            m.node("cat", [("type", "concatenate"), ("inputs", "4,4,2; 4,4,2"), ("targets", "output")])
            Self.set(&m, "output", "inputs", "4,4,8")
        })
        #expect(never.contains("output node 'output' is never reached"), "\(never)")
    }

    @Test func inputAndOutputNodesAreRequired() throws {
        let noInput = try failure("noinput", { Self.set(&$0, "input", "type", "convolution") })
        #expect(noInput.contains("no node of type 'input'"), "\(noInput)")
        let two = try failure("twoinputs", { $0.node("input2", [("type", "input"), ("inputs", "4,4,3"), ("targets", "")]) })
        #expect(two.contains("2 input nodes"), "\(two)")
    }

    @Test func damagedFilesGiveTheByteOffset() throws {
        let e = try failure("xml", { _ in }, edit: { dir in
            let url = dir.appendingPathComponent("xml.plist")
            var text = try String(contentsOf: url, encoding: .utf8)
            text = text.replacingOccurrences(of: "</dict>\n</plist>", with: "</dic>\n</plist>")
            try text.write(to: url, atomically: true, encoding: .utf8)
        })
        #expect(e.contains("xml.plist") && e.contains("not a property list") && e.contains("at byte"), "\(e)")
        let j = try failure("json", { _ in }, edit: { dir in
            try "{ \"conv_w\": \"0,224\" \"x\": 1 }".write(to: dir.appendingPathComponent("json.json"), atomically: true, encoding: .utf8)
        })
        #expect(j.contains("json.json") && j.contains("not a weight map") && j.contains("at byte 20"), "\(j)")
    }

    @Test func theCommandLinePrintsOneLineAndFails() throws {
        let dir = TestEnvironment.scratch("metaltensor-bad-cli")
        var m = Self.small()
        Self.set(&m, "conv", "kernel", nil)
        let plist = try m.write(to: dir, name: "cli")
        let r = try runCommand(TestEnvironment.cli, ["model", "info", plist])
        #expect(r.status != 0)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && r.stderr.contains("node 'conv', key 'kernel'"), "\(r.stderr)")
    }

    /// Weights in a file of their own beside the plist (format spec §2.5), as
    /// PortraitSegmentNet.0.5's `preprocess` takes `SWAP_BR.bin`: a 1×1 kernel that swaps red and blue.
    @Test func separateWeightFilesAreRead() throws {
        let dir = TestEnvironment.scratch("metaltensor-separate")
        var m = SyntheticModel()
        m.node("input", [("type", "input"), ("inputs", "2,2,3"), ("targets", "preprocess")])
        m.node("preprocess", [("inputs", "2,2,3"), ("kernel", "1"), ("filters", "3"), ("weight", "SWAP_BR.bin"),
                              ("activation", "linear,2,-1"), ("targets", "output")])
        m.node("output", [("type", "output"), ("inputs", "2,2,3")])
        let plist = try m.write(to: dir, name: "swap")
        let swap: [Float] = [0, 0, 1, 0, 1, 0, 1, 0, 0]
        try writeFloats(swap, to: dir.appendingPathComponent("SWAP_BR.bin").path)
        let predictor = try Predictor(graph: try MetalTensorImporter.load(path: plist))
        let input: [Float] = [0.1, 0.5, 0.9, 0.2, 0.4, 0.6, 1, 0, 0.25, 0.3, 0.3, 0.7]
        predictor.input(0).pointer.update(from: input, count: input.count)
        try predictor.predict()
        let out = Array(UnsafeBufferPointer(start: predictor.output(0).pointer, count: 12))
        for p in 0..<4 {
            for c in 0..<3 { #expect(abs(out[p * 3 + c] - (2 * input[p * 3 + 2 - c] - 1)) < 1e-6, "pixel \(p) channel \(c)") }
        }
        // A range of the file, and a range past its end.
        var ranged = m
        Self.set(&ranged, "preprocess", "weight_range", "0,36")
        let rangedPlist = try ranged.write(to: dir, name: "ranged")
        let rangedGraph = try MetalTensorImporter.load(path: rangedPlist)
        #expect(rangedGraph.outputs.count == 1)
        Self.set(&ranged, "preprocess", "weight_range", "4,36")
        let bad = try ranged.write(to: dir, name: "bad")
        #expect { try MetalTensorImporter.load(path: bad) } throws: { "\($0)".contains("runs past the end of SWAP_BR.bin") }
    }
}
