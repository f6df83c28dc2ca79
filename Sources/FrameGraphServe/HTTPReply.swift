/// What the server answers a request with: a complete response, or a stream it keeps the
/// connection open for (pictures, events).
public enum HTTPReply: Sendable {
    /// A complete response; the connection closes once it is written.
    case complete(HTTPResponse)
    /// `multipart/x-mixed-replace` JPEG pictures, one part per new picture.
    case pictureStream
    /// The next picture as one JPEG response (waits for it up to ``HTTPServer/Options/pictureWait``).
    case nextPicture
    /// Server-Sent Events (`text/event-stream`), beginning with `first`.
    case eventStream(first: [String])
}
