import NeuralGraph

/// The 13 layer types a MetalTensor plist may name (format spec §3.1); a node without a `type` key is
/// a convolution.
public enum MetalTensorLayerType: String, Sendable, CaseIterable {
    case input, output, convolution, dense, softmax
    case poolingAverage = "pooling_average", poolingMax = "pooling_max"
    case reshape, concatenate
    case invertedResidual = "inverted_residual"
    case arithmetic, neuron
    case transposedConvolution = "trans_conv"
}

/// One node of a MetalTensor plist: its name, type, declared input shapes, targets and the raw keys
/// (spaces already deleted), read through ``MetalTensorKeys`` so that every error names the file,
/// the node and the key.
struct MetalTensorNode {
    let name: String
    let type: MetalTensorLayerType
    let keys: MetalTensorKeys
    /// The declared input shape of each slot (`inputs`), as (rows, columns, depth).
    let declaredInputs: [[Int]]
    let targets: [String]
    /// The input slot of each target, when `indices` is given.
    let indices: [Int]?

    init(name: String, dictionary: PropertyList, file: String) throws(ModelError) {
        self.name = name
        let keys = MetalTensorKeys(file: file, node: name, dictionary: dictionary)
        self.keys = keys
        if let typeName = try keys.string("type") {
            guard let t = MetalTensorLayerType(rawValue: typeName) else {
                throw keys.error("type", "'\(typeName.prefix(60))' is not a layer type (expected one of \(MetalTensorLayerType.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            type = t
        } else {
            type = .convolution
        }
        declaredInputs = try keys.shapes("inputs") ?? []
        targets = try keys.string("targets").map { MetalTensorLexicon.components($0, ",") } ?? []
        if let indexList = try keys.string("indices") {
            let values = MetalTensorLexicon.components(indexList, ",").map(MetalTensorLexicon.intValue)
            guard values.count == targets.count else {
                throw keys.error("indices", "has \(values.count) entries for \(targets.count) targets (they must pair up)")
            }
            indices = values
        } else {
            indices = nil
        }
    }
}

/// Typed access to one node's keys with MetalTensor's defaults and parsing rules; every error is one
/// ``ModelError`` naming the file, the node and the key.
struct MetalTensorKeys {
    let file: String
    let node: String
    let dictionary: PropertyList

    /// Largest tensor side and depth accepted in a declared shape.
    static let maxDimension = 1 << 20
    /// Largest kernel side and stride accepted.
    static let maxKernel = 255, maxStride = 64

    func error(_ key: String?, _ reason: String) -> ModelError {
        .malformed(file: file, reason: "node '\(node.prefix(80))'" + (key.map { ", key '\($0)'" } ?? "") + ": " + reason, offset: nil)
    }

    func has(_ key: String) -> Bool { dictionary[key] != nil }

    /// A string value (numbers are accepted as their text); nil when absent.
    func string(_ key: String) throws(ModelError) -> String? {
        switch dictionary[key] {
        case nil: return nil
        case .string(let s)?: return s
        case .integer(let i)?: return String(i)
        case .real(let r)?: return String(r)
        case .bool(let b)?: return b ? "YES" : "NO"
        case let other?: throw error(key, "is \(other.kindName), expected a string")
        }
    }

    func requiredString(_ key: String) throws(ModelError) -> String {
        guard let s = try string(key), !s.isEmpty else { throw error(key, "is missing (required for a \(typeName) node)") }
        return s
    }

    private var typeName: String { dictionary["type"]?.string ?? "convolution" }

    func int(_ key: String, default value: Int) throws(ModelError) -> Int {
        guard let s = try string(key) else { return value }
        return MetalTensorLexicon.intValue(s)
    }

    func int(_ key: String, default value: Int, range: ClosedRange<Int>) throws(ModelError) -> Int {
        let v = try int(key, default: value)
        guard range.contains(v) else { throw error(key, "\(v) is outside \(range.lowerBound)…\(range.upperBound)") }
        return v
    }

    func requiredInt(_ key: String, range: ClosedRange<Int>) throws(ModelError) -> Int {
        let v = MetalTensorLexicon.intValue(try requiredString(key))
        guard range.contains(v) else { throw error(key, "\(v) is outside \(range.lowerBound)…\(range.upperBound)") }
        return v
    }

    func float(_ key: String, default value: Float) throws(ModelError) -> Float {
        guard let s = try string(key) else { return value }
        let v = MetalTensorLexicon.floatValue(s)
        guard v.isFinite, !MetalTensorLexicon.spellsNonFinite(s) else { throw error(key, "'\(s.prefix(40))' is not a finite number") }
        return v
    }

    func bool(_ key: String) throws(ModelError) -> Bool {
        switch dictionary[key] {
        case nil: return false
        case .bool(let b)?: return b
        case .integer(let i)?: return i != 0
        case .real(let r)?: return r != 0
        case .string(let s)?: return MetalTensorLexicon.boolValue(s)
        case let other?: throw error(key, "is \(other.kindName), expected a boolean")
        }
    }

    /// `"r,c,d"` (rows, columns, depth), each 1…maxDimension.
    func shape(_ key: String, text: String) throws(ModelError) -> [Int] {
        let parts = MetalTensorLexicon.components(text, ",").map(MetalTensorLexicon.intValue)
        guard parts.count == 3 else { throw error(key, "'\(text.prefix(60))' is not a shape \"rows,columns,depth\"") }
        for p in parts where !(1...Self.maxDimension).contains(p) {
            throw error(key, "shape '\(text.prefix(60))' has a side \(p) outside 1…\(Self.maxDimension)")
        }
        return parts
    }

    /// `"r,c,d;r,c,d;…"`; nil when absent.
    func shapes(_ key: String) throws(ModelError) -> [[Int]]? {
        guard let s = try string(key) else { return nil }
        var out: [[Int]] = []
        for part in MetalTensorLexicon.components(s, ";") { out.append(try shape(key, text: part)) }
        return out
    }

    /// A kernel `"k"` or `"kH<sep>kW"` (rows first).
    func kernel(_ key: String, separator: Character, default value: Int?) throws(ModelError) -> (h: Int, w: Int) {
        guard let s = try string(key) else {
            guard let v = value else { throw error(key, "is missing (required for a \(typeName) node)") }
            return (v, v)
        }
        let parts = MetalTensorLexicon.components(s, separator).map(MetalTensorLexicon.intValue)
        guard parts.count == 1 || parts.count == 2 else { throw error(key, "'\(s.prefix(40))' is not \"k\" or \"kH\(separator)kW\"") }
        let (h, w) = (parts[0], parts.count == 2 ? parts[1] : parts[0])
        for k in [h, w] where !(1...Self.maxKernel).contains(k) {
            throw error(key, "kernel side \(k) is outside 1…\(Self.maxKernel)")
        }
        return (h, w)
    }

    /// An offset `"ox,oy"` (or `"ox,oy,oz"` for pooling; oz is ignored); nil when absent.
    func offset(_ key: String) throws(ModelError) -> (x: Int, y: Int)? {
        guard let s = try string(key) else { return nil }
        let parts = MetalTensorLexicon.components(s, ",").map(MetalTensorLexicon.intValue)
        guard parts.count >= 2, parts.count <= 3 else { throw error(key, "'\(s.prefix(40))' is not \"x,y\"") }
        for p in parts.prefix(2) where abs(p) > Self.maxKernel { throw error(key, "offset \(p) is outside ±\(Self.maxKernel)") }
        return (parts[0], parts[1])
    }

    /// An activation string `name[,a[,b[,c]]]` (§5.2); `none` when absent.
    func activation(_ key: String, fused: Bool) throws(ModelError) -> MetalTensorActivation {
        guard let s = try string(key) else { return .none }
        return try MetalTensorActivation(text: s, fused: fused) { reason throws(ModelError) in throw error(key, reason) }
    }
}

/// A MetalTensor activation (a `neuron` string, §5.2): f(x) with parameters a, b, c.
enum MetalTensorActivation: Equatable {
    case none
    /// x ≥ 0 ? x : a·x
    case relu(a: Float)
    /// min(x ≥ 0 ? x : a·x, b)
    case reluN(a: Float, b: Float)
    /// a·x + b
    case linear(a: Float, b: Float)
    /// 1 / (1 + e^−x)
    case sigmoid
    /// (a·x + b)^c
    case power(a: Float, b: Float, c: Float)

    /// Parses `name[,a[,b[,c]]]`; a fused activation (inside a convolution or dense layer) gets only
    /// a and b, so its c is 0 as in MetalTensor.
    init(text: String, fused: Bool, fail: (String) throws(ModelError) -> Never) throws(ModelError) {
        let parts = MetalTensorLexicon.components(text, ",")
        guard let name = parts.first else { self = .none; return }
        var p = parts.dropFirst().map(MetalTensorLexicon.floatValue)
        guard p.count <= 3 else { try fail("'\(text.prefix(60))' has more than three parameters") }
        guard p.allSatisfy(\.isFinite), !parts.dropFirst().contains(where: MetalTensorLexicon.spellsNonFinite) else {
            try fail("'\(text.prefix(60))' has a parameter that is not a finite number")
        }
        while p.count < 3 { p.append(0) }
        let (a, b, c) = (p[0], p[1], fused ? 0 : p[2])
        switch name {
        case "none": self = .none
        case "relu": self = .relu(a: a)
        case "relun": self = .reluN(a: a, b: b)
        case "linear": self = .linear(a: a, b: b)
        case "sigmod": self = .sigmoid
        case "power": self = .power(a: a, b: b, c: c)
        default: try fail("'\(name.prefix(40))' is not an activation (expected none, relu, relun, linear, sigmod or power; names are case-sensitive)")
        }
    }
}
