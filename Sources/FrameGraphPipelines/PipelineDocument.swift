/// A parsed pipeline description: node declarations and connections, each with its place in the file.
///
/// The format, one statement per line (`#` at the start of a word starts a comment; inside a word,
/// as in `model=face_landmarker.task#face_detector`, it is part of it):
/// ```
/// # file → resize → encode
/// source = file    path=samples/media/portrait.mp4
/// small  = resize  width=256 height=256 method=area
/// out    = encode  path=out/transcode.mp4 crf=23
///
/// source -> small -> out
/// mask -> blend.mask          # into a named (or numbered) input port
/// ```
/// Values are bare words or "quoted strings" (for spaces, `#` or `=`).
public struct PipelineDocument: Sendable {
    /// Where something was written.
    public struct Location: Sendable, Equatable {
        public var line: Int
        public var column: Int
    }

    /// `name = type key=value …`
    public struct Declaration: Sendable {
        public var name: String
        public var type: String
        public var options: [Option]
        public var location: Location
        public var typeLocation: Location
    }

    /// One `key=value` of a declaration.
    public struct Option: Sendable {
        public var key: String
        public var value: String
        public var location: Location
        public var valueLocation: Location
        /// Where the value came from when not from the file (`--set net.ms=20`, `--input`), so an
        /// error about it points at the command line rather than at the declaration.
        public var origin: String?
    }

    /// One end of a connection: a node, and on the receiving side optionally a port.
    public struct Endpoint: Sendable {
        public var node: String
        public var port: String?
        public var location: Location
    }

    /// `from -> to`
    public struct Connection: Sendable {
        public var from: Endpoint
        public var to: Endpoint
    }

    /// The file name used in error messages.
    public var file: String
    public var declarations: [Declaration] = []
    public var connections: [Connection] = []
    /// After ``replicate(streams:batch:)``: the streams, in order (empty for a one-stream pipeline).
    /// Stream `s`'s copy of node `n` is called `s/n`.
    public var streamNames: [String] = []
    /// After ``replicate(streams:batch:)``: the names of the nodes as declared (each repeated per stream).
    public var streamNodeNames: [String] = []
    /// After ``replicate(streams:batch:)``: most frames of different streams a shared worker runs in one turn.
    public var streamBatch = 1

    /// Changes node `name` into a node of `type`, dropping the options it had (used by `--camera`,
    /// which turns a `file` source into a `camera` source). False when there is no such node.
    public mutating func retype(node name: String, to type: String) -> Bool {
        guard let i = declarations.firstIndex(where: { $0.name == name }) else { return false }
        declarations[i].type = type
        declarations[i].options.removeAll()
        return true
    }

    /// Sets `key=value` on node `name`, replacing an option given in the file (used by `--set`,
    /// `--input` and `--output`).
    public mutating func override(node name: String, key: String, value: String, origin: String? = nil) -> Bool {
        guard let i = declarations.firstIndex(where: { $0.name == name }) else { return false }
        let location = declarations[i].location
        declarations[i].options.removeAll { $0.key == key }
        declarations[i].options.append(Option(key: key, value: value, location: location, valueLocation: location, origin: origin))
        return true
    }
}
