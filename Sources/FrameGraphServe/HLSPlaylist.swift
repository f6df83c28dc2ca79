import Foundation

/// The live HLS playlist of a run whose encode sink writes MPEG-TS segments (`encode
/// path=live/cam.ts segment=4s`): the newest finished segments, each served as soon as it is
/// renamed into place (RFC 8216, version 3). While the run goes it is a live playlist (the window
/// slides, the media sequence counts the segments that left it); when the run has ended it says
/// `#EXT-X-ENDLIST`.
///
/// ```swift
/// HLSPlaylist.render([.init(file: "2026-12-04T10-00-00.ts", seconds: 4, sequence: 0)], ended: false)
/// ```
public enum HLSPlaylist {
    /// One finished segment: its file name in the segments' folder, its length, its place in the run's series.
    public struct Segment: Sendable, Equatable {
        public var file: String
        public var seconds: Double
        public var sequence: Int
        public init(file: String, seconds: Double, sequence: Int) {
            self.file = file
            self.seconds = seconds
            self.sequence = sequence
        }
    }

    /// Segments a live playlist lists (the newest): a player starts three segments from its end.
    public static let window = 6

    /// The playlist's media type.
    public static let contentType = "application/vnd.apple.mpegurl"

    /// The playlist text listing the newest ``window`` of `segments` (all of them once `ended`).
    public static func render(_ segments: [Segment], ended: Bool) -> String {
        let listed = ended ? segments : Array(segments.suffix(window))
        // Every EXTINF rounded to the nearest integer is at most the target duration (RFC 8216 4.3.3.1).
        let target = max(1, Int((listed.map(\.seconds).max() ?? 1).rounded()))
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:\(target)\n#EXT-X-MEDIA-SEQUENCE:\(listed.first?.sequence ?? 0)\n"
        for s in listed { text += String(format: "#EXTINF:%.3f,\n", s.seconds) + s.file + "\n" }
        if ended { text += "#EXT-X-ENDLIST\n" }
        return text
    }
}
