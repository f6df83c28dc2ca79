import FrameGraph
import Testing

/// Stream addresses: which are read, and that credentials never survive into a printed line.
struct StreamURLTests {
    @Test func credentialsAreRedactedEverywhereInAText() {
        #expect(StreamURL.redact("rtsp://admin:hunter2@10.0.0.5:554/live") == "rtsp://***@10.0.0.5:554/live")
        #expect(StreamURL.redact("open 'rtsp://a:b@h/x' and http://u:p@w@host/y?x=1 failed")
                == "open 'rtsp://***@h/x' and http://***@host/y?x=1 failed")
        #expect(StreamURL.redact("srt://h:9000?mode=caller&passphrase=hunter2hunter2&latency=200") == "srt://h:9000?mode=caller&passphrase=***&latency=200")
        #expect(StreamURL.redact("https://cdn/x.m3u8?token=abc#t") == "https://cdn/x.m3u8?token=***#t")
        #expect(StreamURL.redact("no address here") == "no address here")
        #expect(StreamURL.redact("rtsp://host/cam") == "rtsp://host/cam")
    }

    @Test func anAddressKeepsItsCredentialsApart() throws {
        let url = try StreamURL("rtsp://admin:hunter2@10.0.0.5/live")
        #expect(url.scheme == .rtsp && url.hasCredentials && url.redacted == "rtsp://***@10.0.0.5/live" && "\(url)" == url.redacted)
        #expect(url.full == "rtsp://admin:hunter2@10.0.0.5/live")
        // From a file: put in, percent-encoded, and still redacted.
        let filed = try StreamURL("rtsp://cam.local/live", credentials: "viewer:p@ss word\n")
        #expect(filed.full == "rtsp://viewer:p%40ss%20word@cam.local/live" && filed.redacted == "rtsp://***@cam.local/live")
        #expect(try StreamURL("srt://127.0.0.1:9000").hasCredentials == false)
    }

    @Test func onlyStreamSchemesAreAccepted() {
        for bad in ["file:///etc/passwd", "concat://a|b", "tcp://h:1", "ftp://h/x", "rtsp://", "rtsp://h/x y", String(repeating: "a", count: 5000)] {
            #expect(throws: StreamURL.Invalid.self, "\(bad.prefix(30))") { try StreamURL(bad) }
        }
        for good in ["rtsp://h/x", "RTSPS://h/x", "http://h/x.ts", "https://h/x.m3u8", "srt://h:1", "udp://@:5000", "rtp://239.0.0.1:5004", "rtmp://h/live/k"] {
            #expect((try? StreamURL(good)) != nil, "\(good)")
        }
        do {
            _ = try StreamURL("ftp://u:hunter2@h/x")
            Issue.record("ftp:// was accepted")
        } catch {
            #expect(!"\(error)".contains("hunter2") && "\(error)".contains("***@h"), "\(error)")
        }
    }
}
