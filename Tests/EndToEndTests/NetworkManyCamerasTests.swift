import Foundation
import FrameGraph
import Testing
import TestSupport

/// Several network cameras in one run: `-i rtsp://…/cam -i rtsp://…/cam2 --allow-network --output
/// out/{stream}.mp4`, against two mounts of one GStreamer RTSP server (each a different test pattern).
@Suite(.serialized) struct NetworkManyCamerasTests {
    typealias Fixtures = NetworkFixtures

    @Test(.enabled(if: Fixtures.hasRTSPServer && ffprobePath != nil, "needs python3-gi, gir1.2-gst-rtsp-server-1.0 and ffprobe (scripts/install-deps.sh)"))
    func twoRTSPCamerasInOneRunEachToItsFile() throws {
        let server = try Fixtures.Server.rtsp(extra: ["--mounts", "cam,cam2"])
        let urls = server.urls
        try #require(urls.count == 2)
        let pipeline = TestEnvironment.root.appendingPathComponent("pipelines/transcode.fg").path
        let r = try Fixtures.run("many-rtsp", ["run", pipeline, "-i", urls[0], "-i", urls[1], "--allow-network", "--output", "out/{stream}.mp4",
                                               "--duration", "3"], timeout: 60)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        // One entry per camera, named by its mount; each ~90 pictures in 3 s (at least half).
        #expect(r.streams.compactMap { $0["name"] as? String } == ["cam", "cam2"], "\(r.streams)")
        #expect(r.connections.count == 2, "\(r.connections)")
        for stream in r.streams {
            let name = stream["name"] as? String ?? "?"
            #expect((stream["framesIn"] as? Int ?? 0) >= 45, "\(name): \(stream)")
            let file = r.dir.appendingPathComponent("out/\(name).mp4").path
            #expect(try Fixtures.frameCount(file) == stream["framesOut"] as? Int ?? -1, "\(name)")
        }
        // Each file holds its own camera: a white ball on black (cam) against SMPTE colour bars (cam2).
        let ball = try TestEnvironment.decodeAll(r.dir.appendingPathComponent("out/cam.mp4").path).frames
        let bars = try TestEnvironment.decodeAll(r.dir.appendingPathComponent("out/cam2.mp4").path).frames
        func mean(_ frame: Frame?) -> Double {
            guard let frame else { return -1 }
            let row = frame.row(frame.height / 3, plane: 0)
            return Double(row.reduce(0) { $0 + Int($1) }) / Double(frame.width)
        }
        #expect(mean(bars.last) - mean(ball.last) > 50, "bars \(mean(bars.last)), ball \(mean(ball.last))")
    }

    @Test func severalURLsAreRefusedWithoutTheOptIn() throws {
        let pipeline = TestEnvironment.root.appendingPathComponent("pipelines/transcode.fg").path
        let r = try runCommand(TestEnvironment.cli, ["run", pipeline, "-i", "rtsp://admin:hunter2@127.0.0.1:1/a", "-i", "rtsp://127.0.0.1:1/b",
                                                     "--output", "out/{stream}.mp4"], timeout: 30)
        #expect(r.status != 0 && r.stderr.contains("--allow-network") && !r.stderr.contains("hunter2"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }
}
