import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// The picture of any node, chosen by name (`?node=NAME` on `/picture.jpg`, `/video.mjpg` and the
/// dashboard), from `framegraph run … --serve` as a user runs it: each node's picture has that
/// node's size, an unknown node or one without pictures is a 404 naming the choices, and the page
/// lists the nodes as plain links (no JavaScript needed).
@Suite(.serialized, .enabled(if: Curl.path != nil, "needs curl (scripts/install-deps.sh installs it)"))
struct NodePictureTests {
    /// Width and height of a JPEG, as FFmpeg decodes it.
    static func size(_ jpeg: Data, _ name: String) throws -> (Int, Int) {
        let file = TestEnvironment.scratch("node-picture-\(name)").appendingPathComponent("p.jpg")
        try jpeg.write(to: file)
        let frame = try #require(try MediaReader(path: file.path).nextFrame())
        return (frame.width, frame.height)
    }

    /// The first JPEG part of a `multipart/x-mixed-replace` body.
    static func firstPart(_ body: Data) -> Data? {
        let bytes = [UInt8](body)
        guard let start = (0..<max(0, bytes.count - 1)).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 }),
              let end = (start..<max(start, bytes.count - 1)).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD9 }) else { return nil }
        return Data(bytes[start...end + 1])
    }

    @Test func eachNodesPictureHasItsSize() throws {
        let folder = TestEnvironment.scratch("node-pictures")
        let run = try ServedCLIRun(["run", "-e", "pattern width=320 height=240 frames=240 name=cam -> resize width=96 height=64 name=small -> null name=out",
                                    "--mode", "live", "--serve", "127.0.0.1:0", "--quiet"])
        defer { _ = run.wait(timeout: 1) }
        let base = try run.base()
        // Without ?node=: the output's picture (what reaches the sink: the resize's 96x64).
        let output = try Curl.download("\(base)/picture.jpg", to: folder.appendingPathComponent("out.jpg"))
        #expect(output.status == 200)
        #expect(try Self.size(output.bytes, "out") == (96, 64))
        // The source's picture by name: 320x240; the resize's by name: the output's.
        let cam = try Curl.download("\(base)/picture.jpg?node=cam", to: folder.appendingPathComponent("cam.jpg"))
        #expect(cam.status == 200)
        #expect(try Self.size(cam.bytes, "cam") == (320, 240))
        let small = try Curl.download("\(base)/picture.jpg?node=small", to: folder.appendingPathComponent("small.jpg"))
        #expect(try Self.size(small.bytes, "small") == (96, 64))
        // The MJPEG stream of a node: its parts are that node's pictures.
        let stream = try Curl.download("\(base)/video.mjpg?node=cam", to: folder.appendingPathComponent("cam.mjpg"), maxTime: 2)
        let part = try #require(Self.firstPart(stream.bytes), "no JPEG in \(stream.bytes.count) bytes")
        #expect(try Self.size(part, "stream") == (320, 240))
        // An unknown node, and a sink (no pictures out): 404 with one line naming the choices.
        let unknown = try Curl.fetch("\(base)/picture.jpg?node=nope")
        #expect(unknown.status == 404)
        #expect(unknown.text.contains("no node 'nope'") && unknown.text.contains("cam, small"), "\(unknown.text)")
        #expect(unknown.text.split(separator: "\n").count == 1)
        #expect(try Curl.fetch("\(base)/video.mjpg?node=out", maxTime: 3).status == 404)
        #expect(try Curl.fetch("\(base)/?node=nope").status == 404)
        // The page: a plain link per node; with ?node= it shows that node's picture.
        let page = try Curl.fetch("\(base)/")
        #expect(page.text.contains("<a href=\"/?node=cam\">cam</a>") && page.text.contains("small (output)"), "\(page.text)")
        let camPage = try Curl.fetch("\(base)/?node=cam")
        #expect(camPage.status == 200)
        #expect(camPage.text.contains("<img id=\"picture\" src=\"/picture.jpg?node=cam\" data-stream=\"/video.mjpg?node=cam\""))
        #expect(camPage.text.contains("<a href=\"/\">small (output)</a>"))
        #expect(run.wait() == 0)
    }
}
