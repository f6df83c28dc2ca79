import Foundation
import MetalTensorImport
import NeuralGraph
import Testing
import TestSupport
import XNNPACKRuntime

/// Every layer type and the MPS window rules, on small models with random weights, against the
/// independent numpy executor written from the format specification (tools/metaltensor): odd sizes
/// with stride 2, 1×1 with stride 2, even kernels, valid and full padding, explicit offsets,
/// transposed convolutions of kernels 1–4, pooling windows past the edge, concatenation of depths
/// that are not multiples of 4 and of different sizes, every activation, arithmetic with scales.
@Suite(.serialized) struct ReferenceParityTests {
    /// A model with one node per case, fed from the input; every layer is compared.
    static func layerZoo() -> SyntheticModel {
        var m = SyntheticModel()
        let (h, w, c) = (9, 11, 3)
        let shape = "\(h), \(w), \(c)"
        m.node("input", [("type", "input"), ("inputs", " 9, 11, 3 ")])
        func conv(_ name: String, k: (Int, Int), s: Int, f: Int, padding: String = "same", offset: String? = nil, act: String = "none",
                  depthwise: Bool = false, bias: Bool = true, transposed: Bool = false) {
            var keys: [(String, String)] = [("inputs", shape), ("kernel", k.0 == k.1 ? "\(k.0)" : "\(k.0), \(k.1)"),
                                             ("filters", "\(f)"), ("stride", "\(s)"), ("padding", padding), ("activation", act), ("weight", name)]
            if transposed { keys.insert(("type", "trans_conv"), at: 0) }  // convolutions are untyped nodes (the default type)
            if let offset { keys.append(("offset", offset)) }
            if depthwise { keys.append(("depthwise", "<true/>")) }
            m.node(name, keys)
            m.edge("input", name)
            let out = depthwise ? c : f
            let kernel = depthwise ? k.0 * k.1 * c : k.0 * k.1 * c * f
            m.weight(name, count: kernel + (bias ? out : 0), fanIn: k.0 * k.1 * c)
        }
        conv("same_s2", k: (3, 3), s: 2, f: 4, act: "relu")
        conv("valid_k5_s2", k: (5, 5), s: 2, f: 5, padding: "valid")
        conv("full_k3", k: (3, 3), s: 1, f: 3, padding: "full", act: "relun, 0, 0.5")
        conv("one_by_one_s2", k: (1, 1), s: 2, f: 6)
        conv("even_k2", k: (2, 2), s: 1, f: 4, act: "linear, 2, -1")
        conv("rect_3x5", k: (3, 5), s: 2, f: 4, act: "sigmod")
        conv("offset_0_0", k: (3, 3), s: 2, f: 4, offset: "0, 0")
        conv("offset_2_1", k: (3, 3), s: 1, f: 2, offset: "2,1", act: "relu, 0.1")
        conv("depthwise_s2", k: (3, 3), s: 2, f: 1, act: "relun,0,6", depthwise: true)
        conv("no_bias", k: (3, 3), s: 1, f: 3, bias: false)
        conv("trans_k3_s2", k: (3, 3), s: 2, f: 4, bias: false, transposed: true)
        conv("trans_k2_s2", k: (2, 2), s: 2, f: 3, bias: false, transposed: true)
        conv("trans_k4_s2", k: (4, 4), s: 2, f: 2, bias: false, transposed: true)
        conv("trans_k1_s2", k: (1, 1), s: 2, f: 2, bias: false, transposed: true)
        conv("trans_k3_valid", k: (3, 3), s: 2, f: 2, padding: "valid", bias: false, transposed: true)
        conv("trans_k3_full", k: (3, 3), s: 2, f: 2, padding: "full", bias: false, transposed: true)
        conv("trans_k3_s1_bias", k: (3, 3), s: 1, f: 3, act: "relu", transposed: true)
        func single(_ name: String, _ keys: [(String, String)]) {
            m.node(name, [("inputs", shape)] + keys)
            m.edge("input", name)
        }
        single("pool_max_k2", [("type", "pooling_max"), ("kernel", "2"), ("stride", "2")])
        single("pool_avg_k3", [("type", "pooling_average"), ("kernel", "3"), ("stride", "2")])
        single("pool_max_k3_s3", [("type", "pooling_max"), ("kernel", "3"), ("stride", "3")])
        single("neuron_power", [("type", "neuron"), ("activation", "power, 0.5, 1.5, 1.7")])
        single("neuron_relun_leaky", [("type", "neuron"), ("activation", "relun,0.2,0.4")])
        single("neuron_linear", [("type", "neuron"), ("activation", "linear,-3,0.25")])
        single("neuron_sigmoid", [("type", "neuron"), ("activation", "sigmod")])
        single("reshape", [("type", "reshape"), ("output", "3, 33, 3")])
        single("dense", [("type", "dense"), ("filters", "7"), ("activation", "relun, 0.1, 3"), ("weights", "dense")])
        m.weight("dense", count: h * w * c * 7 + 7, fanIn: h * w * c)
        single("block", [("type", "inverted_residual"), ("expansion", "4"), ("kernel", "3,3"),
                         ("neurons", "relun,0,6; relu,0.1,0; linear,1,0"), ("weights", "block_e, block_d, block_p")])
        m.weight("block_e", count: 16 * c + 16, fanIn: c)
        m.weight("block_d", count: 16 * 9 + 16, fanIn: 9)
        m.weight("block_p", count: c * 16 + c, fanIn: 16)
        // Softmax over channels of a scaled tensor; arithmetic on two graph tensors (slots by index).
        m.node("softmax", [("type", "softmax"), ("inputs", shape)])
        m.edge("neuron_linear", "softmax")
        m.node("arith_sub", [("type", "arithmetic"), ("arithmetic", "subtract"), ("inputs", shape + ";" + shape),
                             ("primary_scale", "2"), ("secondary_scale", "0.5"), ("bias", "0.125")])
        m.edge("neuron_linear", "arith_sub", slot: 1)
        m.edge("input", "arith_sub", slot: 0)
        m.node("arith_div", [("type", "arithmetic"), ("arithmetic", "divide"), ("inputs", shape + ";" + shape)])
        m.edge("neuron_sigmoid", "arith_div", slot: 1)
        m.edge("neuron_power", "arith_div", slot: 0)
        // Concatenation of depths 3 and 4 at different sizes: channel blocks at multiples of 4, top-left placement.
        m.node("concat", [("type", "concatenate"), ("inputs", shape + "; 5,6,4")])
        m.edge("input", "concat", slot: 0)
        m.edge("same_s2", "concat", slot: 1)
        m.node("out", [("type", "output"), ("inputs", shape)])
        m.edge("arith_sub", "out")
        return m
    }

    static func compare(_ ours: URL, _ reference: URL, tolerance: Float) throws -> [(String, Float)] {
        var rows: [(String, Float)] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: ours.path).sorted() where file.hasSuffix(".f32") {
            let a = try readFloats(ours.appendingPathComponent(file).path)
            let refPath = reference.appendingPathComponent(file).path
            #expect(FileManager.default.fileExists(atPath: refPath), "the reference has no \(file)")
            guard FileManager.default.fileExists(atPath: refPath) else { continue }
            let b = try readFloats(refPath)
            #expect(a.count == b.count, "\(file): \(a.count) values, the reference \(b.count)")
            guard a.count == b.count else { continue }
            let scale = max(1, b.map(abs).max() ?? 1)
            let worst = zip(a, b).map { abs($0 - $1) }.max() ?? 0
            rows.append((file, worst))
            #expect(worst <= tolerance * scale, "\(file): max |Δ| \(worst) vs the reference (allowed \(tolerance * scale))")
        }
        return rows
    }

    @Test(.enabled(if: MetalTensorReference.available, "needs the tools venv (.venv-tools, numpy)"))
    func everyLayerTypeMatchesTheReference() throws {
        let dir = TestEnvironment.scratch("metaltensor-zoo")
        let plist = try Self.layerZoo().write(to: dir)
        var random = SplitMix64(seed: 3)
        let input = (0..<(9 * 11 * 3)).map { _ in Float(random.next() >> 40) / Float(1 << 24) }
        let inputPath = dir.appendingPathComponent("input.f32").path
        try writeFloats(input, to: inputPath)
        for precision in ["fp32", "fp16"] {
            let ours = dir.appendingPathComponent("ours-\(precision)"), theirs = dir.appendingPathComponent("reference-\(precision)")
            try FileManager.default.createDirectory(at: ours, withIntermediateDirectories: true)
            let r = try runCommand(TestEnvironment.cli, ["model", "run", plist, "--input-f32", inputPath, "--output-dir", ours.path,
                                                         "--all-layers", "--precision", precision])
            try #require(r.status == 0, "framegraph: \(r.stderr)")
            let ref = try MetalTensorReference.run(plist, input: inputPath, into: theirs, precision: precision)
            try #require(ref.status == 0, "reference: \(ref.stderr)")
            // fp32: the same arithmetic up to summation order. fp16: stored values may round to
            // neighbouring halves (a relative step of 2^-10 per stored tensor, compounded over two layers).
            let rows = try Self.compare(ours, theirs, tolerance: precision == "fp32" ? 1e-5 : 8e-3)
            #expect(rows.count >= 32, "compared \(rows.count) layers")
            print("MetalTensor layer zoo \(precision): \(rows.count) layers, worst \(rows.max { $0.1 < $1.1 }.map { "\($0.0) \($0.1)" } ?? "-")")
        }
    }
}
