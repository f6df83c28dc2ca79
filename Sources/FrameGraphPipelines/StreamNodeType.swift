import FFmpegSupport
import FrameGraph
import FrameGraphMedia

extension NodeType {
    /// `stream`: a live network stream through libavformat (see ``StreamSource``), read only when
    /// allowed (`network=allow`, which the CLI's `--allow-network` sets).
    ///
    /// ```
    /// cam = stream url=rtsp://127.0.0.1:8554/cam network=allow transport=tcp timeout=5 on-loss=no-signal
    /// ```
    public static let stream = NodeType(
        name: "stream", role: .source,
        summary: "a live network stream (rtsp, http(s) MPEG-TS/MJPEG/HLS, srt, rtp/udp with sdp=, rtmp): opt-in with network=allow; reconnects; always live",
        options: StreamSource.OptionSpecs.all
    ) { name, o in
        typealias S = StreamSource.OptionSpecs
        let url = try o.required(S.url)
        // Refused before anything opens: the default stays local files only.
        guard try o.value(S.network) == "allow" else { throw StreamSource.refusal(node: name, url: url) }
        var options = StreamSource.Options(url: url, allowNetwork: true)
        options.transport = try o.value(S.transport)
        options.credentialsFile = try o.inputPath(S.credentials)
        options.sdpFile = try o.inputPath(S.sdp)
        options.timeout = try o.value(S.timeout)
        options.openTimeout = try o.value(S.openTimeout)
        options.reconnect = try o.value(S.reconnect)
        options.backoff = try o.value(S.backoff)
        options.backoffMax = try o.value(S.backoffMax)
        options.onLoss = try o.value(S.onLoss)
        options.width = try o.value(S.width)
        options.height = try o.value(S.height)
        switch (options.width, options.height) {
        case (nil, nil): break
        case let (w?, h?) where w % 2 == 0 && h % 2 == 0: break
        case (_?, _?): throw GraphError.invalidOption(node: name, option: "width", reason: "the declared size must be even in both directions (yuv420p frames)")
        default: throw GraphError.invalidOption(node: name, option: options.width == nil ? "width" : "height", reason: "give width= and height= together (the declared picture size)")
        }
        options.threads = try o.value(S.threads)
        options.maxPacketMiB = try o.value(S.maxPacketMiB)
        options.probeMiB = try o.value(S.probeMiB)
        options.recordPath = try o.value(S.record)
        options.recordSegments = try o.segmentOptions(seconds: S.recordSegment, frames: S.recordSegmentFrames, keep: S.keep, keepBytes: S.keepBytes,
                                                      segmented: options.recordPath != nil)
        return StreamSource(name: name, options: options)
    }
}
