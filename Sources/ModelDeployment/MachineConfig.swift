import Foundation

/// A machine's deployment settings (`machine.json`): where its models come from, which publisher it
/// trusts, what it declares about itself, and how it may download.
///
/// Found at `--machine-config FILE`, else `$FRAMEGRAPH_MACHINE_CONFIG`, else
/// `$XDG_CONFIG_HOME/framegraph/machine.json` (`~/.config/framegraph/machine.json`).
public struct MachineConfig: Codable, Sendable, Equatable {
    public static let formatName = "framegraph-machine-1"
    public var format = MachineConfig.formatName
    /// The deploy tree's base URL (`https://models.example.com/deploy/`).
    public var server: String
    /// The publisher's Ed25519 public key, 64 hex digits (`framegraph deploy key new` prints it).
    public var publisherKey: String
    /// The label targeting rules match with `--device-class`.
    public var deviceClass: String?
    /// PEM certificate authorities to trust for the server and the key service (relative to this
    /// file's folder); default: the system's.
    public var caFile: String?
    /// Where encrypted models' team keys come from (https only).
    public var keyService: KeyService?
    /// Whether this machine's network is metered, when NetworkManager cannot say (default false).
    public var meteredNetwork: Bool?
    /// Download over a metered network (default false, as ML Kit's conditions).
    public var allowMeteredDownloads: Bool?
    /// Download updates while a pipeline runs (default true); otherwise only `framegraph models pull` does.
    public var allowBackgroundDownloads: Bool?
    /// The model cache (default `$FRAMEGRAPH_MODEL_CACHE`, else `$XDG_CACHE_HOME/framegraph/models`).
    public var cacheDir: String?
    /// Per-transfer stall timeout and connection timeout, seconds (default 20).
    public var timeoutSeconds: Double?
    /// Attempts per download (default 3), with backoff 0.5 s, 1 s, 2 s …
    public var attempts: Int?
    /// Slower than this over `timeoutSeconds` ends a download attempt, bytes a second (default 1024).
    public var minimumBytesPerSecond: Int?
    /// Most seconds one request may take, connecting to last byte (default 300).
    public var requestDeadlineSeconds: Double?
    /// Most seconds `framegraph models pull` may take for one collection (default 900).
    public var pullDeadlineSeconds: Double?
    /// Most seconds a run waits for a collection it has never downloaded before giving up to its
    /// fallback (default 30); the download goes on in the background.
    public var firstUseDeadlineSeconds: Double?

    /// Limits of the current use (not in the file): an overall deadline and a cancellation check
    /// (Ctrl-C), set by whoever downloads (the model service, `models pull`).
    public var session = DownloadSession()

    public struct KeyService: Codable, Sendable, Equatable {
        /// Base URL; a key is fetched from URL + key id.
        public var url: String
        /// Sent as a bearer token.
        public var token: String
        public init(url: String, token: String) {
            self.url = url
            self.token = token
        }
    }

    /// The folder of the file it was read from (relative paths are resolved against it).
    public var folder: String?

    enum CodingKeys: String, CodingKey {
        case format, server, publisherKey, deviceClass, caFile, keyService, meteredNetwork, allowMeteredDownloads, allowBackgroundDownloads,
             cacheDir, timeoutSeconds, attempts, minimumBytesPerSecond, requestDeadlineSeconds, pullDeadlineSeconds, firstUseDeadlineSeconds
    }

    public init(server: String, publisherKey: String, deviceClass: String? = nil, caFile: String? = nil, keyService: KeyService? = nil,
                cacheDir: String? = nil) {
        self.server = server
        self.publisherKey = publisherKey
        self.deviceClass = deviceClass
        self.caFile = caFile
        self.keyService = keyService
        self.cacheDir = cacheDir
    }

    /// The config file to use: `explicit`, else the environment's, else the XDG location.
    public static func location(explicit: String?, environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit { return explicit }
        if let path = env["FRAMEGRAPH_MACHINE_CONFIG"], !path.isEmpty { return path }
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.config")
        return base + "/framegraph/machine.json"
    }

    /// Reads and checks a config file.
    public static func load(path: String) throws -> MachineConfig {
        try parse(try JSONFile.read(path, maxBytes: 64 << 10), path: path)
    }

    /// Parses and checks a config's bytes; `path` names it in errors and anchors relative paths.
    public static func parse(_ data: Data, path: String) throws -> MachineConfig {
        guard data.count <= 64 << 10 else { throw DeploymentError.invalidFile(path: path, reason: "over 64 KiB") }
        var c = try JSONFile.decode(MachineConfig.self, from: data, name: path)
        func bad(_ reason: String) -> DeploymentError { .invalidFile(path: path, reason: reason) }
        guard c.format == formatName else { throw bad("field 'format' is '\(c.format.prefix(40))', expected '\(formatName)'") }
        guard c.server.hasPrefix("https://") || c.server.hasPrefix("http://") else { throw bad("field 'server' must be an http:// or https:// URL") }
        if !c.server.hasSuffix("/") { c.server += "/" }
        guard Hex.isHex(c.publisherKey, bytes: 32) else { throw bad("field 'publisherKey' is not 64 hex digits (the publisher's Ed25519 public key)") }
        if let d = c.deviceClass, !ArchiveManifest.isSafeName(d) { throw bad("field 'deviceClass' is not a safe name") }
        if let k = c.keyService {
            // The bearer token and the key would cross the network in clear over http.
            guard k.url.hasPrefix("https://") else { throw bad("field 'keyService.url' must be an https:// URL (the token and the team key travel on it)") }
            guard !k.token.isEmpty, k.token.utf8.count <= 512, !k.token.contains(where: { $0.isNewline || $0 == " " }) else {
                throw bad("field 'keyService.token' must be one word of at most 512 bytes")
            }
        }
        if let t = c.timeoutSeconds, !(1...600).contains(t) { throw bad("field 'timeoutSeconds' must be within 1 … 600") }
        if let a = c.attempts, !(1...10).contains(a) { throw bad("field 'attempts' must be within 1 … 10") }
        if let r = c.minimumBytesPerSecond, !(1...1_000_000_000).contains(r) { throw bad("field 'minimumBytesPerSecond' must be within 1 … 1000000000") }
        for (name, value) in [("requestDeadlineSeconds", c.requestDeadlineSeconds), ("pullDeadlineSeconds", c.pullDeadlineSeconds),
                              ("firstUseDeadlineSeconds", c.firstUseDeadlineSeconds)] {
            if let v = value, !(v.isFinite && v >= 1 && v <= 604_800) { throw bad("field '\(name)' must be within 1 … 604800 seconds") }
        }
        c.folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return c
    }

    func resolved(_ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: folder ?? ".").appendingPathComponent(path).path
    }

    /// The CA file, resolved against the config's folder.
    public var caPath: String? { caFile.map(resolved) }

    /// The cache folder in force.
    public var cachePath: String {
        if let cacheDir { return resolved(cacheDir) }
        return ModelCache.defaultLocation()
    }

    var timeout: Double { timeoutSeconds ?? 20 }
    var downloadAttempts: Int { attempts ?? 3 }

    /// The HTTP(S) client these settings make (CA file, timeouts, attempts).
    public var httpClient: HTTPClient {
        HTTPClient(caFile: caPath, timeout: timeout, attempts: downloadAttempts, minimumBytesPerSecond: minimumBytesPerSecond ?? 1024,
                   requestDeadline: requestDeadlineSeconds ?? 300, deadline: session.deadline, isCancelled: session.isCancelled)
    }

    /// The config with an overall download deadline `seconds` from now and a cancellation check.
    public func limited(seconds: Double?, isCancelled: @escaping @Sendable () -> Bool) -> MachineConfig {
        var c = self
        c.session = DownloadSession(deadline: seconds.map { Date().addingTimeInterval($0) }, isCancelled: isCancelled)
        return c
    }

    /// The team key `id`: from this machine's key store, else fetched from the key service once
    /// (`ModelError.keyFetch` when it cannot be).
    /// `opens` checks the key against the archive it is for (see ``KeyStore/key(id:config:client:opens:)``).
    public func teamKey(id: String, opens: ((TeamKey) -> Bool)? = nil) throws -> TeamKey {
        let cache = ModelCache(root: cachePath)
        try cache.prepare()  // the key store lives in the cache folder: make it on first use
        return try KeyStore(path: cache.keystorePath).key(id: id, config: self, client: httpClient, opens: opens)
    }
}

/// What bounds the downloads of one use of a machine config: an overall deadline and a cancellation
/// check (not part of the file; equal to any other, so configs compare by their settings).
public struct DownloadSession: Sendable, Equatable {
    public var deadline: Date?
    public var isCancelled: @Sendable () -> Bool

    public init(deadline: Date? = nil, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.deadline = deadline
        self.isCancelled = isCancelled
    }

    public static func == (a: DownloadSession, b: DownloadSession) -> Bool { true }
}
