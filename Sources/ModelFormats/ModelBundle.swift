import Foundation
import NeuralGraph
import TFLiteImport

/// A MediaPipe Tasks bundle (`.task`): a zip of `.tflite` models and their metadata files, read
/// directly. A part is named after `#`: `face_landmarker.task#face_detector` (the `.tflite` suffix may
/// be left out); a bundle of one model needs no part.
///
/// ```swift
/// let bundle = try ModelBundle(path: "face_landmarker.task")
/// bundle.parts        // ["face_detector.tflite", "face_landmarks_detector.tflite"]
/// let bytes = try bundle.part("face_detector")
/// ```
public struct ModelBundle: Sendable {
    public let path: String
    private let archive: ZipArchive

    /// Reads the bundle's directory (its files are read when asked for), within `limits`.
    public init(path: String, limits: ModelLimits = .standard) throws(ModelError) {
        self.path = path
        let data = try ModelFile.read(path, maxBytes: limits.maxFileBytes, what: "model bundle")
        do {
            guard let archive = try ZipArchive(endOf: [UInt8](data), maxEntryBytes: Int(min(limits.maxFileBytes, Int64(Int.max)))) else {
                throw ModelError.malformed(file: path, reason: "not a zip bundle (no end-of-directory record)", offset: nil)
            }
            self.archive = archive
        } catch let e as ZipArchive.ZipError {
            throw ModelError.malformed(file: path, reason: e.message, offset: e.offset)
        } catch let e as ModelError {
            throw e
        } catch {
            throw ModelError.malformed(file: path, reason: "\(error)", offset: nil)
        }
    }

    /// Every file in the bundle, in order.
    public var files: [String] { archive.entries.map(\.name) }
    /// The models in the bundle (its `.tflite` files).
    public var parts: [String] { files.filter { $0.lowercased().hasSuffix(".tflite") } }

    /// The name of the part `name` asks for (`face_detector` or `face_detector.tflite`); nil asks for
    /// the only model of a bundle of one.
    public func partName(_ name: String?) throws(ModelError) -> String {
        guard let name else {
            guard parts.count == 1, let only = parts.first else {
                throw ModelError.malformed(file: path, reason: "the bundle holds \(parts.count) models (\(parts.joined(separator: ", "))): name one as \((path as NSString).lastPathComponent)#PART", offset: nil)
            }
            return only
        }
        if let exact = files.first(where: { $0 == name || $0 == name + ".tflite" }) { return exact }
        throw ModelError.notFound(reference: "\((path as NSString).lastPathComponent)#\(name)", places: [path],
                                  hint: "the bundle's models: \(parts.joined(separator: ", "))")
    }

    /// The bytes of a file of the bundle (CRC-checked).
    public func part(_ name: String) throws(ModelError) -> Data {
        let file = try partName(name)
        do {
            guard let bytes = try archive.contents(of: file) else { throw ModelError.malformed(file: path, reason: "no file '\(file)'", offset: nil) }
            return Data(bytes)
        } catch let e as ZipArchive.ZipError {
            throw ModelError.malformed(file: path, reason: e.message, offset: e.offset)
        } catch let e as ModelError {
            throw e
        } catch {
            throw ModelError.malformed(file: path, reason: "\(error)", offset: nil)
        }
    }
}
