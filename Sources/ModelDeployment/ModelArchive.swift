import Foundation
import MetalTensorImport
import ModelFormats
import NeuralGraph

/// A model packed for deployment (`.fgarchive`): its files and a manifest, optionally encrypted with
/// a team key (AES-256-GCM, the header authenticated too).
///
/// ```
/// offset 0     "FGARCHV1"                       8 bytes
/// offset 8     header length H, little-endian    4 bytes, 2 … 1 MiB
/// offset 12    header: the manifest, JSON        H bytes   (authenticated when encrypted)
/// offset 12+H  payload: the files one after the other, or their AES-256-GCM ciphertext
/// last 16      the GCM tag                       (encrypted archives only)
/// ```
/// See docs/DEPLOYMENT.md.
public enum ModelArchive {
    public static let magic = Array("FGARCHV1".utf8)
    public static let maxHeaderBytes = 1 << 20
    public static let maxFiles = 16
    public static let fileExtension = "fgarchive"

    /// Packs the model at `modelPath` (a `.tflite` or `.onnx` with its `NAME.labels.txt` if there is
    /// one, or a MetalTensor `.plist` with its `.json` and `.bin`) into an archive at `output`. The
    /// model is imported first, so a broken model is refused here, and its inputs and outputs go
    /// into the manifest. With `key`, the payload is encrypted. Returns the manifest.
    @discardableResult
    public static func create(modelPath: String, name: String?, version: String, key: TeamKey?, output: String) throws -> ArchiveManifest {
        try JSONFile.requireAbsent(output)
        let url = URL(fileURLWithPath: modelPath)
        var paths = [modelPath]
        let format: String
        let detected: ModelFormat
        do { detected = try ModelFormat.detect(path: modelPath) } catch {
            throw DeploymentError.invalidFile(path: modelPath, reason: "\(error)")
        }
        switch detected {
        case .tflite, .onnx:
            format = detected.rawValue
            let labels = url.deletingPathExtension().appendingPathExtension("labels.txt").path
            if FileManager.default.fileExists(atPath: labels) { paths.append(labels) }
        case .metalTensor:
            format = "metaltensor"
            let companions = MetalTensorImporter.companions(of: modelPath)
            for p in [companions.map, companions.weights] where FileManager.default.fileExists(atPath: p) { paths.append(p) }
        case .archive, .zip:
            throw DeploymentError.usage("\(modelPath): a model to archive is a TFLite, ONNX or MetalTensor model, not a \(detected)")
        }
        let graph: NeuralGraph
        do { graph = try ModelImport.load(path: modelPath) } catch let error as ModelError {
            throw DeploymentError.invalidFile(path: modelPath, reason: "the model does not load: \(error)")
        }
        var files: [ArchiveManifest.File] = [], payload: [UInt8] = []
        for p in paths {
            let data = try ModelFile.read(p, maxBytes: ModelLimits.standard.maxFileBytes)
            let fileName = (p as NSString).lastPathComponent
            guard ArchiveManifest.isSafeFileName(fileName) else {
                throw DeploymentError.usage("\(p): file names in an archive are letters, digits, '.', '_' and '-' (at most 128)")
            }
            files.append(.init(name: fileName, size: data.count, sha256: Crypto.sha256(data)))
            payload.append(contentsOf: data)
        }
        func tensors(_ ids: [Int]) -> [ArchiveManifest.Tensor] { ids.map { .init(name: graph.tensors[$0].name, shape: graph.tensors[$0].shape) } }
        let modelName = name ?? url.deletingPathExtension().lastPathComponent
        guard ArchiveManifest.isSafeName(modelName) else {
            throw DeploymentError.usage("--name '\(modelName.prefix(60))': letters, digits, '.', '_' and '-', at most 128")
        }
        guard ArchiveManifest.isSafeName(version) else {
            throw DeploymentError.usage("--version '\(version.prefix(60))': letters, digits, '.', '_' and '-', at most 128")
        }
        var manifest = ArchiveManifest(name: modelName, version: version, modelFormat: format, model: (modelPath as NSString).lastPathComponent,
                                       files: files, size: payload.count, sha256: Crypto.sha256(payload),
                                       inputs: tensors(graph.inputs), outputs: tensors(graph.outputs), encryption: nil)
        var body = payload, tag: [UInt8] = []
        if let key {
            manifest.encryption = .init(algorithm: ArchiveManifest.Encryption.aesGCM, keyID: key.id, nonce: Hex.encode(try Crypto.randomBytes(12)))
        }
        let header = [UInt8](try JSONFile.encode(manifest))
        let prefix = magic + withUnsafeBytes(of: UInt32(header.count).littleEndian, Array.init) + header
        if let key, let encryption = manifest.encryption, let nonce = Hex.decode(encryption.nonce) {
            let sealed = try Crypto.seal(payload, key: key.key, nonce: nonce, aad: prefix)
            body = sealed.ciphertext
            tag = sealed.tag
        }
        try JSONFile.writeAtomically(Data(prefix + body + tag), to: output, replacing: false)
        return manifest
    }

    /// The header length from an archive's first 12 bytes (signature checked).
    static func headerLength(_ head: ArraySlice<UInt8>, name: String) throws -> Int {
        guard head.count >= 12, Array(head.prefix(8)) == magic else {
            throw DeploymentError.invalidArchive(name: name, reason: "no 'FGARCHV1' signature", offset: 0)
        }
        let b = Array(head.prefix(12))
        let length = Int(UInt32(b[8]) | UInt32(b[9]) << 8 | UInt32(b[10]) << 16 | UInt32(b[11]) << 24)
        guard length >= 2, length <= maxHeaderBytes else {
            throw DeploymentError.invalidArchive(name: name, reason: "header length \(length) is not within 2 … \(maxHeaderBytes)", offset: 8)
        }
        return length
    }

    /// The manifest decoded from the header bytes and checked.
    static func decodeManifest(_ header: Data, name: String) throws -> ArchiveManifest {
        let manifest: ArchiveManifest
        do { manifest = try JSONFile.decode(ArchiveManifest.self, from: header, name: name + " (manifest)") } catch let DeploymentError.invalidFile(_, reason) {
            throw DeploymentError.invalidArchive(name: name, reason: "manifest: \(reason)", offset: 12)
        }
        try manifest.validate(name: name)
        return manifest
    }

    /// The manifest of the archive `bytes` (nothing decrypted), and where the payload starts.
    public static func manifest(of bytes: [UInt8], name: String) throws -> (manifest: ArchiveManifest, payloadStart: Int) {
        let length = try headerLength(bytes.prefix(12), name: name)
        guard bytes.count >= 12 + length else {
            throw DeploymentError.invalidArchive(name: name, reason: "the header runs past the end of the file (\(bytes.count) bytes)", offset: 12)
        }
        let manifest = try decodeManifest(Data(bytes[12..<(12 + length)]), name: name)
        let expected = 12 + length + manifest.size + (manifest.encryption == nil ? 0 : 16)
        guard bytes.count == expected else {
            throw DeploymentError.invalidArchive(name: name, reason: "the file is \(bytes.count) bytes; its manifest says \(expected)",
                                                 offset: min(bytes.count, expected))
        }
        return (manifest, 12 + length)
    }

    /// Opens an archive: checks it, decrypts it with `key` when it is encrypted (authenticating the
    /// header too), checks every file's SHA-256, and returns the manifest and the clear files (in
    /// memory only).
    public static func open(bytes: [UInt8], name: String, key: TeamKey?) throws -> (manifest: ArchiveManifest, files: [String: Data]) {
        let (manifest, start) = try manifest(of: bytes, name: name)
        var payload: [UInt8]
        if let encryption = manifest.encryption {
            guard let key else { throw DeploymentError.usage("\(name) is encrypted with team key '\(encryption.keyID)'; no key was given") }
            guard key.id == encryption.keyID else {
                throw DeploymentError.usage("\(name) is encrypted with team key '\(encryption.keyID)', not '\(key.id)'")
            }
            guard let nonce = Hex.decode(encryption.nonce) else { throw DeploymentError.invalidArchive(name: name, reason: "bad nonce", offset: 12) }
            let end = start + manifest.size
            guard let clear = try Crypto.open(bytes[start..<end], tag: Array(bytes[end..<(end + 16)]), key: key.key, nonce: nonce,
                                              aad: bytes[0..<start]) else {
                throw DeploymentError.authenticationFailed(name: name)
            }
            payload = clear
        } else {
            payload = Array(bytes[start..<(start + manifest.size)])
        }
        defer { payload.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let digest = Crypto.sha256(payload)
        guard digest == manifest.sha256 else { throw DeploymentError.digestMismatch(what: "\(name) (payload)", expected: manifest.sha256, got: digest) }
        var files: [String: Data] = [:], offset = 0
        for file in manifest.files {
            let data = Data(payload[offset..<(offset + file.size)])
            offset += file.size
            let d = Crypto.sha256(data)
            guard d == file.sha256 else { throw DeploymentError.digestMismatch(what: "\(name): \(file.name)", expected: file.sha256, got: d) }
            files[file.name] = data
        }
        return (manifest, files)
    }

    /// Reads an archive file (at most the model size limit plus the header) and opens it.
    public static func open(path: String, key: TeamKey?) throws -> (manifest: ArchiveManifest, files: [String: Data]) {
        let data = try JSONFile.read(path, maxBytes: Int(ModelLimits.standard.maxFileBytes) + maxHeaderBytes + 28)
        return try open(bytes: [UInt8](data), name: (path as NSString).lastPathComponent, key: key)
    }

    /// The manifest of an archive file, reading only its header.
    public static func manifest(path: String) throws -> ArchiveManifest {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw DeploymentError.invalidFile(path: path, reason: "cannot open it") }
        defer { try? handle.close() }
        let length = try headerLength([UInt8]((try? handle.read(upToCount: 12)) ?? Data())[...], name: path)
        let header = (try? handle.read(upToCount: length)) ?? Data()
        guard header.count == length else { throw DeploymentError.invalidArchive(name: path, reason: "the header runs past the end of the file", offset: 12) }
        return try decodeManifest(header, name: path)
    }
}

/// An archive's manifest: what the model is and how to check it.
public struct ArchiveManifest: Codable, Sendable, Equatable {
    public static let formatName = "framegraph-model-archive-1"
    public var format = ArchiveManifest.formatName
    public var name: String
    public var version: String
    /// `tflite`, `onnx` or `metaltensor`.
    public var modelFormat: String
    /// The file to load (the others are its labels, weight map, weights).
    public var model: String
    public var files: [File]
    /// Bytes of the clear payload (the files one after the other) and its SHA-256.
    public var size: Int
    public var sha256: String
    public var inputs: [Tensor]
    public var outputs: [Tensor]
    /// Present when the payload is encrypted.
    public var encryption: Encryption?

    public struct File: Codable, Sendable, Equatable {
        public var name: String
        public var size: Int
        public var sha256: String
    }

    public struct Tensor: Codable, Sendable, Equatable {
        public var name: String
        public var shape: [Int]
    }

    public struct Encryption: Codable, Sendable, Equatable {
        public static let aesGCM = "AES-256-GCM"
        public var algorithm: String
        public var keyID: String
        /// 12 bytes as hex.
        public var nonce: String
        enum CodingKeys: String, CodingKey { case algorithm, keyID = "keyId", nonce }
    }

    static func isSafeName(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 128 && s.first != "." && s.utf8.allSatisfy { c in
            (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) || c == 46 || c == 95 || c == 45
        }
    }

    static func isSafeFileName(_ s: String) -> Bool { isSafeName(s) && !s.contains("..") }

    /// Every field checked: names safe as file names, sizes that add up, digests and key ids in form.
    func validate(name archive: String) throws {
        func bad(_ reason: String) -> DeploymentError { .invalidArchive(name: archive, reason: "manifest: " + reason, offset: 12) }
        guard format == Self.formatName else { throw bad("field 'format' is '\(format.prefix(40))', expected '\(Self.formatName)'") }
        guard Self.isSafeName(name) else { throw bad("field 'name' is not a safe name") }
        guard Self.isSafeName(version) else { throw bad("field 'version' is not a safe name") }
        guard ["tflite", "onnx", "metaltensor"].contains(modelFormat) else { throw bad("field 'modelFormat' '\(modelFormat.prefix(20))' is not tflite, onnx or metaltensor") }
        guard !files.isEmpty, files.count <= ModelArchive.maxFiles else { throw bad("1 … \(ModelArchive.maxFiles) files, got \(files.count)") }
        guard Set(files.map(\.name)).count == files.count else { throw bad("two files have the same name") }
        var total = 0
        for (i, f) in files.enumerated() {
            guard Self.isSafeFileName(f.name) else { throw bad("files[\(i)].name is not a safe file name") }
            guard f.size >= 0, f.size <= Int(ModelLimits.standard.maxFileBytes) else { throw bad("files[\(i)].size \(f.size) is out of range") }
            guard Hex.isHex(f.sha256, bytes: 32) else { throw bad("files[\(i)].sha256 is not 64 hex digits") }
            total += f.size
        }
        guard total == size else { throw bad("field 'size' \(size) is not the sum of the files' sizes (\(total))") }
        guard files.contains(where: { $0.name == model }) else { throw bad("field 'model' '\(model.prefix(40))' is not one of the files") }
        guard Hex.isHex(sha256, bytes: 32) else { throw bad("field 'sha256' is not 64 hex digits") }
        guard inputs.count <= 64, outputs.count <= 64 else { throw bad("more than 64 inputs or outputs") }
        if let e = encryption {
            guard e.algorithm == Encryption.aesGCM else { throw bad("encryption.algorithm '\(e.algorithm.prefix(20))' is not \(Encryption.aesGCM)") }
            guard TeamKey.isValidID(e.keyID) else { throw bad("encryption.keyId is not 16 lowercase hex digits") }
            guard Hex.isHex(e.nonce, bytes: 12) else { throw bad("encryption.nonce is not 24 hex digits") }
        }
    }
}
