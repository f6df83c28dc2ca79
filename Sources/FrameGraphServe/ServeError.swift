/// Why `--serve` cannot start, in one line.
public enum ServeError: Error, Equatable, CustomStringConvertible {
    /// The address is not ADDR:PORT or PORT.
    case badAddress(String)
    /// A non-loopback address without a token.
    case tokenRequired(address: String)
    /// The token is shorter than 16 characters.
    case tokenTooShort
    /// The token holds spaces, quotes, commas, semicolons, backslashes or non-ASCII characters.
    case tokenCharacters
    /// The token file could not be read.
    case tokenFile(path: String, reason: String)
    /// The token was given both inline and in a file.
    case tokenBoth
    /// The socket could not be opened, bound or listened on.
    case cannotListen(String)

    public var description: String {
        switch self {
        case .badAddress(let text):
            return "--serve expects PORT, IPV4:PORT or [IPV6]:PORT (e.g. 8080, 127.0.0.1:8080 or [::1]:8080), got '\(text.prefix(64))'"
        case .tokenRequired(let address):
            return "--serve \(address) listens beyond this machine: give --serve-token-file FILE (or --serve-token TOKEN) so that only those who have it can watch"
        case .tokenTooShort: return "the serve token must be at least 16 characters"
        case .tokenCharacters: return "the serve token must be printable ASCII without spaces, quotes, commas, semicolons or backslashes"
        case .tokenFile(let path, let reason): return "cannot read the serve token from \(path): \(reason)"
        case .tokenBoth: return "give --serve-token or --serve-token-file, not both"
        case .cannotListen(let why): return "cannot serve: \(why)"
        }
    }
}
