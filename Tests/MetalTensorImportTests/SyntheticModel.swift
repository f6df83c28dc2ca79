import Foundation
import TestSupport

/// A small MetalTensor model written by a test: plist nodes (keys and string values as a user would
/// write them), random weights laid out as the format says, and the files on disk.
struct SyntheticModel {
    var nodes: [(name: String, keys: [(String, String)])] = []
    /// Edges (written as each source's `targets`, with `indices`, 0 where unset, when any edge of it has a slot).
    var edges: [(from: String, to: String, slot: Int?)] = []
    /// Weight name → floats (kernel then bias), in map order.
    var weights: [(name: String, values: [Float])] = []
    var random = SplitMix64(seed: 7)

    mutating func node(_ name: String, _ keys: [(String, String)]) {
        nodes.append((name, keys))
    }

    /// `count` random floats scaled for a layer with `fanIn` inputs.
    mutating func values(_ count: Int, fanIn: Int) -> [Float] {
        let scale = Float(1 / Double(max(fanIn, 1)).squareRoot())
        return (0..<count).map { _ in (Float(random.next() >> 40) / Float(1 << 24) * 2 - 1) * scale }
    }

    mutating func edge(_ from: String, _ to: String, slot: Int? = nil) {
        edges.append((from, to, slot))
    }

    mutating func weight(_ name: String, count: Int, fanIn: Int) {
        weights.append((name, values(count, fanIn: fanIn)))
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    var plist: String {
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                     "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
                     "<plist version=\"1.0\">", "<dict>"]
        for n in nodes {
            lines.append("\t<key>\(Self.escape(n.name))</key>")
            lines.append("\t<dict>")
            var keys = n.keys
            let out = edges.filter { $0.from == n.name }
            if !out.isEmpty && !keys.contains(where: { $0.0 == "targets" }) {
                keys.append(("targets", out.map(\.to).joined(separator: ", ")))
                if out.contains(where: { $0.slot != nil }) { keys.append(("indices", out.map { String($0.slot ?? 0) }.joined(separator: ","))) }
            }
            for (k, v) in keys {
                lines.append("\t\t<key>\(Self.escape(k))</key>")
                lines.append(v == "<true/>" || v == "<false/>" ? "\t\t\(v)" : "\t\t<string>\(Self.escape(v))</string>")
            }
            lines.append("\t</dict>")
        }
        lines += ["</dict>", "</plist>", ""]
        return lines.joined(separator: "\n")
    }

    /// The JSON map (with MetalTensor's trailing comma) and the blob.
    var mapAndBlob: (json: String, blob: Data) {
        var json = "{\n"
        var blob = Data()
        for w in weights {
            json += "\"\(w.name)\" : \"\(blob.count), \(w.values.count * 4)\",\n"
            for v in w.values { withUnsafeBytes(of: v.bitPattern.littleEndian) { blob.append(contentsOf: $0) } }
        }
        return (json + "}", blob)
    }

    /// Writes NAME.plist, NAME.json and NAME.bin into `folder`; returns the plist's path.
    @discardableResult
    func write(to folder: URL, name: String = "model") throws -> String {
        let plistURL = folder.appendingPathComponent("\(name).plist")
        try plist.write(to: plistURL, atomically: true, encoding: .utf8)
        let (json, blob) = mapAndBlob
        try json.write(to: folder.appendingPathComponent("\(name).json"), atomically: true, encoding: .utf8)
        try blob.write(to: folder.appendingPathComponent("\(name).bin"))
        return plistURL.path
    }
}
