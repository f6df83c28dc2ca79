import FrameGraph

/// How ``MediaReader`` opens a network stream instead of a file: the address, the transport and the
/// bounds on every blocking call and buffer (a hostile or broken server can cost at most this much
/// time and memory).
///
/// ```swift
/// let input = NetworkInput(url: try StreamURL("rtsp://127.0.0.1:8554/cam"), shouldStop: { false })
/// let reader = try MediaReader(path: input.url.redacted, options: .init(network: input))
/// ```
public struct NetworkInput: Sendable {
    /// RTSP's transport for the media.
    public enum Transport: String, Sendable, CaseIterable {
        /// Interleaved in the RTSP connection (default: passes firewalls and NAT, no loss).
        case tcp
        /// RTP over UDP (lower latency on a clean network; packets can be lost).
        case udp
    }

    public var url: StreamURL
    public var transport: Transport
    /// An SDP file describing an `rtp://`/`udp://` session (opened with the sdp demuxer), or nil.
    public var sdpFile: String?
    /// Longest wait for connecting and reading the stream's header, in seconds.
    public var openTimeout: Double
    /// Longest wait for the next packet, in seconds: past it the stream counts as stalled.
    public var readTimeout: Double
    /// Most bytes read to find the streams, and most microseconds of media analysed for it.
    public var probeBytes: Int
    public var analyzeMicroseconds: Int
    /// Most bytes accepted between two packets (a frame larger than this ends the connection).
    public var maxPacketBytes: Int64
    /// Largest picture accepted, in pixels (a claimed 65535×65535 is refused before any allocation).
    public var maxPixels: Int
    /// Frames are scaled to this size when given (after a reconnect, the first connection's size).
    public var outputSize: (width: Int, height: Int)?
    /// Frames are converted to this layout when given (after a reconnect, the first connection's; a
    /// size declared before the first connection, yuv420p), so the graph downstream never sees it change.
    public var outputFormat: PixelFormat?
    /// Polled during every blocking call: true stops the call (the run is stopping).
    public var shouldStop: @Sendable () -> Bool

    public init(url: StreamURL, transport: Transport = .tcp, sdpFile: String? = nil, openTimeout: Double = 10, readTimeout: Double = 5,
                probeBytes: Int = 5 << 20, analyzeMicroseconds: Int = 5_000_000, maxPacketBytes: Int64 = 64 << 20,
                maxPixels: Int = 8192 * 8192, outputSize: (width: Int, height: Int)? = nil, shouldStop: @escaping @Sendable () -> Bool) {
        self.url = url
        self.transport = transport
        self.sdpFile = sdpFile
        self.openTimeout = openTimeout
        self.readTimeout = readTimeout
        self.probeBytes = probeBytes
        self.analyzeMicroseconds = analyzeMicroseconds
        self.maxPacketBytes = maxPacketBytes
        self.maxPixels = maxPixels
        self.outputSize = outputSize
        self.shouldStop = shouldStop
    }
}

/// A network stream stopped delivering: the connection failed, ended, stalled or sent something
/// over the bounds. One line, credentials redacted.
public struct StreamLost: Error, Sendable, CustomStringConvertible {
    /// Why, in the counters' terms.
    public enum Kind: String, Sendable {
        /// No packet within the read timeout.
        case stall
        /// The connection failed, ended, or the data was unusable.
        case drop
    }

    public let url: String
    public let kind: Kind
    public let reason: String

    public init(url: String, kind: Kind, reason: String) {
        self.url = url
        self.kind = kind
        self.reason = reason
    }
    public var description: String { "\(url): \(reason)" }
}
