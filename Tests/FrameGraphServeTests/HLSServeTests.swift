import Foundation
import FrameGraph
@testable import FrameGraphServe
import Testing
import TestSupport

/// HLS from a served run whose encode sink cuts MPEG-TS segments: the playlist lists each segment
/// once it is finished (while the run goes, without an end; after it, with `#EXT-X-ENDLIST`), and
/// every segment it lists is served and decodes with its frames (ffprobe).
@Suite(.serialized, .enabled(if: Curl.path != nil, "needs curl (scripts/install-deps.sh installs it)"))
struct HLSServeTests {
    @Test func playlistText() {
        let segments = (0..<8).map { HLSPlaylist.Segment(file: "s\($0).ts", seconds: $0 == 7 ? 4.4 : 4, sequence: $0 + 3) }
        let live = HLSPlaylist.render(segments, ended: false)
        // The newest six, numbered from the first of them (3 + 2); 4.4 s rounds to a target of 4.
        #expect(live.hasPrefix("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:5\n#EXTINF:4.000,\ns2.ts\n"))
        #expect(live.components(separatedBy: "#EXTINF").count - 1 == 6 && !live.contains("ENDLIST"))
        let ended = HLSPlaylist.render(segments, ended: true)
        #expect(ended.contains("#EXT-X-MEDIA-SEQUENCE:3\n") && ended.hasSuffix("#EXTINF:4.400,\ns7.ts\n#EXT-X-ENDLIST\n"))
        #expect(HLSPlaylist.render([], ended: false).contains("#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n"))
    }

    static func segmentNames(_ playlist: String) -> [String] {
        playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    @Test(.enabled(if: ffprobePath != nil, "needs ffprobe"))
    func segmentsAreServedAsTheyAreWritten() throws {
        let folder = TestEnvironment.scratch("served-hls")
        let stats = folder.appendingPathComponent("stats.json").path
        let run = try ServedCLIRun(["run", "-e", "pattern width=320 height=240 frames=150 name=cam -> encode path=\(folder.path)/live/cam.ts segment-frames=30 name=out",
                                    "--mode", "live", "--serve", "127.0.0.1:0", "--serve-linger", "30", "--quiet", "--stats", stats,
                                    "--serve-token", "hls-test-token-0123456789"])
        defer { _ = run.wait(timeout: 1) }
        let base = try run.base()
        let auth = ["-H", "Authorization: Bearer hls-test-token-0123456789"]
        // While the run goes: the first finished segment appears (a second of frames at 30 fps), no end yet.
        var during = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && !FileManager.default.fileExists(atPath: stats) {
            let r = try Curl.fetch("\(base)/hls/index.m3u8", auth)
            #expect(r.status == 200)
            if !Self.segmentNames(r.text).isEmpty { during = r.text; break }
            usleep(100_000)
        }
        #expect(!Self.segmentNames(during).isEmpty && !during.contains("#EXT-X-ENDLIST"), "\(during)")
        #expect(try Curl.fetch("\(base)/hls/index.m3u8").status == 401, "the token rules hold for HLS")
        while Date() < deadline.addingTimeInterval(20) && !FileManager.default.fileExists(atPath: stats) { usleep(100_000) }
        // After the run: all five segments (150 frames / 30), each 1 s, and the end.
        let after = try Curl.fetch("\(base)/hls/index.m3u8", auth)
        #expect(after.status == 200)
        let names = Self.segmentNames(after.text)
        #expect(names.count == 5, "\(after.text)")
        #expect(after.text.contains("#EXT-X-MEDIA-SEQUENCE:0\n") && after.text.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(after.text.components(separatedBy: "#EXTINF:1.000,").count - 1 == 5, "\(after.text)")
        for name in names {
            let file = folder.appendingPathComponent("got-\(name)")
            let got = try Curl.download("\(base)/hls/\(name)", to: file, auth)
            #expect(got.status == 200)
            let probe = try runCommand(try #require(ffprobePath), ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                                   "format=format_name:stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", file.path])
            #expect(probe.stdout.contains("h264,320,240,30") && probe.stdout.contains("mpegts"), "\(name): \(probe.stdout)\(probe.stderr)")
        }
        // Nothing but the listed segments: no other file, no path out of the folder.
        #expect(try Curl.fetch("\(base)/hls/index.jsonl", auth).status == 404)
        #expect(try Curl.fetch("\(base)/hls/..%2Fstats.json", auth).status == 404)
        #expect(try Curl.fetch("\(base)/stop", ["-X", "POST"] + auth).status == 200)
        #expect(run.wait() == 0)
    }

    @Test func aRunWithoutSegmentsSaysHowToGetThem() throws {
        let run = try ServedCLIRun(["run", "-e", "pattern width=320 height=240 frames=60 -> null", "--mode", "live", "--serve", "0", "--quiet"])
        defer { _ = run.wait(timeout: 1) }
        let r = try Curl.fetch("\(try run.base())/hls/index.m3u8")
        #expect(r.status == 404 && r.text.contains("segment="), "\(r.text)")
        #expect(run.wait() == 0)
    }
}
