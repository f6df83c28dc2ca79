import Foundation
import NeuralGraph

/// Imports a MetalTensor model (`NAME.plist` + `NAME.json` + `NAME.bin`, format spec
/// `../shared/specs/metaltensor-format.md`) into FrameGraph's graph IR, so the same files an iPhone
/// app ships run on a Linux CPU unchanged.
///
/// ```swift
/// let graph = try MetalTensorImporter.load(path: "PortraitSegmentNet.plist")          // json and bin beside it
/// let fp16 = try MetalTensorImporter.load(path: "Landmarks.plist", options: .init(precision: .float16))
/// ```
/// The graph's input is the `input` node (NHWC, RGB values 0…1 as MetalTensor's `predict:` passes
/// them); its outputs are the `output` nodes, by name. Secondary images (`arithmetic`) and separate
/// weight files are read from the plist's folder.
public enum MetalTensorImporter {
    /// The arithmetic the network emulates.
    public enum Precision: String, Sendable, CaseIterable {
        /// Float32 throughout (the default).
        case float32 = "fp32"
        /// MetalTensor's default on an iPhone: every stored tensor and weight rounded to float16,
        /// arithmetic in float32 (format spec §4).
        case float16 = "fp16"
    }

    /// Import settings.
    public struct Options: Sendable, Equatable {
        public var precision: Precision
        /// Every node's result becomes a graph output too (for layer-by-layer comparisons).
        public var exposeAllLayers: Bool
        /// The weight blob and the weight map; nil: `NAME.bin` and `NAME.json` beside the plist.
        public var weights: String?
        public var map: String?

        public init(precision: Precision = .float32, exposeAllLayers: Bool = false, weights: String? = nil, map: String? = nil) {
            self.precision = precision
            self.exposeAllLayers = exposeAllLayers
            self.weights = weights
            self.map = map
        }
    }

    /// The weight map and blob that belong to a plist: `NAME.json` and `NAME.bin` beside it.
    public static func companions(of plist: String) -> (map: String, weights: String) {
        let base = plist.hasSuffix(".plist") ? String(plist.dropLast(6)) : plist
        return (base + ".json", base + ".bin")
    }

    /// Loads `path` (a `.plist`), with the weight map and blob the options give or found beside it.
    /// Each file must be a regular file within `limits.maxFileBytes`; the graph must pass the
    /// resource check.
    public static func load(path: String, options: Options = Options(), limits: ModelLimits = .standard) throws(ModelError) -> NeuralGraph {
        let name = (path as NSString).lastPathComponent
        let plist = [UInt8](try ModelFile.read(path, maxBytes: limits.maxFileBytes))
        let beside = companions(of: path)
        func optional(_ given: String?, _ fallback: String) throws(ModelError) -> (bytes: [UInt8]?, name: String) {
            let file = given ?? fallback
            let fileName = (file as NSString).lastPathComponent
            if given == nil && !ModelFile.exists(file) { return (nil, fileName) }
            return ([UInt8](try ModelFile.read(file, maxBytes: limits.maxFileBytes)), fileName)
        }
        let mapFile = try optional(options.map, beside.map)
        let blobFile = try optional(options.weights, beside.weights)
        let folder = (path as NSString).deletingLastPathComponent
        let graph = try load(plist: plist, fileName: name, map: mapFile.bytes, mapName: mapFile.name, weights: blobFile.bytes,
                             weightsName: blobFile.name, options: options) { resource throws(ModelError) in
            // Secondary images and separate weight files: plain names (or paths) relative to the plist.
            guard !resource.isEmpty else { return nil }
            let file = resource.hasPrefix("/") ? resource : (folder.isEmpty ? resource : folder + "/" + resource)
            guard ModelFile.exists(file) else { return nil }
            return [UInt8](try ModelFile.read(file, maxBytes: limits.maxFileBytes))
        }
        try graph.checkResources(limits, file: name)
        return graph
    }

    /// Every file importing `path` may read: the plist, its weight map and blob (given or beside
    /// it), and each file in its folder that a string of the plist names (secondary images, separate
    /// weights) — a superset, so that no output can replace one of them (the run's file guard).
    public static func filesRead(path: String, options: Options = Options(), limits: ModelLimits = .standard) -> [String] {
        let beside = companions(of: path)
        var files = [path, options.map ?? beside.map, options.weights ?? beside.weights]
        guard let data = try? ModelFile.read(path, maxBytes: limits.maxFileBytes), let root = try? PropertyList.read([UInt8](data)) else { return files }
        let folder = (path as NSString).deletingLastPathComponent
        var stack = [root]
        while let value = stack.popLast() {
            switch value {
            case .string(let text):
                let name = text.trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty, name.count < 4096 else { continue }
                let file = name.hasPrefix("/") ? name : (folder.isEmpty ? name : folder + "/" + name)
                if !files.contains(file), ModelFile.exists(file) { files.append(file) }
            case .array(let items): stack += items
            case .dictionary(let entries): stack += entries.map(\.value)
            default: break
            }
        }
        return files.filter(ModelFile.exists)
    }

    /// Imports from bytes: the plist, the weight map and blob when there are any, and a function that
    /// returns the bytes of a file the plist names (secondary images, separate weights), nil when absent.
    public static func load(plist: [UInt8], fileName: String, map: [UInt8]?, mapName: String = "the weight map",
                            weights: [UInt8]?, weightsName: String = "the weight blob", options: Options = Options(),
                            resource: @escaping (String) throws(ModelError) -> [UInt8]?) throws(ModelError) -> NeuralGraph {
        let (nodes, wiring) = try graphDescription(plist: plist, fileName: fileName)
        var weightMap: WeightMap?
        if let map {
            do { weightMap = try WeightMap(bytes: map) } catch {
                throw ModelError.malformed(file: mapName, reason: "not a weight map: \(error.reason)", offset: error.offset)
            }
        }
        let byName = Dictionary(nodes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var builder = MetalTensorGraphBuilder(
            file: fileName, precision: options.precision,
            weights: MetalTensorWeights(map: weightMap, blob: weights, mapName: mapName, blobName: weightsName, resource: resource))
        for name in wiring.order {
            guard let node = byName[name] else { continue }
            try builder.emit(node, sources: wiring.sources[name] ?? [:])
        }
        var graph = builder.graph
        var outputs = wiring.outputNodes.compactMap { builder.produced[$0]?.tensor }
        if options.exposeAllLayers {
            for name in wiring.order where !wiring.outputNodes.contains(name) {
                if let t = builder.produced[name]?.tensor, !outputs.contains(t), !graph.inputs.contains(t) { outputs.append(t) }
            }
        }
        graph.outputs = outputs
        graph.metadata["format"] = "MetalTensor plist"
        graph.metadata["precision"] = options.precision.rawValue
        graph.metadata["nodes"] = String(nodes.count)
        try graph.validate()
        return graph
    }

    /// Checks a plist's graph without weights: that it is a property list of nodes with known types,
    /// targets that exist, slots fed once, no cycles, one input and reachable outputs.
    public static func checkGraph(plist: [UInt8], fileName: String) throws(ModelError) {
        _ = try graphDescription(plist: plist, fileName: fileName)
    }

    /// The plist's nodes (spaces deleted, in file order) and how they are wired.
    static func graphDescription(plist: [UInt8], fileName: String) throws(ModelError) -> ([MetalTensorNode], MetalTensorWiring) {
        let root: PropertyList
        do { root = MetalTensorLexicon.deletingSpaces(try PropertyList.read(plist)) } catch {
            throw ModelError.malformed(file: fileName, reason: "not a property list: \(error.reason)", offset: error.offset)
        }
        guard case .dictionary(let entries) = root else {
            throw ModelError.malformed(file: fileName, reason: "the root of the plist is \(root.kindName), expected a dictionary of nodes", offset: nil)
        }
        var nodes: [MetalTensorNode] = []
        for entry in entries {
            guard case .dictionary = entry.value else { continue }  // MetalTensor ignores non-dictionary entries
            nodes.append(try MetalTensorNode(name: entry.key, dictionary: entry.value, file: fileName))
        }
        return (nodes, try MetalTensorWiring(nodes: nodes, file: fileName))
    }
}
