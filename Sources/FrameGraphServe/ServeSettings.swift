import Foundation

/// What `--serve ADDRESS:PORT` and its companions ask for, checked: where to listen, the token
/// (required beyond loopback; read from a file by preference, never printed), how many clients, the
/// picture stream's rate. The CLI fills it from its arguments, the C library (Python's
/// `fg.run(serve=…)`) from its open request: one reading of the same words.
///
/// ```swift
/// let settings = try ServeSettings(address: "127.0.0.1:0", tokenFile: "token.txt", clients: 8)
/// let monitor = try RunMonitor(runner: runner, options: settings.options, title: "run", pictureRate: settings.pictureRate, …)
/// ```
public struct ServeSettings: Sendable {
    public let options: HTTPServer.Options
    /// Most pictures per second each watched node's picture stream gets (`--serve-fps`, default ``RunMonitor/defaultPictureRate``).
    public let pictureRate: Double

    /// Throws for a bad address, both token forms, a missing token off loopback, or an unreadable
    /// token file (at most 4 KiB).
    public init(address text: String, token inline: String? = nil, tokenFile: String? = nil, clients: Int? = nil,
                pictureRate: Double? = nil) throws(ServeError) {
        let address = try ServeAddress(parsing: text)
        if inline != nil && tokenFile != nil { throw .tokenBoth }
        var token: AccessToken?
        if let inline { token = try AccessToken(inline) }
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile), data.count <= 4096 else {
                let reason = FileManager.default.fileExists(atPath: tokenFile) ? "unreadable or larger than 4 KiB" : "no such file"
                throw .tokenFile(path: tokenFile, reason: reason)
            }
            token = try AccessToken(String(decoding: data, as: UTF8.self))
        }
        if token == nil && !address.isLoopback { throw .tokenRequired(address: address.description) }
        var options = HTTPServer.Options(address: address, token: token)
        if let clients { options.maxClients = clients }
        self.options = options
        self.pictureRate = pictureRate ?? RunMonitor.defaultPictureRate
    }
}
