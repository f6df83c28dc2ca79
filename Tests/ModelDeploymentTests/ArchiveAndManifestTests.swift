import Foundation
import ModelDeployment
import ModelFormats
import NeuralGraph
import Testing
import TestSupport

/// Archives (clear and AES-256-GCM), signed manifests, targeting rules and the key store, without a
/// server: what each must accept, and that every alteration is refused with one clear error.
@Suite struct ArchiveAndManifestTests {
    static let model = TestEnvironment.root.appendingPathComponent("models/cache/selfie_segmentation.tflite").path

    func thrown(_ body: () throws -> Void) -> (any Error)? {
        do { try body() } catch { return error }
        return nil
    }

    @Test func aClearArchiveHoldsTheModelAndItsFacts() throws {
        let dir = TestEnvironment.scratch("deploy-clear")
        let out = dir.appendingPathComponent("seg.fgarchive").path
        let manifest = try ModelArchive.create(modelPath: Self.model, name: "Segmenter", version: "3", key: nil, output: out)
        #expect(manifest.modelFormat == "tflite" && manifest.encryption == nil && manifest.files.count == 1)
        #expect(manifest.inputs.first?.shape == [1, 256, 256, 3] && manifest.outputs.first?.shape == [1, 256, 256, 1])
        let (m, files) = try ModelArchive.open(path: out, key: nil)
        #expect(m == manifest)
        let original = try Data(contentsOf: URL(fileURLWithPath: Self.model))
        #expect(files["selfie_segmentation.tflite"] == original)
        // Never overwritten.
        #expect(thrown { try ModelArchive.create(modelPath: Self.model, name: nil, version: "1", key: nil, output: out) } != nil)
        // Loaded from memory, the graph is the file's graph.
        let folder = MemoryModelFiles.register(files)
        defer { MemoryModelFiles.remove(folder: folder) }
        let fromMemory = try ModelImport.load(path: folder + "/" + m.model), fromFile = try ModelImport.load(path: Self.model)
        #expect(fromMemory.nodes.count == fromFile.nodes.count && fromMemory.tensors.map(\.shape) == fromFile.tensors.map(\.shape))
    }

    @Test func anEncryptedArchiveOpensOnlyWithItsKeyAndUnaltered() throws {
        let dir = TestEnvironment.scratch("deploy-encrypted")
        let key = try TeamKey.generate(), other = try TeamKey.generate()
        let out = dir.appendingPathComponent("seg.fgarchive").path
        try ModelArchive.create(modelPath: Self.model, name: "Segmenter", version: "1", key: key, output: out)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.model)))
        // The clear model is nowhere in the archive.
        let probe = Array(original[(original.count / 2)..<(original.count / 2 + 64)])
        #expect(Data(bytes).range(of: Data(probe)) == nil)
        let (_, files) = try ModelArchive.open(bytes: bytes, name: "seg", key: key)
        #expect(files["selfie_segmentation.tflite"].map([UInt8].init) == original)
        #expect(thrown { _ = try ModelArchive.open(bytes: bytes, name: "seg", key: nil) }.map { "\($0)" }?.contains("encrypted with team key '\(key.id)'") == true)
        #expect(thrown { _ = try ModelArchive.open(bytes: bytes, name: "seg", key: other) }.map { "\($0)" }?.contains("not '\(other.id)'") == true)
        // The right id with other key bytes, and one flipped byte in the header, the ciphertext and the tag: authentication fails.
        let impostor = try TeamKey(id: key.id, key: other.key)
        #expect((thrown { _ = try ModelArchive.open(bytes: bytes, name: "seg", key: impostor) } as? DeploymentError) == .authenticationFailed(name: "seg"))
        let (_, start) = try ModelArchive.manifest(of: bytes, name: "seg")
        for at in [start - 3, start + 10, bytes.count / 2, bytes.count - 5] {
            var altered = bytes
            altered[at] ^= 0x01
            let error = thrown { _ = try ModelArchive.open(bytes: altered, name: "seg", key: key) }
            #expect(error != nil, "byte \(at)")
            if at >= start { #expect((error as? DeploymentError) == .authenticationFailed(name: "seg"), "byte \(at): \(String(describing: error))") }
        }
    }

    @Test func damagedArchivesGiveOneClearErrorNeverACrash() throws {
        let dir = TestEnvironment.scratch("deploy-damaged")
        let out = dir.appendingPathComponent("seg.fgarchive").path
        try ModelArchive.create(modelPath: Self.model, name: "Segmenter", version: "1", key: nil, output: out)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        // Truncated anywhere, header length lies, the payload altered (its SHA-256 no longer matches).
        for cut in [0, 7, 11, 12, 40, bytes.count - 1] {
            let error = thrown { _ = try ModelArchive.open(bytes: Array(bytes.prefix(cut)), name: "seg", key: nil) }
            #expect(error is DeploymentError, "cut at \(cut)")
        }
        var huge = bytes
        huge[8] = 0xFF; huge[9] = 0xFF; huge[10] = 0xFF; huge[11] = 0x7F
        #expect("\(thrown { _ = try ModelArchive.open(bytes: huge, name: "seg", key: nil) }!)".contains("header length"))
        var payload = bytes
        payload[bytes.count - 100] ^= 0xFF
        #expect("\(thrown { _ = try ModelArchive.open(bytes: payload, name: "seg", key: nil) }!)".contains("SHA-256"))
        // Random damage: always an error (or, where it hit nothing checked, the same files).
        var rng = SplitMix64(seed: 11)
        for _ in 0..<300 {
            var b = bytes
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let i = Int(rng.next() % UInt64(min(b.count, 2000)))
                b[i] = UInt8(truncatingIfNeeded: rng.next())
            }
            if let result = try? ModelArchive.open(bytes: b, name: "seg", key: nil) {
                #expect(result.files["selfie_segmentation.tflite"].map([UInt8].init) == Array(bytes.suffix(result.manifest.size)))
            }
        }
    }

    @Test func manifestsAreAcceptedOnlyWithThePublishersSignature() throws {
        let dir = TestEnvironment.scratch("deploy-signed")
        let publisher = try PublisherKey.generate(), stranger = try PublisherKey.generate()
        let keyFile = dir.appendingPathComponent("publisher.fgsign").path
        try publisher.write(to: keyFile)
        #expect(try PublisherKey(path: keyFile).publicKeyHex == publisher.publicKeyHex)
        var mode = stat()
        stat(keyFile, &mode)
        #expect(mode.st_mode & 0o777 == 0o600)
        let tree = DeployTree(root: dir.appendingPathComponent("tree").path)
        try tree.createCollection("Things", key: publisher)
        let archive = dir.appendingPathComponent("seg.fgarchive").path
        try ModelArchive.create(modelPath: Self.model, name: "Segmenter", version: "1", key: nil, output: archive)
        let m = try tree.addDeployment(collection: "Things", name: "first", archives: ["Segmenter": archive], key: publisher, makeDefault: false)
        #expect(m.sequence == 2 && m.defaultDeployment == "first")
        let indexPath = tree.root + "/collections/Things/index.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: indexPath)), signature = try Data(contentsOf: URL(fileURLWithPath: indexPath + ".sig"))
        try ManifestSignature.verify(manifest: data, signature: signature, trustedKey: publisher.publicKeyHex, collection: "Things")
        var altered = data
        altered[altered.count / 2] ^= 0x20
        #expect(thrown { try ManifestSignature.verify(manifest: altered, signature: signature, trustedKey: publisher.publicKeyHex, collection: "Things") }
                .map { "\($0)" }?.contains("altered after signing") == true)
        #expect(thrown { try ManifestSignature.verify(manifest: data, signature: signature, trustedKey: stranger.publicKeyHex, collection: "Things") }
                .map { "\($0)" }?.contains("not the publisher key") == true)
        let forged = try JSONEncoder().encode(try ManifestSignature.sign(altered, with: stranger))
        #expect(thrown { try ManifestSignature.verify(manifest: altered, signature: forged, trustedKey: publisher.publicKeyHex, collection: "Things") } != nil)
        // A manifest may only point into archives/ by digest.
        var bad = try CollectionManifest.parse(data, name: "index.json")
        bad.deployments["first"]?.entries["Segmenter"]?.archive = "../../etc/passwd"
        #expect(thrown { try bad.validate(name: "index.json") }.map { "\($0)" }?.contains("archive must be 'archives/") == true)
    }

    @Test func theFirstMatchingRuleWinsElseTheDefault() throws {
        var m = CollectionManifest(collection: "C")
        let entry = CollectionManifest.Entry(archive: CollectionManifest.archivePath(sha256: String(repeating: "a", count: 64)),
                                             sha256: String(repeating: "a", count: 64), size: 1, version: "1", modelFormat: "tflite", keyID: nil)
        for d in ["kiosk", "wide", "big", "generic"] { m.deployments[d] = .init(entries: ["E": entry]) }
        m.rules = [.init(deployment: "kiosk", deviceClass: "kiosk"),
                   .init(deployment: "wide", arch: "x86_64", features: ["avx512f", "avx512bw"]),
                   .init(deployment: "big", minCores: 8, minMemoryMiB: 16_000, os: "linux")]
        m.defaultDeployment = "generic"
        try m.validate(name: "m")
        let base = MachineProfile(arch: "x86_64", features: ["avx2", "fma"], cores: 2, memoryMiB: 8000)
        var kiosk = base
        kiosk.deviceClass = "kiosk"
        kiosk.features.formUnion(["avx512f", "avx512bw"])
        var wide = base
        wide.features.formUnion(["avx512f", "avx512bw"])
        var arm = MachineProfile(arch: "aarch64", features: ["asimd", "neon"], cores: 16, memoryMiB: 32_000)
        #expect(m.deployment(for: kiosk)?.name == "kiosk")               // first match, though rule 2 matches too
        #expect(m.deployment(for: wide)?.name == "wide")
        #expect(m.deployment(for: arm)?.name == "big")
        #expect(m.deployment(for: base)?.name == "generic" && m.deployment(for: base)?.reason == "the default deployment")
        arm.cores = 4
        #expect(m.deployment(for: arm)?.name == "generic")
        m.defaultDeployment = nil
        #expect(m.deployment(for: base) == nil)
        // This machine, as the kernel describes it.
        let here = MachineProfile.current(deviceClass: "lab")
        #expect(here.cores >= 1 && here.memoryMiB > 0 && !here.arch.isEmpty && here.deviceClass == "lab")
        #if arch(x86_64)
        #expect(here.arch == "x86_64" && here.features.contains("sse2"))
        #endif
    }

    @Test func teamKeysAreKeptPrivately() throws {
        let dir = TestEnvironment.scratch("deploy-keys")
        let key = try TeamKey.generate()
        let path = dir.appendingPathComponent("team.fgkey").path
        try key.write(to: path)
        #expect(try TeamKey(path: path) == key)
        #expect(thrown { try key.write(to: path) } != nil)  // never overwritten
        let store = KeyStore(path: dir.appendingPathComponent("keystore.json").path)
        #expect(store.key(id: key.id) == nil)
        try store.store(key)
        #expect(store.key(id: key.id) == key)
        for p in [path, store.path] {
            var info = stat()
            stat(p, &info)
            #expect(info.st_mode & 0o777 == 0o600, "\(p)")
        }
        for bad in ["{}", #"{"format":"framegraph-team-key-1","id":"xyz","key":"00"}"#, "not json", String(repeating: "[", count: 5000)] {
            #expect(thrown { _ = try TeamKey(data: Data(bad.utf8), name: "k") } is DeploymentError, "\(bad.prefix(20))")
        }
    }
}
