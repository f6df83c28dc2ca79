import Foundation
import NeuralGraph

/// The kinds of model file FrameGraph reads, told apart by their first bytes, never by their names:
/// a `.tflite` renamed `.onnx` is still read as TFLite, and a text file called `x.tflite` is
/// refused as what it is.
public enum ModelFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A TensorFlow Lite FlatBuffer: "TFL3" at bytes 4…7.
    case tflite
    /// An ONNX protobuf `ModelProto`: its first byte is the tag of one of ModelProto's fields.
    case onnx
    /// A MetalTensor graph: a property list (binary `bplist00`, or XML), with its `.json` and `.bin`.
    case metalTensor
    /// A FrameGraph model archive (`FGARCHV1`), possibly encrypted; ModelDeployment opens it.
    case archive
    /// A zip file: a MediaPipe Tasks bundle (`.task`) of models.
    case zip

    public var description: String {
        switch self {
        case .tflite: return "TFLite"
        case .onnx: return "ONNX"
        case .metalTensor: return "MetalTensor (plist)"
        case .archive: return "FrameGraph archive"
        case .zip: return "zip bundle"
        }
    }

    /// The file name extensions this format usually has (for listing places searched).
    public var usualExtensions: [String] {
        switch self {
        case .tflite: return ["tflite"]
        case .onnx: return ["onnx"]
        case .metalTensor: return ["plist"]
        case .archive: return ["fgarchive"]
        case .zip: return ["task"]
        }
    }

    /// Bytes ``detect(_:)`` needs to tell every format apart.
    public static let headBytes = 64

    /// The format of a file starting with `head`, or nil when it is none of these.
    public static func detect(_ head: some Collection<UInt8>) -> ModelFormat? {
        let b = Array(head.prefix(headBytes))
        if b.count >= 8, Array(b[4..<8]) == Array("TFL3".utf8) { return .tflite }
        if b.starts(with: Array("FGARCHV1".utf8)) { return .archive }
        if b.starts(with: [0x50, 0x4B, 0x03, 0x04]) || b.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .zip }
        // MediaPipe's model_maker aligns a bundle's members: zero bytes may come before the first.
        if b.first == 0, b.drop(while: { $0 == 0 }).starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .zip }
        if b.starts(with: Array("bplist00".utf8)) { return .metalTensor }
        // XML: an optional byte-order mark and white space, then a declaration, doctype or <plist>.
        var text = b[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        text = text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        for opening in ["<?xml", "<!DOCTYPE plist", "<plist"] where text.starts(with: Array(opening.utf8)) { return .metalTensor }
        // ONNX's ModelProto: ir_version (1, varint), producer_name/version, domain (2…4, bytes),
        // model_version (5, varint), doc_string (6), graph (7), opset_import (8), metadata_props (14).
        if let first = b.first, [0x08, 0x12, 0x1A, 0x22, 0x28, 0x32, 0x3A, 0x42, 0x72].contains(first) { return .onnx }
        return nil
    }

    /// The format of the model file at `path` (on disk or in memory), read from its first bytes.
    /// A file of no known format is ``ModelError/malformed(file:reason:offset:)``, naming what it looks like.
    public static func detect(path: String, limits: ModelLimits = .standard) throws(ModelError) -> ModelFormat {
        let head = try ModelFile.readHead(path, count: headBytes, maxBytes: limits.maxFileBytes)
        if let format = detect(head) { return format }
        let looks: String
        if head.isEmpty { looks = "the file is empty" }
        else if head.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) }) { looks = "it is text" }
        else { looks = "its first bytes are " + head.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ") }
        throw ModelError.malformed(file: path, reason: "not a model FrameGraph reads (\(looks); expected TFLite, ONNX, a MetalTensor plist, a .task bundle or a FrameGraph archive)", offset: 0)
    }
}
