import Foundation
import FrameGraph

/// One stream of a run with several inputs: its name (in node names, `{stream}` in output paths and
/// the stats' `streams`) and the file it reads.
public struct StreamInput: Sendable, Equatable {
    public var name: String
    public var path: String

    public init(name: String, path: String) {
        self.name = name
        self.path = path
    }

    /// Streams for `paths`, each named by its file name without the extension, made safe for file
    /// names (`cams/front door.mkv` → `front-door`) and unique (`clip`, `clip-2`, …). A network
    /// address is named by the last part of its path, else its host and port
    /// (`rtsp://user:pw@10.0.0.7/front` → `front`, `udp://127.0.0.1:5000` → `127.0.0.1-5000`): never
    /// by its credentials.
    public static func named(_ paths: [String]) -> [StreamInput] {
        var used: Set<String> = []
        return paths.map { path in
            let stem = StreamURL.looksLikeURL(path) ? urlStem(path) : URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            var base = String(stem.unicodeScalars.map { scalar -> Character in
                CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || "._-".unicodeScalars.contains(scalar) ? Character(scalar) : "-"
            })
            if base.isEmpty || base.hasPrefix(".") { base = "stream" + base }
            var name = base, n = 1
            while used.contains(name) {
                n += 1
                name = "\(base)-\(n)"
            }
            used.insert(name)
            return StreamInput(name: name, path: path)
        }
    }

    /// A network address's name: its path's last part without the extension, else `host-port`;
    /// the user-info and the query are never part of it.
    static func urlStem(_ url: String) -> String {
        let redacted = StreamURL.redact(url)
        let rest = redacted.range(of: "://").map { redacted[$0.upperBound...] } ?? Substring(redacted)
        let address = rest.prefix { $0 != "?" && $0 != "#" }
        var authority = address.prefix { $0 != "/" }
        let parts = address.dropFirst(authority.count).split(separator: "/")
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let last = parts.last {
            let name = URL(fileURLWithPath: String(last)).deletingPathExtension().lastPathComponent
            if !name.isEmpty { return name }
        }
        return authority.replacingOccurrences(of: ":", with: "-")
    }

    /// Largest streams list read (far above any real one).
    public static let maxListBytes: Int64 = 1 << 20

    /// The paths of a streams list (`--inputs FILE`): one per line, as `--input` takes them
    /// (relative to the current folder); blank lines and lines starting with `#` are skipped.
    public static func readList(_ file: String) throws -> [String] {
        let data = try FileCheck.read(file, what: "streams list", maxBytes: maxListBytes)
        guard let text = String(data: data, encoding: .utf8) else {
            throw PipelineError(file: file, line: 1, column: 1, message: "the streams list is not UTF-8 text")
        }
        var paths: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let path = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if path.isEmpty || path.hasPrefix("#") { continue }
            paths.append(path)
        }
        if paths.isEmpty { throw PipelineError(file: file, line: 1, column: 1, message: "the streams list names no input (one path per line)") }
        return paths
    }
}

extension PipelineDocument {
    /// The type of the declaration that lists a pipeline's streams:
    /// `cameras = streams  front=clips/front.mkv  back=clips/back.mkv` (each option a stream's name
    /// and the file it reads). It is not a node: ``takeStreams()`` removes it.
    public static let streamsType = "streams"
    /// Stands for the stream's name in any option value of a multi-stream pipeline (`path=out/{stream}.mp4`).
    public static let streamPlaceholder = "{stream}"

    /// Removes the pipeline's `streams` declaration and returns its streams (nil when it has none).
    public mutating func takeStreams() throws -> [StreamInput]? {
        let lists = declarations.filter { $0.type == Self.streamsType }
        guard let list = lists.first else { return nil }
        if lists.count > 1 {
            throw PipelineError(file: file, line: lists[1].location.line, column: lists[1].location.column,
                                message: "a second 'streams' declaration: list every stream in '\(list.name)'")
        }
        guard !list.options.isEmpty else {
            throw PipelineError(file: file, line: list.location.line, column: list.location.column,
                                message: "'\(list.name) = streams' lists no stream: write NAME=PATH for each (front=clips/front.mkv)")
        }
        declarations.removeAll { $0.type == Self.streamsType }
        connections.removeAll { $0.from.node == list.name || $0.to.node == list.name }
        return list.options.map { StreamInput(name: $0.key, path: $0.value) }
    }

    /// `--output` for several streams: a path with `{stream}` as it is; a folder (ending in `/`, or
    /// one that exists) becomes `FOLDER/{stream}.EXT` with the extension of the sink's own path.
    public func streamOutputPattern(_ output: String, streams: Int) throws -> String {
        if output.contains(Self.streamPlaceholder) { return output }
        var isFolder: ObjCBool = false
        if output.hasSuffix("/") || (FileManager.default.fileExists(atPath: output, isDirectory: &isFolder) && isFolder.boolValue) {
            let sink = declarations.first { $0.type == "encode" || $0.type == "png" }
            let ext = sink?.options.first { $0.key == "path" }.map { URL(fileURLWithPath: $0.value).pathExtension } ?? ""
            let folder = output.hasSuffix("/") ? String(output.dropLast()) : output
            return "\(folder)/\(Self.streamPlaceholder).\(ext.isEmpty ? "mp4" : ext)"
        }
        throw PipelineError(origin: "--output", message: "'\(output)' names one file for \(streams) streams: put \(Self.streamPlaceholder) in it (out/\(Self.streamPlaceholder).mp4) or name a folder (out/)")
    }

    /// What stream `name` of a replicated pipeline runs (``replicate(streams:batch:)``): its copies of
    /// the nodes (`name/NODE`) and the connections between them; its ``videoOutputNode`` and
    /// ``resultsProducers(catalog:)`` are that stream's.
    public func part(ofStream name: String) -> PipelineDocument {
        let prefix = name + "/"
        var part = self
        part.declarations = declarations.filter { $0.name.hasPrefix(prefix) }
        part.connections = connections.filter { $0.from.node.hasPrefix(prefix) && $0.to.node.hasPrefix(prefix) }
        return part
    }

    /// Repeats the whole pipeline once per stream: stream `s` gets a copy of every node, called
    /// `s/NAME`, its `file` source reading the stream's path, `{stream}` in every option value
    /// replaced by `s`, and the same connections (a stream whose path is a network address gets a
    /// `stream` source with `url=` and the source's `--set` options instead). The pipeline must have one `file` source, and each
    /// file it writes must name `{stream}` (one file per stream). ``Pipeline/build(_:catalog:models:)``
    /// then gives the copies of each worker node (a network) one shared worker and one model.
    public mutating func replicate(streams: [StreamInput], batch: Int = 1) throws {
        let sources = declarations.filter { $0.type == "file" }
        guard sources.count == 1, let source = sources.first else {
            throw PipelineError(origin: file, message: "\(streams.count) streams need a pipeline with exactly one 'file' source to repeat per stream; it has \(sources.count)")
        }
        for d in declarations where Self.fileSinkTypes.contains(d.type) {
            guard let path = d.options.first(where: { $0.key == "path" }), !path.value.contains(Self.streamPlaceholder) else { continue }
            let message = "node '\(d.name)' (\(d.type)) would write \(path.value) for each of \(streams.count) streams: put \(Self.streamPlaceholder) in its path (out/\(Self.streamPlaceholder).\(URL(fileURLWithPath: path.value).pathExtension)), or give --output with \(Self.streamPlaceholder) or a folder"
            if let origin = path.origin { throw PipelineError(origin: origin, message: message) }
            throw PipelineError(file: file, line: path.valueLocation.line, column: path.valueLocation.column, message: message)
        }
        var copies: [Declaration] = []
        var links: [Connection] = []
        for stream in streams {
            for d in declarations {
                var copy = d
                copy.name = "\(stream.name)/\(d.name)"
                for i in copy.options.indices {
                    copy.options[i].value = copy.options[i].value.replacingOccurrences(of: Self.streamPlaceholder, with: stream.name)
                }
                if d.name == source.name, StreamURL.looksLikeURL(stream.path) {
                    // A network address: this stream's source is a `stream` node reading it (the
                    // command line's network options are applied to it afterwards); of the file
                    // source's options it keeps those `--set` gave (`--set source.width=640`).
                    copy.type = "stream"
                    copy.options = copy.options.filter { $0.key != "path" && $0.origin?.hasPrefix("--set ") == true }
                        + [Option(key: "url", value: stream.path, location: d.location, valueLocation: d.location, origin: "stream '\(stream.name)'")]
                } else if d.name == source.name {
                    copy.options.removeAll { $0.key == "path" }
                    copy.options.append(Option(key: "path", value: stream.path, location: d.location, valueLocation: d.location, origin: "stream '\(stream.name)'"))
                }
                copies.append(copy)
            }
            for c in connections {
                var link = c
                link.from.node = "\(stream.name)/\(c.from.node)"
                link.to.node = "\(stream.name)/\(c.to.node)"
                links.append(link)
            }
        }
        streamNodeNames = declarations.map(\.name)
        streamNames = streams.map(\.name)
        streamBatch = batch
        declarations = copies
        connections = links
    }
}
