import Foundation
import ModelDeployment

/// The publishing side of model deployment:
/// `framegraph model key new`, `framegraph model archive`, and `framegraph deploy key|collection|deployment|rule|default|show`.
struct DeployCommand {
    let arguments: Arguments


    func executeModel() throws -> Int32 {
        let w = arguments.positional
        if w.count >= 3, w[1] == "key", w[2] == "new" {
            let output = try required("output", "framegraph model key new -o team.fgkey")
            let key = try TeamKey.generate()
            try key.write(to: output)
            print("team key \(key.id) written to \(output) (mode 0600); archive models with --encrypt \(output); the key service serves this file at its URL + \(key.id)")
            return 0
        }
        if w.count == 3, w[1] == "archive" {
            let output = try required("output", "framegraph model archive MODEL [--name N] [--version V] [--encrypt team.fgkey] -o X.fgarchive")
            let key = try arguments.value("encrypt").map { try TeamKey(path: $0) }
            let manifest = try ModelArchive.create(modelPath: w[2], name: arguments.value("name"), version: arguments.value("version") ?? "1",
                                                   key: key, output: output)
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? NSNumber)?.intValue ?? 0
            print("\(output): \(manifest.name) \(manifest.version) (\(manifest.modelFormat), \(manifest.files.map(\.name).joined(separator: " + ")), "
                  + "\(size) bytes\(key.map { ", encrypted with team key \($0.id)" } ?? ""))")
            return 0
        }
        throw Arguments.UsageError(description: "usage: framegraph model key new -o team.fgkey | framegraph model archive MODEL [--name N] [--version V] [--encrypt team.fgkey] -o X.fgarchive")
    }

    func executeDeploy() throws -> Int32 {
        let w = Array(arguments.positional.dropFirst())
        guard let verb = w.first else { throw Arguments.UsageError(description: Self.usage) }
        if verb == "key" {
            guard w.count == 2, w[1] == "new" else { throw Arguments.UsageError(description: "usage: framegraph deploy key new -o publisher.fgsign") }
            let output = try required("output", "framegraph deploy key new -o publisher.fgsign")
            let key = try PublisherKey.generate()
            try key.write(to: output)
            print("publisher signing key written to \(output) (mode 0600; keep it off the machines)")
            print("public key (each machine's machine.json \"publisherKey\"): \(key.publicKeyHex)")
            return 0
        }
        guard w.count >= 3 else { throw Arguments.UsageError(description: Self.usage) }
        let tree = DeployTree(root: w[1]), collection = w[2]
        let key = try PublisherKey(path: try required("sign", "--sign publisher.fgsign (the key that signs the collection's manifest)"))
        let manifest: CollectionManifest
        switch verb {
        case "collection":
            guard w.count == 3 else { throw Arguments.UsageError(description: "usage: framegraph deploy collection TREE NAME --sign KEY") }
            try tree.createCollection(collection, key: key)
            manifest = try tree.manifest(collection, key: key)
        case "deployment":
            guard w.count >= 5 else { throw Arguments.UsageError(description: "usage: framegraph deploy deployment TREE COLLECTION NAME ENTRY=ARCHIVE… --sign KEY [--default]") }
            var archives: [String: String] = [:]
            for pair in w[4...] {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw Arguments.UsageError(description: "'\(pair)': expected ENTRY=ARCHIVE, e.g. FlowerClassifier=flowers-2.fgarchive") }
                archives[parts[0]] = parts[1]
            }
            let teamKeys = try arguments.all("team-key").map { try TeamKey(path: $0) }
            manifest = try tree.addDeployment(collection: collection, name: w[3], archives: archives, key: key, makeDefault: arguments.has("default"),
                                              teamKeys: teamKeys)
        case "rule":
            guard w.count == 4 else { throw Arguments.UsageError(description: "usage: framegraph deploy rule TREE COLLECTION DEPLOYMENT [--device-class C] [--arch A] [--feature F]… [--min-cores N] [--min-memory MIB] [--os OS] [--position N] --sign KEY") }
            let rule = CollectionManifest.Rule(deployment: w[3], deviceClass: arguments.value("device-class"), arch: arguments.value("arch"),
                                               features: arguments.all("feature").isEmpty ? nil : arguments.all("feature"),
                                               minCores: arguments.optionalInteger("min-cores"), minMemoryMiB: arguments.optionalInteger("min-memory"),
                                               os: arguments.value("os"))
            guard rule.summary != "every machine" else {
                throw Arguments.UsageError(description: "a rule needs at least one condition (--device-class, --arch, --feature, --min-cores, --min-memory, --os); the default deployment covers every machine")
            }
            manifest = try tree.addRule(collection: collection, rule: rule, position: arguments.optionalInteger("position"), key: key)
        case "default":
            guard w.count == 4 else { throw Arguments.UsageError(description: "usage: framegraph deploy default TREE COLLECTION DEPLOYMENT --sign KEY") }
            manifest = try tree.setDefault(collection: collection, deployment: w[3], key: key)
        case "show":
            manifest = try tree.manifest(collection, key: key)
        default:
            throw Arguments.UsageError(description: Self.usage)
        }
        print(Self.describe(manifest))
        return 0
    }

    static let usage = "usage: framegraph deploy key new -o publisher.fgsign | deploy collection TREE NAME | deploy deployment TREE COLLECTION NAME ENTRY=ARCHIVE… [--default] | deploy rule TREE COLLECTION DEPLOYMENT --device-class C|--arch A|--feature F|--min-cores N|--min-memory MIB|--os OS [--position N] | deploy default TREE COLLECTION DEPLOYMENT | deploy show TREE COLLECTION; each with --sign publisher.fgsign"

    static func describe(_ m: CollectionManifest) -> String {
        var lines = ["collection \(m.collection), sequence \(m.sequence), published \(m.published)"]
        for (name, d) in m.deployments.sorted(by: { $0.key < $1.key }) {
            lines.append("  deployment \(name)\(m.defaultDeployment == name ? " (default)" : ""):")
            for (entry, e) in d.entries.sorted(by: { $0.key < $1.key }) {
                lines.append("    \(entry): \(e.modelFormat) \(e.version), \(e.size) bytes, \(e.archive)\(e.keyID.map { ", encrypted (key \($0))" } ?? "")")
            }
        }
        for (i, r) in m.rules.enumerated() { lines.append("  rule \(i + 1): \(r.summary) → \(r.deployment)") }
        return lines.joined(separator: "\n")
    }

    private func required(_ name: String, _ usage: String) throws -> String {
        guard let v = arguments.value(name) else { throw Arguments.UsageError(description: "--\(name) is needed: \(usage)") }
        return v
    }

}
