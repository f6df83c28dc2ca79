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
        let settings: ServeSettings
        do {
            settings = try ServeSettings(address: text, token: arguments.value("serve-token"), tokenFile: arguments.value("serve-token-file"),
                                         clients: arguments.number("serve-clients").map { Int($0) }, pictureRate: arguments.number("serve-fps"))
        } catch {
            throw Arguments.UsageError(description: describe(error))
        }
        return ServeCommandLine(options: settings.options, linger: arguments.number("serve-linger") ?? 0, pictureRate: settings.pictureRate)
    }
}
