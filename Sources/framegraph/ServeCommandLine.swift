import Foundation
import FrameGraph
import FrameGraphServe

/// `--serve ADDR:PORT` and its companions on `framegraph run`: where to listen, the token (required
/// beyond loopback; read from a file by preference, never printed), how many clients, how long to
/// keep serving the final figures after the run.
struct ServeCommandLine {
    let options: HTTPServer.Options
    /// Seconds to keep serving after the run (`--serve-linger`).
    let linger: Double
    /// Most pictures per second the picture stream gets (`--serve-fps`).
    let pictureRate: Double

    /// nil without `--serve`. Throws the usage error for a bad address, a missing token off
    /// loopback, or an unreadable token file.
    static func parse(_ arguments: Arguments) throws -> ServeCommandLine? {
        let tokenGiven = arguments.value("serve-token") != nil || arguments.value("serve-token-file") != nil
        guard let text = arguments.value("serve") else {
            if tokenGiven || arguments.value("serve-clients") != nil || arguments.value("serve-linger") != nil {
                throw Arguments.UsageError(description: "--serve-token, --serve-token-file, --serve-clients and --serve-linger go with --serve ADDRESS:PORT")
            }
            return nil
        }
        do {
            let address = try ServeAddress(parsing: text)
            var token: AccessToken?
            if arguments.value("serve-token") != nil && arguments.value("serve-token-file") != nil {
                throw Arguments.UsageError(description: "give --serve-token or --serve-token-file, not both")
            }
            if let inline = arguments.value("serve-token") { token = try AccessToken(inline) }
            if let file = arguments.value("serve-token-file") {
                guard let data = FileManager.default.contents(atPath: file), data.count <= 4096 else {
                    let reason = FileManager.default.fileExists(atPath: file) ? "unreadable or larger than 4 KiB" : "no such file"
                    throw ServeError.tokenFile(path: file, reason: reason)
                }
                token = try AccessToken(String(decoding: data, as: UTF8.self))
            }
            if token == nil && !address.isLoopback { throw ServeError.tokenRequired(address: address.description) }
            var options = HTTPServer.Options(address: address, token: token)
            if let clients = arguments.number("serve-clients") { options.maxClients = Int(clients) }
            return ServeCommandLine(options: options, linger: arguments.number("serve-linger") ?? 0,
                                    pictureRate: arguments.number("serve-fps") ?? RunMonitor.defaultPictureRate)
        } catch let error as ServeError {
            throw Arguments.UsageError(description: error.description)
        }
    }
}
