/// What the server answers a request with: a complete response, or a stream it keeps the
/// connection open for (pictures, events).
public enum HTTPReply: Sendable {
    /// A complete response; the connection closes once it is written.
    case complete(HTTPResponse)
    /// `multipart/x-mixed-replace` JPEG pictures of `channel` (see ``HTTPServer/publish(picture:channel:)``),
    /// one part per new picture.
    case pictureStream(channel: String)
    /// The next picture of `channel` as one JPEG response (waits for it up to ``HTTPServer/Options/pictureWait``).
    case nextPicture(channel: String)
    /// Server-Sent Events (`text/event-stream`), beginning with `first`.
    case eventStream(first: [String])
}
