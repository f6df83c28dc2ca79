import Foundation
import MetalTensorImport

/// MetalTensor's SSD detector decoding (RapidFaceDetect, format spec §10.2), configured by its
/// `…Config.plist`: the prior boxes of each pyramid layer, the network's outputs read back per
/// layer, softmax scores, centroid (or min/max) box decoding with variances, and MetalTensor's own
/// greedy suppression, whose overlap measure is not a true IoU (reproduced as written).
public struct MetalTensorSSD: Sendable {
    /// One decoded box, normalised to the network input (x to the right, y down).
    public struct Box: Sendable, Equatable {
        public var xmin: Float, xmax: Float, ymin: Float, ymax: Float
        public var confidence: Float
        public var classIndex: Int
        public var area: Float { (xmax - xmin) * (ymax - ymin) }
    }

    public var classes: [String]
    public var centroids: Bool
    public var networkWidth: Int, networkHeight: Int
    public var confidenceThreshold: Float
    public var overlapThreshold: Float
    public var variances: [Float]
    /// (rows, columns, depth) of each layer's block in the location and confidence outputs.
    public var locationShapes: [[Int]], confidenceShapes: [[Int]]
    /// Prior boxes: (cx, cy, w, h) for centroids, (xmin, xmax, ymin, ymax) for min/max.
    public private(set) var anchors: [(Float, Float, Float, Float)] = []

    /// Reads a config plist; errors name the file and key.
    public init(configPath: String) throws {
        let file = (configPath as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: configPath), data.count <= 1 << 20 else {
            throw MetalTensorSSDError(file: file, key: nil, reason: "cannot read the file (missing, or over 1 MiB)")
        }
        try self.init(config: [UInt8](data), file: file)
    }

    public init(config bytes: [UInt8], file: String) throws {
        func fail(_ key: String?, _ reason: String) -> MetalTensorSSDError { MetalTensorSSDError(file: file, key: key, reason: reason) }
        let root: PropertyList
        // MetalTensor's lexical rules (spaces deleted, list parts and numbers as NSString reads them).
        do { root = MetalTensorLexicon.deletingSpaces(try PropertyList.read(bytes)) } catch { throw fail(nil, "not a property list: \(error)") }
        guard case .dictionary = root else { throw fail(nil, "the root is not a dictionary") }
        func text(_ key: String) throws -> String? {
            switch root[key] {
            case nil: return nil
            case .string(let s)?: return s
            case .integer(let i)?: return String(i)
            case .real(let r)?: return String(r)
            case .bool(let b)?: return b ? "YES" : "NO"
            case let other?: throw fail(key, "is \(other.kindName), expected a string")
            }
        }
        func texts(_ key: String) throws -> [String]? {
            guard let value = root[key] else { return nil }
            guard case .array(let items) = value else { throw fail(key, "is \(value.kindName), expected an array of strings") }
            return try items.map { item in
                guard case .string(let s) = item else { throw fail(key, "holds \(item.kindName), expected strings") }
                return s
            }
        }
        func numbers(_ s: String) -> [Float] { MetalTensorLexicon.components(s, ",").map(MetalTensorLexicon.floatValue) }
        func ints(_ s: String) -> [Int] { MetalTensorLexicon.components(s, ",").map(MetalTensorLexicon.intValue) }
        func boolean(_ key: String, _ fallback: Bool) -> Bool {
            switch root[key] {
            case .bool(let b)?: return b
            case .string(let s)?: return MetalTensorLexicon.boolValue(s)
            case .integer(let i)?: return i != 0
            default: return fallback
            }
        }
        classes = (try text("classes")).map { MetalTensorLexicon.components($0, ",") } ?? ["background", "object"]
        centroids = (try text("coords"))?.first == "c"
        let size = ints(try text("network_size") ?? "")
        guard size.count == 2, size.allSatisfy({ (1...8192).contains($0) }) else { throw fail("network_size", "expected \"width,height\"") }
        (networkWidth, networkHeight) = (size[0], size[1])
        let layerCount = MetalTensorLexicon.intValue(try text("n_pyramid_layers") ?? "")
        guard (1...16).contains(layerCount) else { throw fail("n_pyramid_layers", "expected 1 … 16 layers") }
        let featureMaps = try texts("feature_map_sizes")?.map(ints) ?? []
        guard featureMaps.count == layerCount, featureMaps.allSatisfy({ $0.count == 2 && $0.allSatisfy { (1...1024).contains($0) } }) else {
            throw fail("feature_map_sizes", "expected \(layerCount) entries \"width,height\"")
        }
        let scales = numbers(try text("scales") ?? "")
        guard scales.count == layerCount + 1, scales.allSatisfy({ $0 > 0 && $0.isFinite }) else { throw fail("scales", "expected \(layerCount + 1) positive numbers") }
        let ratios = try texts("aspect_ratios")?.map(numbers) ?? []
        guard ratios.count == layerCount, ratios.allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { $0 > 0 && $0.isFinite } }) else {
            throw fail("aspect_ratios", "expected \(layerCount) lists of 1 … 8 positive ratios")
        }
        variances = numbers(try text("variances") ?? "")
        guard variances.count == 4, variances.allSatisfy(\.isFinite) else { throw fail("variances", "expected four numbers (required)") }
        confidenceThreshold = Float(try text("confidence_thresh") ?? "0.5") ?? 0.5
        overlapThreshold = Float(try text("iou_thresh") ?? "0.1") ?? 0.1
        func shapes(_ key: String) throws -> [[Int]] {
            let list = (try text(key) ?? "").split(separator: ";", omittingEmptySubsequences: true).map { ints(String($0)) }
            guard list.count == layerCount, list.allSatisfy({ $0.count == 3 && $0.allSatisfy { (1...1 << 20).contains($0) } }) else {
                throw fail(key, "expected \(layerCount) shapes \"r,c,d\" separated by ';'")
            }
            return list
        }
        locationShapes = try shapes("location_shapes")
        confidenceShapes = try shapes("confidence_shapes")
        let steps = try texts("steps")?.map(numbers)
        let offsets = try texts("offsets")?.map(numbers)
        let twoBoxes = boolean("two_boxes_for_ar1", true), normalise = boolean("normalize_coords", true), clip = boolean("clip_boxes", false)
        let (w, h) = (Float(networkWidth), Float(networkHeight))
        let side = min(w, h)
        for l in 0..<layerCount {
            let (fw, fh) = (featureMaps[l][0], featureMaps[l][1])
            let (sigma, next) = (scales[l], scales[l + 1])
            var boxes: [(Float, Float)] = []
            for ar in ratios[l] {
                if ar == 1 {
                    boxes.append((side * sigma, side * sigma))
                    if twoBoxes { let s = side * (sigma * next).squareRoot(); boxes.append((s, s)) }
                } else {
                    boxes.append((side * sigma * ar.squareRoot(), side * sigma / ar.squareRoot()))
                }
            }
            let step = steps.flatMap { l < $0.count && $0[l].count == 2 ? ($0[l][0], $0[l][1]) : nil } ?? (w / Float(fw), h / Float(fh))
            let offset = offsets.flatMap { l < $0.count && $0[l].count == 2 ? ($0[l][0], $0[l][1]) : nil } ?? (0.5, 0.5)
            for i in 0..<fh {
                let cy = (offset.1 + Float(i)) * step.1
                for j in 0..<fw {
                    let cx = (offset.0 + Float(j)) * step.0
                    for (bw, bh) in boxes {
                        var (ax, ay, aw, ah) = (cx, cy, bw, bh)
                        if clip {
                            let x0 = max(0, min(w, ax - aw / 2)), x1 = max(0, min(w, ax + aw / 2))
                            let y0 = max(0, min(h, ay - ah / 2)), y1 = max(0, min(h, ay + ah / 2))
                            (ax, ay, aw, ah) = ((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0)
                        }
                        if normalise { (ax, ay, aw, ah) = (ax / w, ay / h, aw / w, ah / h) }
                        anchors.append(centroids ? (ax, ay, aw, ah) : (ax - aw / 2, ax + aw / 2, ay - ah / 2, ay + ah / 2))
                    }
                }
            }
        }
        let locCount = locationShapes.reduce(0) { $0 + $1.reduce(1, *) }, confCount = confidenceShapes.reduce(0) { $0 + $1.reduce(1, *) }
        guard locCount == 4 * anchors.count else { throw fail("location_shapes", "hold \(locCount) values for \(anchors.count) anchors × 4") }
        guard confCount == classes.count * anchors.count else {
            throw fail("confidence_shapes", "hold \(confCount) values for \(anchors.count) anchors × \(classes.count) classes")
        }
    }

    /// A network output ([1, H, W, C], HWC values) read back the way the app does: each layer's
    /// channel block (channels padded to multiples of 4 by the concatenation) as its own HWC
    /// tensor, flattened, the layers one after another.
    public static func gather(_ values: UnsafePointer<Float>, shape: [Int], layers: [[Int]]) -> [Float]? {
        let dims = Array(shape.suffix(3))
        guard dims.count == 3 else { return nil }
        let (h, w, c) = (dims[0], dims[1], dims[2])
        var out: [Float] = []
        var channel = 0
        for layer in layers {
            let (lh, lw, lc) = (layer[0], layer[1], layer[2])
            guard lh <= h, lw <= w, channel + lc <= c else { return nil }
            for y in 0..<lh { for x in 0..<lw { for k in 0..<lc { out.append(values[(y * w + x) * c + channel + k]) } } }
            channel += (lc + 3) / 4 * 4
        }
        return out
    }

    /// Decodes location and class logits (per anchor: 4 and `classes.count` values), then suppresses:
    /// the boxes kept, best first, normalised to the network input.
    public func decode(locations: [Float], logits: [Float]) -> [Box] {
        let n = classes.count
        guard locations.count >= anchors.count * 4, logits.count >= anchors.count * n, n >= 2 else { return [] }
        var boxes: [Box] = []
        for (a, anchor) in anchors.enumerated() {
            let z = logits[(a * n)..<(a * n + n)]
            var best = z.startIndex
            for i in z.indices where z[i] > z[best] { best = i }
            let cls = best - z.startIndex
            guard cls != 0 else { continue }
            let m = z.max() ?? 0
            let sum = z.reduce(Float(0)) { $0 + exp($1 - m) }
            let confidence = exp(z[best] - m) / sum
            guard confidence >= confidenceThreshold else { continue }
            let l = Array(locations[(a * 4)..<(a * 4 + 4)])
            var box: Box
            if centroids {
                let (cxa, cya, wa, ha) = anchor
                let cx = l[0] * wa * variances[0] + cxa, cy = l[1] * ha * variances[1] + cya
                let bw = exp(l[2] * variances[2]) * wa, bh = exp(l[3] * variances[3]) * ha
                box = Box(xmin: cx - bw / 2, xmax: cx + bw / 2, ymin: cy - bh / 2, ymax: cy + bh / 2, confidence: confidence, classIndex: cls)
            } else {
                let (x0, x1, y0, y1) = anchor
                box = Box(xmin: l[0] * variances[0] * (x1 - x0) + x0, xmax: l[1] * variances[1] * (x1 - x0) + x1,
                          ymin: l[2] * variances[2] * (y1 - y0) + y0, ymax: l[3] * variances[3] * (y1 - y0) + y1,
                          confidence: confidence, classIndex: cls)
            }
            boxes.append(box)
        }
        return suppress(boxes)
    }

    /// MetalTensor's greedy suppression (§10.2 step 5): its overlap uses A.xmax − B.xmin and
    /// A.ymax − B.ymin as the intersection, a true IoU only when B lies right of and below A.
    public func suppress(_ kept: [Box]) -> [Box] {
        var boxes = kept.sorted { $0.confidence > $1.confidence }
        for a in boxes.indices where boxes[a].confidence >= 0.01 {
            let box = boxes[a]
            for b in boxes.indices where b > a && boxes[b].confidence >= 0.01 {
                let other = boxes[b]
                if box.xmin >= other.xmax || box.xmax <= other.xmin || box.ymin >= other.ymax || box.ymax <= other.ymin { continue }
                let iw = box.xmax - other.xmin, ih = box.ymax - other.ymin
                let ratio = iw * ih / (box.area + other.area - iw * ih)
                if ratio > overlapThreshold { boxes[b].confidence = 0 }
            }
        }
        return boxes.filter { $0.confidence > confidenceThreshold }
    }
}

/// A detector config plist that cannot be used: the file, the key and why.
public struct MetalTensorSSDError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let key: String?
    public let reason: String
    public var description: String { "\(file)" + (key.map { ", key '\($0)'" } ?? "") + ": " + reason }
}
