import Foundation
import FrameGraph
import ModelDeployment
import ModelFormats
import NeuralGraph
import Testing
import TestSupport

/// The library's deployment API as a program uses it, against the nginx test server: ML Kit's
/// ModelManager (download with conditions, progress and events as a stream and to observers,
/// isModelDownloaded) and Core ML's ModelCollection (beginAccessing, entries, load).
@Suite(.serialized) struct LibraryAPITests {
    struct Setup {
        var work: URL
        var server: DeployServer
        var config: MachineConfig
        var publisher: PublisherKey
        var tree: DeployTree
    }

    /// A collection "Shapes" (a segmenter and an encrypted face detector) on a fresh server.
    func setUp(_ name: String, cutAfter: Int? = nil) throws -> Setup {
        let work = TestEnvironment.scratch(name)
        let models = TestEnvironment.root.appendingPathComponent("models/cache").path
        let publisher = try PublisherKey.generate(), team = try TeamKey.generate()
        let keys = work.appendingPathComponent("keys").path
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        try team.write(to: keys + "/" + team.id)
        let segmenter = work.appendingPathComponent("segmenter.fgarchive").path, detector = work.appendingPathComponent("detector.fgarchive").path
        try ModelArchive.create(modelPath: models + "/selfie_segmentation.tflite", name: "Segmenter", version: "1", key: nil, output: segmenter)
        try ModelArchive.create(modelPath: models + "/face_detection_short_range.tflite", name: "Detector", version: "1", key: team, output: detector)
        let tree = DeployTree(root: work.appendingPathComponent("tree").path)
        try tree.createCollection("Shapes", key: publisher)
        try tree.addDeployment(collection: "Shapes", name: "one", archives: ["Segmenter": segmenter, "Detector": detector], key: publisher, makeDefault: true)
        let server = try DeployServer(tree: tree.root, keys: keys, cutAfter: cutAfter)
        var config = MachineConfig(server: server.https, publisherKey: publisher.publicKeyHex, caFile: server.ca,
                                   keyService: .init(url: server.https + "keys/", token: DeployServer.token),
                                   cacheDir: work.appendingPathComponent("cache").path)
        config.meteredNetwork = false
        return Setup(work: work, server: server, config: config, publisher: publisher, tree: tree)
    }

    @Test func theModelManagerDownloadsWithProgressAndEvents() async throws {
        let s = try setUp("deploy-api-manager")
        defer { s.server.stop() }
        let manager = ModelManager(configuration: s.config)
        let model = RemoteModel(collection: "Shapes", entry: "Segmenter")
        #expect(!manager.isModelDownloaded(model))
        let observed = Protected<[ModelDownloadEvent]>([])
        let token = manager.addObserver { event in observed.withLock { $0.append(event) } }
        var events: [ModelDownloadEvent] = []
        for await event in manager.download(model, conditions: ModelDownloadConditions()) { events.append(event) }
        manager.removeObserver(token)
        #expect(events.last == .downloadDidSucceed(model, deployment: "one", sequence: 2), "\(events.suffix(2))")
        let progress = events.compactMap { e -> HTTPClient.Progress? in if case .progress(_, _, let p) = e { return p } else { return nil } }
        #expect(!progress.isEmpty && progress.allSatisfy { $0.total != nil && $0.bytes <= $0.total! })
        #expect(progress.contains { $0.bytes == $0.total })
        #expect(observed.withLock { $0 } == events, "observers hear every event of the stream")
        #expect(manager.isModelDownloaded(model) && manager.isModelDownloaded(RemoteModel(collection: "Shapes", entry: "Detector")))
        #expect(!manager.isModelDownloaded(RemoteModel(collection: "Shapes", entry: "Nothing")))

        // Conditions: a metered network (as the config says, with no NetworkManager to ask) and a
        // background download that is not allowed both fail with conditionsNotMet, downloading nothing.
        var metered = s.config
        metered.meteredNetwork = true
        metered.cacheDir = s.work.appendingPathComponent("cache-metered").path
        var failures: [ModelDownloadEvent] = []
        for await e in ModelManager(configuration: metered).download(model, conditions: ModelDownloadConditions(allowsMeteredNetwork: false)) {
            failures.append(e)
        }
        for await e in ModelManager(configuration: metered).download(model, conditions: ModelDownloadConditions(allowsMeteredNetwork: true,
                                                                                                             allowsBackgroundDownloading: false),
                                                                    background: true) {
            failures.append(e)
        }
        if NetworkMonitor.isMetered(config: metered) {
            #expect(failures.count == 2 && failures.allSatisfy { if case .downloadDidFail(_, .conditionsNotMet) = $0 { return true } else { return false } },
                    "\(failures)")
        }
        #expect(!FileManager.default.fileExists(atPath: metered.cacheDir! + "/collections/Shapes/active.json"))
        // A collection the server does not have: the failure event names it.
        var missing: [ModelDownloadEvent] = []
        for await e in manager.download(RemoteModel(collection: "Nope", entry: "X"), conditions: .init()) { missing.append(e) }
        guard case .downloadDidFail(_, let error) = missing.last else { Issue.record("\(missing)"); return }
        #expect(error.description.contains("collections/Nope/index.json") && error.description.contains("404"), "\(error)")
    }

    @Test func aCollectionIsAccessedAsCoreMLDoes() async throws {
        let s = try setUp("deploy-api-collection")
        defer { s.server.stop() }
        // First access: downloaded; entries give local archives, loaded (the encrypted one in memory).
        let shapes = try await ModelCollection.beginAccessing(identifier: "Shapes", configuration: s.config, checkForUpdates: false)
        #expect(shapes.deploymentID == "one" && shapes.sequence == 2 && Set(shapes.entries.keys) == ["Segmenter", "Detector"])
        let detector = try #require(shapes.entries["Detector"])
        #expect(detector.isEncrypted && FileManager.default.fileExists(atPath: detector.modelURL.path))
        let path = try detector.load()
        #expect(path.hasPrefix("memory:") && path.hasSuffix("/face_detection_short_range.tflite"))
        let graph = try ModelImport.load(path: path)
        #expect(graph.tensors[graph.inputs[0]].shape == [1, 128, 128, 3])
        // A new deployment: the next access still gets the cached one, and fetches the new one for
        // the access after (used at the next launch).
        let segmenter2 = s.work.appendingPathComponent("segmenter-2.fgarchive").path
        try ModelArchive.create(modelPath: TestEnvironment.root.appendingPathComponent("models/cache/selfie_segmentation_landscape.tflite").path,
                                name: "Segmenter", version: "2", key: nil, output: segmenter2)
        try s.tree.addDeployment(collection: "Shapes", name: "two", archives: ["Segmenter": segmenter2], key: s.publisher, makeDefault: true)
        let again = try await ModelCollection.beginAccessing(identifier: "Shapes", configuration: s.config, checkForUpdates: false)
        #expect(again.deploymentID == "one")
        let outcome = try CollectionUpdater(config: s.config).update("Shapes")
        #expect(outcome.changed && outcome.previous?.deployment == "one" && outcome.active.deployment == "two")
        let next = try await ModelCollection.beginAccessing(identifier: "Shapes", configuration: s.config, checkForUpdates: false)
        #expect(next.deploymentID == "two" && next.entries["Segmenter"]?.version == "2" && next.entries["Detector"] == nil)
        // The deployment before is kept (a program may still hold it) until the next switch prunes it.
        let archives = { try FileManager.default.contentsOfDirectory(atPath: s.config.cachePath + "/archives").sorted() }
        let afterTwo = try archives()
        #expect(afterTwo.count == 3, "\(afterTwo)")
        let detector3 = s.work.appendingPathComponent("detector-3.fgarchive").path
        try ModelArchive.create(modelPath: TestEnvironment.root.appendingPathComponent("models/cache/face_detection_short_range.tflite").path,
                                name: "Detector", version: "3", key: nil, output: detector3)
        try s.tree.addDeployment(collection: "Shapes", name: "three", archives: ["Detector": detector3], key: s.publisher, makeDefault: true)
        #expect(try CollectionUpdater(config: s.config).update("Shapes").active.deployment == "three")
        let two = try #require(next.entries["Segmenter"])
        let threeArchive = "\(try Crypto.sha256(Data(contentsOf: URL(fileURLWithPath: detector3)))).fgarchive"
        #expect(try archives() == [two.modelURL.lastPathComponent, threeArchive].sorted())
        // The collection accessed before the last switch still loads its entry.
        #expect(try two.load().hasPrefix("memory:"))
    }

    @Test func aCutDownloadResumesWhereItStopped() throws {
        // nginx's /cut/ location cuts every response after about 64 KiB; a range request gets the
        // next part. With enough attempts the ~230 KB archive arrives whole, resumed each time.
        let s = try setUp("deploy-api-resume", cutAfter: 65536)
        defer { s.server.stop() }
        let manifest = try s.tree.manifest("Shapes", key: s.publisher)
        let entry = try #require(manifest.deployments["one"]?.entries["Detector"])
        let partial = s.work.appendingPathComponent("detector.partial").path
        let client = HTTPClient(caFile: s.config.caPath, timeout: 5, attempts: 12, backoff: 0.01)
        let progress = Protected<[Int64]>([])
        let digest = try client.download(s.config.server + "cut/" + entry.archive, to: partial, expectedSize: Int64(entry.size)) { p in
            progress.withLock { $0.append(p.bytes) }
        }
        #expect(digest == entry.sha256)
        #expect(Crypto.sha256(fileAt: partial) == entry.sha256)
        let log = try String(contentsOfFile: s.server.work + "/access.log", encoding: .utf8)
        let ranged = log.split(separator: "\n").filter { $0.contains("/cut/") && $0.contains(" 206 ") }
        // Cut at least once (nginx sends 64 KiB or a little more before the cut) and resumed with ranges.
        #expect(ranged.count >= 1, "resumed with range requests (206): \(log.suffix(800))")
        // The same with too few attempts: a clear error, and the partial file kept for the next try.
        let short = HTTPClient(caFile: s.config.caPath, timeout: 5, attempts: 1, backoff: 0.01)
        let partial2 = s.work.appendingPathComponent("detector2.partial").path
        do {
            try short.download(s.config.server + "cut/" + entry.archive, to: partial2, expectedSize: Int64(entry.size)) { _ in }
            Issue.record("a cut download with one attempt succeeded")
        } catch let error as DeploymentError {
            #expect(error.description.contains("downloading") && error.description.contains("cut/archives"), "\(error)")
        }
        let kept = try FileManager.default.attributesOfItem(atPath: partial2)[.size] as? NSNumber
        #expect((kept?.intValue ?? 0) > 0 && (kept?.intValue ?? 0) < entry.size)
        // An error page (404, a 301 redirect, a 500) is never written as the file's bytes.
        for (path, status) in [("archives/missing.fgarchive", "HTTP 404"), ("archives", "HTTP 301"), ("fail/" + entry.archive, "HTTP 500")] {
            let target = s.work.appendingPathComponent("error-page.partial").path
            unlink(target)
            do {
                try short.download(s.config.server + path, to: target, expectedSize: Int64(entry.size)) { _ in }
                Issue.record("\(path): no error")
            } catch let error as DeploymentError {
                #expect(error.description.contains(status), "\(path): \(error)")
            }
            #expect((try? FileManager.default.attributesOfItem(atPath: target)[.size] as? NSNumber)?.intValue ?? 0 == 0, "\(path): error page saved")
        }
    }
}
