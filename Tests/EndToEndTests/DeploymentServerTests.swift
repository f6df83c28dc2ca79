import Foundation
import Testing
import TestSupport

/// Model deployment against a real nginx on 127.0.0.1 (tools/deploy/test_server.py: a throwaway TLS
/// CA, the deploy tree, a bearer-token key service, and locations that answer slowly, with 500 or
/// cut the connection), driven through the CLI as a publisher and machines would use it.
@Suite(.serialized) struct DeploymentServerTests {
    // MARK: The story of the seed

    /// Publish FlowerModels (a classifier and a segmenter) → a machine runs label-video.fg from the
    /// collection → a retrained classifier is published as a new deployment → the machine downloads
    /// it during its next run and uses it from the launch after; with --hot-swap a running pipeline
    /// switches at a frame boundary without skipping a tick.
    @Test func theSeedStoryEndToEnd() throws {
        let f = try DeployFixture.shared.get()
        let work = TestEnvironment.scratch("deploy-story")
        let tree = work.appendingPathComponent("tree").path
        try f.cli(["deploy", "collection", tree, "FlowerModels", "--sign", f.publisher])
        try f.cli(["deploy", "deployment", tree, "FlowerModels", "spring", "FlowerClassifier=\(f.classifier1)", "FlowerSegmenter=\(f.segmenter)",
                   "--sign", f.publisher])
        let server = try DeployServer(tree: tree, keys: f.keys)
        defer { server.stop() }
        let machine = try f.machineConfig(work, name: "m", server: server.https, ca: server.ca, keyService: server.https + "keys/")

        // First launch: nothing cached; the collection is downloaded before the first frame.
        let first = try f.label(work, "first", machine: machine)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.source.contains("deployment spring (sequence 2"), "\(first.source)")
        #expect(first.rows >= 10 && first.labels.count == first.rows && first.labels.allSatisfy { !$0.hasPrefix("v2 ") }, "\(first.labels.prefix(3))")

        // The retrained classifier (encrypted) is published as a new default deployment.
        try f.cli(["deploy", "deployment", tree, "FlowerModels", "summer", "FlowerClassifier=\(f.classifier2)", "FlowerSegmenter=\(f.segmenter)",
                   "--default", "--sign", f.publisher])
        let second = try f.label(work, "second", machine: machine)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.source.contains("deployment spring"), "still the cached deployment: \(second.source)")
        #expect(second.stderr.contains("deployment summer (sequence 3) downloaded; it is used from the next launch"), "\(second.stderr)")
        let third = try f.label(work, "third", machine: machine)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.source.contains("deployment summer (sequence 3") && third.source.contains("encrypted"), "\(third.source)")
        #expect(third.rows >= 10 && third.labels.count == third.rows && third.labels.allSatisfy { $0.hasPrefix("v2 ") }, "\(third.labels.prefix(3))")
        // Same network, relabelled: the same classes frame by frame.
        #expect(zip(first.labels, third.labels).allSatisfy { "v2 " + $0 == $1 })

        // Hot swap: live, looping; a deployment published 2.5 s into the run is switched to at a frame
        // boundary; a browser watching the run's events (--serve) is told.
        let out = work.appendingPathComponent("swap").path
        let served = try ServedCLIRun(["run", "pipelines/label-video.fg", "--machine-config", machine, "--mode", "live", "--loop",
                                       "--duration", "9", "--hot-swap", "--update-interval", "1", "--quiet",
                                       "--set", "labels.model=collection:FlowerModels/FlowerClassifier", "--serve", "127.0.0.1:0",
                                       "--results", "\(out).jsonl", "--output", "\(out).mp4", "--stats", "\(out).json"])
        let events = Process()
        events.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        events.arguments = ["-s", "-N", "--max-time", "30", "-o", out + ".events", try served.base(timeout: 60) + "/events"]
        try events.run()
        Thread.sleep(forTimeInterval: 2.5)
        _ = try? f.cli(["deploy", "deployment", tree, "FlowerModels", "autumn", "FlowerClassifier=\(f.classifier1)",
                        "FlowerSegmenter=\(f.segmenter)", "--default", "--sign", f.publisher])
        let run = (status: served.wait(timeout: 90), stderr: served.stderr)
        events.waitUntilExit()
        #expect(run.status == 0, "\(run.stderr)")
        let told = (try? String(contentsOfFile: out + ".events", encoding: .utf8)) ?? ""
        #expect(told.contains(#""collection":"FlowerModels","deployment":"autumn","event":"swap","node":"labels","sequence":4"#), "\(told.prefix(2000))")
        let stats = try DeployFixture.json(out + ".json")
        let node = (stats["nodes"] as? [[String: Any]])?.first { $0["name"] as? String == "labels" }
        #expect(node?["modelSwaps"] as? Int == 1, "\(String(describing: node))")
        #expect((node?["modelSource"] as? String)?.contains("deployment autumn (sequence 4") == true)
        #expect(stats["skippedTicks"] as? Int == 0)
        let rows = try DeployFixture.labelRows(out + ".jsonl")
        let firstNew = rows.firstIndex { !$0.label.hasPrefix("v2 ") }
        try #require(firstNew != nil, "no frame labelled by the new model")
        #expect(firstNew! > 30, "the swap came after about 2.5 s of frames: \(firstNew!)")
        #expect(rows[..<firstNew!].allSatisfy { $0.label.hasPrefix("v2 ") } && rows[firstNew!...].allSatisfy { !$0.label.hasPrefix("v2 ") },
                "frames before the swap by the old model, after it by the new one")
        #expect(run.stderr.contains("switched to collection FlowerModels/FlowerClassifier 1, deployment autumn"), "\(run.stderr)")
    }

    // MARK: Targeting

    @Test func targetingRulesGiveEachMachineItsDeployment() throws {
        let f = try DeployFixture.shared.get()
        let work = TestEnvironment.scratch("deploy-targeting")
        let tree = work.appendingPathComponent("tree").path
        try f.cli(["deploy", "collection", tree, "Targets", "--sign", f.publisher])
        for (name, archive) in [("generic", f.segmenter), ("kiosk", f.detector), ("fast", f.landscape), ("never", f.detector)] {
            try f.cli(["deploy", "deployment", tree, "Targets", name, "Model=\(archive)", "--sign", f.publisher])
        }
        try f.cli(["deploy", "default", tree, "Targets", "generic", "--sign", f.publisher])
        // Rule 1: the device class; rule 2: a CPU feature this machine has, for the lab's machines;
        // rule 3: a feature no CPU has.
        let feature = DeployFixture.aCPUFeature()
        try f.cli(["deploy", "rule", tree, "Targets", "kiosk", "--device-class", "kiosk", "--sign", f.publisher])
        try f.cli(["deploy", "rule", tree, "Targets", "fast", "--device-class", "lab", "--feature", feature, "--sign", f.publisher])
        try f.cli(["deploy", "rule", tree, "Targets", "never", "--feature", "no_such_cpu_feature", "--sign", f.publisher])
        let server = try DeployServer(tree: tree, keys: f.keys)
        defer { server.stop() }
        for (machineName, deviceClass, expected, why) in [("a", "kiosk", "kiosk", "rule 1 (device-class kiosk)"),
                                                          ("b", "lab", "fast", "rule 2 (device-class lab, features \(feature))"),
                                                          ("c", "office", "generic", "the default deployment")] {
            let machine = try f.machineConfig(work, name: machineName, server: server.https, ca: server.ca, deviceClass: deviceClass)
            let pull = try f.cli(["models", "pull", "Targets", "--machine-config", machine])
            #expect(pull.stdout.contains("deployment \(expected) (sequence 9, \(why)) ready"), "machine \(machineName): \(pull.stdout)")
            let list = try f.cli(["models", "list", "--machine-config", machine])
            #expect(list.stdout.contains("Targets: deployment \(expected) (sequence 9"), "\(list.stdout)")
            let status = try f.cli(["models", "status", "--machine-config", machine])
            #expect(status.stdout.contains("gives this machine \(expected) by \(why) — up to date"), "\(status.stdout)")
        }
        // Slowly served (nginx limit_rate): the download still completes.
        let slow = try f.machineConfig(work, name: "slow", server: server.https + "slow/", ca: server.ca, deviceClass: "office")
        let pulled = try f.cli(["models", "pull", "Targets", "--machine-config", slow])
        #expect(pulled.stdout.contains("deployment generic"), "\(pulled.stdout)")
    }

    // MARK: Faults

    @Test func everyFaultEndsInAClearErrorOrTheFallback() throws {
        let f = try DeployFixture.shared.get()
        let work = TestEnvironment.scratch("deploy-faults")
        let tree = work.appendingPathComponent("tree").path, stale = work.appendingPathComponent("stale").path
        let unsigned = work.appendingPathComponent("unsigned").path, forged = work.appendingPathComponent("forged").path
        let damaged = work.appendingPathComponent("damaged").path
        try f.cli(["deploy", "collection", tree, "FlowerModels", "--sign", f.publisher])
        try f.cli(["deploy", "deployment", tree, "FlowerModels", "spring", "FlowerClassifier=\(f.classifier1)", "--sign", f.publisher])
        try DeployFixture.copy(tree, to: stale)      // sequence 2
        try f.cli(["deploy", "deployment", tree, "FlowerModels", "summer", "FlowerClassifier=\(f.classifier2)", "--default", "--sign", f.publisher])
        for copy in [unsigned, forged, damaged] { try DeployFixture.copy(tree, to: copy) }
        try FileManager.default.removeItem(atPath: unsigned + "/collections/FlowerModels/index.json.sig")
        // Signed by a key the machines do not trust.
        try FileManager.default.removeItem(atPath: forged + "/collections/FlowerModels/index.json.sig")
        try FileManager.default.copyItem(atPath: f.strangerSignature(for: forged + "/collections/FlowerModels/index.json"),
                                         toPath: forged + "/collections/FlowerModels/index.json.sig")
        // The archive's bytes changed after publication (same size): its SHA-256 no longer matches.
        for name in try FileManager.default.contentsOfDirectory(atPath: damaged + "/archives") {
            let path = damaged + "/archives/" + name
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        let server = try DeployServer(tree: tree, keys: f.keys, aliases: ["stale": stale, "unsigned": unsigned, "forged": forged, "damaged": damaged])
        let fallback = "models/cache/efficientnet_lite0.onnx"
        let cases: [(name: String, url: String, expected: String)] = [
            ("http-500", server.https + "fail/", "HTTP 500"),
            ("cut", server.https + "cut/", "downloading"),
            ("unsigned", server.https + "alt/unsigned/", "the manifest is not signed"),
            ("forged", server.https + "alt/forged/", "not the publisher key"),
            ("digest", server.https + "alt/damaged/", "does not match the manifest"),
            ("untrusted-ca", server.https, "SSL certificate problem"),
        ]
        for c in cases {
            let machine = try f.machineConfig(work, name: c.name, server: c.url, ca: c.name == "untrusted-ca" ? nil : server.ca,
                                              keyService: server.https + "keys/")
            let pull = try f.cli(["models", "pull", "FlowerModels", "--machine-config", machine], check: false)
            #expect(pull.status == 2 && pull.stderr.split(separator: "\n").count == 1 && pull.stderr.contains(c.expected),
                    "\(c.name): status \(pull.status): \(pull.stderr)")
            try f.expectNothingUnverifiedCached(work.appendingPathComponent("\(c.name)-cache").path, c.name)
            // A pipeline with a fallback runs on it, and says so once and in its stats.
            let run = try f.label(work, c.name, machine: machine, fallback: fallback)
            #expect(run.status == 0, "\(c.name): \(run.stderr)")
            #expect(run.source.hasPrefix("fallback \(fallback)"), "\(c.name): \(run.source)")
            #expect(run.stderr.components(separatedBy: "using the bundled fallback").count == 2, "\(c.name): said once: \(run.stderr)")
            // Without one: a clear error, before the first frame.
            let failed = try f.label(work, c.name + "-nofallback", machine: machine)
            #expect(failed.status == 2 && failed.stderr.contains("node 'labels'") && failed.stderr.contains(c.expected), "\(c.name): \(failed.stderr)")
        }
        // Stale: a machine that accepted sequence 3 is offered sequence 2.
        let machine = try f.machineConfig(work, name: "stale", server: server.https, ca: server.ca, keyService: server.https + "keys/")
        #expect(try f.cli(["models", "pull", "FlowerModels", "--machine-config", machine]).stdout.contains("deployment summer (sequence 3"))
        let staleMachine = try f.machineConfig(work, name: "stale", server: server.https + "alt/stale/", ca: server.ca, keyService: server.https + "keys/")
        let refused = try f.cli(["models", "pull", "FlowerModels", "--machine-config", staleMachine], check: false)
        #expect(refused.status == 2 && refused.stderr.contains("offers manifest sequence 2, older than the 3 already accepted"), "\(refused.stderr)")
        #expect(try f.cli(["models", "list", "--machine-config", staleMachine]).stdout.contains("deployment summer (sequence 3"))

        // The server stopped: a machine with the collection cached (and its team key, from one
        // online run) runs on it, the update check saying it failed; one without falls back.
        #expect(try f.label(work, "online-once", machine: machine).status == 0)
        server.stop()
        let cached = try f.label(work, "stopped-cached", machine: machine)
        #expect(cached.status == 0 && cached.source.contains("deployment summer"), "\(cached.stderr)")
        #expect(cached.stderr.contains("update check failed"), "\(cached.stderr)")
        let empty = try f.machineConfig(work, name: "stopped-empty", server: server.https, ca: server.ca, keyService: server.https + "keys/")
        let fellBack = try f.label(work, "stopped-empty", machine: empty, fallback: fallback)
        #expect(fellBack.status == 0 && fellBack.source.hasPrefix("fallback"), "\(fellBack.stderr)")
    }

    // MARK: Encryption

    @Test func anEncryptedModelNeedsItsKeyOnceAndNeverReachesTheDisk() throws {
        let f = try DeployFixture.shared.get()
        let work = TestEnvironment.scratch("deploy-encryption")
        let tree = work.appendingPathComponent("tree").path
        try f.cli(["deploy", "collection", tree, "FlowerModels", "--sign", f.publisher])
        try f.cli(["deploy", "deployment", tree, "FlowerModels", "summer", "FlowerClassifier=\(f.classifier2)", "--sign", f.publisher])
        let server = try DeployServer(tree: tree, keys: f.keys)
        defer { server.stop() }
        let temporary = work.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        // The archive is downloaded, but the key service cannot be reached (a closed port): keyFetch.
        let offline = try f.machineConfig(work, name: "m", server: server.https, ca: server.ca, keyService: "https://127.0.0.1:9/keys/")
        // `models pull` downloads it but does not call it ready: the model cannot be opened here.
        let notReady = try f.cli(["models", "pull", "FlowerModels", "--machine-config", offline], check: false)
        #expect(notReady.status == 1 && notReady.stdout.contains("NOT ready on this machine") && !notReady.stdout.contains(") ready")
                && notReady.stdout.contains("could not fetch it from the key service"), "\(notReady.stdout)\(notReady.stderr)")
        let first = try f.label(work, "offline-first", machine: offline, temporary: temporary)
        #expect(first.status == 2 && first.stderr.contains("team key '\(f.teamKeyID)': could not fetch it from the key service"), "\(first.stderr)")
        // A wrong token is refused by the key service: keyFetch too.
        let wrongToken = try f.machineConfig(work, name: "m", server: server.https, ca: server.ca, keyService: server.https + "keys/", token: "wrong")
        let refused = try f.label(work, "wrong-token", machine: wrongToken, temporary: temporary)
        #expect(refused.status == 2 && refused.stderr.contains("could not fetch it from the key service") && refused.stderr.contains("401"), "\(refused.stderr)")
        // Online once: the key is fetched and kept (0600); then offline loads work.
        let online = try f.machineConfig(work, name: "m", server: server.https, ca: server.ca, keyService: server.https + "keys/")
        let ready = try f.cli(["models", "pull", "FlowerModels", "--machine-config", online])
        #expect(ready.status == 0 && ready.stdout.contains("up to date and ready"), "\(ready.stdout)")
        let second = try f.label(work, "online", machine: online, temporary: temporary)
        #expect(second.status == 0 && second.labels.allSatisfy { $0.hasPrefix("v2 ") }, "\(second.stderr)")
        let cache = work.appendingPathComponent("m-cache").path
        var info = stat()
        #expect(stat(cache + "/keystore.json", &info) == 0 && info.st_mode & 0o777 == 0o600)
        server.stop()
        let third = try f.label(work, "offline-again", machine: offline, temporary: temporary)
        #expect(third.status == 0 && third.labels.allSatisfy { $0.hasPrefix("v2 ") } && third.source.contains("encrypted"), "\(third.stderr)")
        // No clear model bytes on disk: not in the cache, not in the temporary folder the runs used.
        for folder in [cache, temporary, work.appendingPathComponent("tree").path] {
            for hit in try DeployFixture.files(containing: f.clearProbe, under: folder) {
                Issue.record("clear model bytes found in \(hit)")
            }
        }
        // A tampered archive in the cache is refused, not loaded.
        let archives = cache + "/archives"
        for name in try FileManager.default.contentsOfDirectory(atPath: archives) {
            var bytes = try Data(contentsOf: URL(fileURLWithPath: archives + "/" + name))
            bytes[bytes.count - 40] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: archives + "/" + name))
        }
        let tampered = try f.label(work, "tampered", machine: offline, temporary: temporary)
        #expect(tampered.status == 2 && tampered.stderr.contains("does not match the manifest"), "\(tampered.stderr)")
        // The damaged copy was removed; the next pull fetches it again and the model loads.
        #expect(try FileManager.default.contentsOfDirectory(atPath: archives).isEmpty)
        let restarted = try DeployServer(tree: work.appendingPathComponent("tree").path, keys: f.keys)
        defer { restarted.stop() }
        let again = try f.machineConfig(work, name: "m", server: restarted.https, ca: restarted.ca, keyService: restarted.https + "keys/")
        let repaired = try f.cli(["models", "pull", "FlowerModels", "--machine-config", again])
        #expect(repaired.stdout.contains("repaired"), "\(repaired.stdout)")
        #expect(try f.label(work, "repaired", machine: again, temporary: temporary).status == 0)
    }
}

/// What the deployment tests share: keys, archives made once by the CLI, a machine-config writer.
final class DeployFixture: Sendable {
    static let shared = Result { try DeployFixture() }

    let folder: URL
    let publisher: String, strangerKey: String, teamKey: String, teamKeyID: String, keys: String
    let classifier1: String, classifier2: String, segmenter: String, detector: String, landscape: String
    /// 64 bytes from the middle of the clear retrained classifier (never to be found on disk).
    let clearProbe: Data

    init() throws {
        let base = TestEnvironment.scratch("deploy-fixture")
        folder = base
        func path(_ name: String) -> String { base.appendingPathComponent(name).path }
        publisher = path("publisher.fgsign")
        strangerKey = path("stranger.fgsign")
        teamKey = path("team.fgkey")
        keys = path("keys")
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        _ = try Self.run(["deploy", "key", "new", "-o", publisher])
        _ = try Self.run(["deploy", "key", "new", "-o", strangerKey])
        _ = try Self.run(["model", "key", "new", "-o", teamKey])
        teamKeyID = try Self.json(teamKey)["id"] as? String ?? ""
        try FileManager.default.copyItem(atPath: teamKey, toPath: keys + "/" + teamKeyID)
        let models = TestEnvironment.root.appendingPathComponent("models/cache").path
        let v2 = path("classifier-v2.onnx")
        let made = try runCommand(TestEnvironment.root.appendingPathComponent(".venv-tools/bin/python").path,
                                  ["tools/deploy/make_classifier_v2.py", models + "/efficientnet_lite0.onnx", v2])
        guard made.status == 0 else { throw DeploymentTestError("make_classifier_v2.py: \(made.stderr)") }
        let clear = try Data(contentsOf: URL(fileURLWithPath: v2))
        clearProbe = clear.subdata(in: (clear.count / 2)..<(clear.count / 2 + 64))
        classifier1 = path("classifier-1.fgarchive")
        classifier2 = path("classifier-2.fgarchive")
        segmenter = path("segmenter.fgarchive")
        detector = path("detector.fgarchive")
        landscape = path("landscape.fgarchive")
        _ = try Self.run(["model", "archive", models + "/efficientnet_lite0.onnx", "--name", "FlowerClassifier", "--version", "1", "-o", classifier1])
        _ = try Self.run(["model", "archive", v2, "--name", "FlowerClassifier", "--version", "2", "--encrypt", teamKey, "-o", classifier2])
        _ = try Self.run(["model", "archive", models + "/selfie_segmentation.tflite", "--name", "FlowerSegmenter", "-o", segmenter])
        _ = try Self.run(["model", "archive", models + "/face_detection_short_range.tflite", "--name", "Detector", "-o", detector])
        _ = try Self.run(["model", "archive", models + "/selfie_segmentation_landscape.tflite", "--name", "Landscape", "-o", landscape])
        try FileManager.default.removeItem(atPath: v2)  // the clear model exists only inside the fixture's encrypted archive from now on
    }

    @discardableResult
    static func run(_ arguments: [String], check: Bool = true) throws -> CommandResult {
        let r = try runCommand(TestEnvironment.cli, arguments, timeout: 300)
        if check && r.status != 0 { throw DeploymentTestError("framegraph \(arguments.joined(separator: " ")): \(r.stderr)") }
        return r
    }

    @discardableResult
    func cli(_ arguments: [String], check: Bool = true) throws -> CommandResult { try Self.run(arguments, check: check) }

    /// A machine.json (its cache beside it, named after the machine).
    func machineConfig(_ work: URL, name: String, server: String, ca: String?, deviceClass: String? = nil, keyService: String? = nil,
                       token: String = DeployServer.token) throws -> String {
        let publicKey = try Self.json(publisher)["publicKey"] as? String ?? ""
        var config: [String: Any] = ["format": "framegraph-machine-1", "server": server, "publisherKey": publicKey,
                                     "cacheDir": work.appendingPathComponent("\(name)-cache").path, "attempts": 2, "timeoutSeconds": 5]
        if let ca { config["caFile"] = ca }
        if let deviceClass { config["deviceClass"] = deviceClass }
        if let keyService { config["keyService"] = ["url": keyService, "token": token] }
        let path = work.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A valid signature file made by a key no machine trusts (the stranger publishes a collection
    /// of the same name in a tree of its own); `manifest` is only for the reader.
    func strangerSignature(for manifest: String) throws -> String {
        let tree = folder.appendingPathComponent("stranger-\(UUID().uuidString.prefix(8))").path
        _ = try cli(["deploy", "collection", tree, "FlowerModels", "--sign", strangerKey])
        return tree + "/collections/FlowerModels/index.json.sig"
    }

    struct LabelRun {
        var status: Int32
        var stderr: String
        var source: String
        /// Result lines written (one per frame) and the top label of those with a classification.
        var rows: Int
        var labels: [String]
    }

    /// label-video.fg for one second (offline: as many frames as it labels in a second) with the model from FlowerModels.
    func label(_ work: URL, _ name: String, machine: String, fallback: String? = nil, temporary: String? = nil) throws -> LabelRun {
        let out = work.appendingPathComponent(name).path
        var arguments = ["run", "pipelines/label-video.fg", "--machine-config", machine, "--duration", "1", "--quiet",
                         "--set", "labels.model=collection:FlowerModels/FlowerClassifier", "--results", "\(out).jsonl",
                         "--output", "\(out).mp4", "--stats", "\(out).json"]
        if let fallback { arguments += ["--set", "labels.fallback=\(fallback)"] }
        let r = try runCommand(TestEnvironment.cli, arguments, environment: temporary.map { ["TMPDIR": $0] } ?? [:], timeout: 300)
        var source = ""
        if let stats = try? Self.json(out + ".json"), let nodes = stats["nodes"] as? [[String: Any]] {
            source = nodes.first { $0["name"] as? String == "labels" }?["modelSource"] as? String ?? ""
        }
        let labels = (try? Self.labelRows(out + ".jsonl"))?.map(\.label) ?? []
        let rows = ((try? String(contentsOfFile: out + ".jsonl", encoding: .utf8)) ?? "").split(separator: "\n").count
        return LabelRun(status: r.status, stderr: r.stderr, source: source, rows: rows, labels: labels)
    }

    /// Nothing but verified archives in the cache's archives folder, and no active deployment.
    func expectNothingUnverifiedCached(_ cache: String, _ name: String) throws {
        let archives = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/archives")) ?? []
        #expect(archives.isEmpty, "\(name): \(archives)")
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/partial")) ?? []
        #expect(partial.isEmpty, "\(name): a partial download left in the cache: \(partial)")
        #expect(!FileManager.default.fileExists(atPath: cache + "/collections/FlowerModels/active.json"), "\(name)")
    }

    static func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
    }

    static func labelRows(_ path: String) throws -> [(index: Int, label: String)] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let row = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let index = row["index"] as? Int, let top = (row["classifications"] as? [[String: Any]])?.first,
                  let label = top["label"] as? String else { return nil }
            return (index, label)
        }
    }

    static func copy(_ from: String, to: String) throws {
        try? FileManager.default.removeItem(atPath: to)
        try FileManager.default.copyItem(atPath: from, toPath: to)
    }

    /// Files under `folder` whose bytes contain `probe`.
    static func files(containing probe: Data, under folder: String) throws -> [String] {
        var hits: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let name = enumerator?.nextObject() as? String {
            let path = folder + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: path) else { continue }
            if data.range(of: probe) != nil { hits.append(path) }
        }
        return hits
    }

    /// A CPU feature this machine has (for a rule that must match it).
    static func aCPUFeature() -> String {
        #if arch(x86_64)
        return "sse2"
        #else
        return "asimd"
        #endif
    }
}
