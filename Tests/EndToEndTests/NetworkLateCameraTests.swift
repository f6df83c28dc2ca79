import Foundation
import FrameGraph
import Testing
import TestSupport

/// One camera of several that is not there when the run starts, with no declared size: the live
/// cameras start at once, and the dead one's chain (its sink too) starts at its first picture, while
/// its source keeps trying with its backoff. A camera that never answers writes no file and says so
/// in one line; the stats still list it. GStreamer's RTSP server on 127.0.0.1 is the live camera; a
/// free port nobody listens on is the dead one.
@Suite(.serialized) struct NetworkLateCameraTests {
    typealias Fixtures = NetworkFixtures

    static var enabled: Bool { Fixtures.hasRTSPServer && ffprobePath != nil }

    /// The stream entry named `name` of a run's stats.
    func stream(_ r: Fixtures.Run, _ name: String) -> [String: Any] {
        r.streams.first { $0["name"] as? String == name } ?? [:]
    }

    /// The connection counters of stream `name`'s source node (`name/source`).
    func connection(_ r: Fixtures.Run, _ name: String) -> [String: Any] {
        let nodes = r.stats["nodes"] as? [[String: Any]] ?? []
        return nodes.first { $0["name"] as? String == "\(name)/source" }?["connection"] as? [String: Any] ?? [:]
    }

    @Test(.enabled(if: enabled, "needs python3-gi, gir1.2-gst-rtsp-server-1.0 and ffprobe (scripts/install-deps.sh)"))
    func aDeadCameraDoesNotHoldUpTheLiveOne() throws {
        let live = try Fixtures.Server.rtsp(extra: ["--mounts", "front"])
        let dead = Fixtures.freePort()  // nothing listens there
        let pipeline = TestEnvironment.root.appendingPathComponent("pipelines/transcode.fg").path
        let r = try Fixtures.run("late-dead", ["run", pipeline, "-i", "rtsp://127.0.0.1:\(live.port)/front", "-i", "rtsp://127.0.0.1:\(dead)/yard",
                                               "--allow-network", "--output", "out/{stream}.mp4", "--duration", "3"], timeout: 60)
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.streams.compactMap { $0["name"] as? String } == ["front", "yard"], "\(r.streams)")
        // The live camera ran the whole 3 s (90 pictures at 30 fps; at least half), all in its file.
        let front = stream(r, "front"), yard = stream(r, "yard")
        #expect((front["framesIn"] as? Int ?? 0) >= 45, "\(front)")
        let frontFile = r.dir.appendingPathComponent("out/front.mp4").path
        #expect(try Fixtures.frameCount(frontFile) == front["framesOut"] as? Int ?? -1, "\(front)")
        // The dead one: no picture, no file, one line saying so; its counters in the stats.
        #expect(yard["framesIn"] as? Int == 0 && yard["framesOut"] as? Int == 0, "\(yard)")
        #expect(!FileManager.default.fileExists(atPath: r.dir.appendingPathComponent("out/yard.mp4").path))
        let lines = r.result.stderr.split(separator: "\n").filter { $0.contains("sent no picture") }
        #expect(lines.count == 1 && lines.first?.contains("'yard'") == true && lines.first?.contains("out/yard.mp4 was not written") == true,
                "\(r.result.stderr)")
        #expect(r.connections.count == 2, "\(r.connections)")
        let yardConnection = connection(r, "yard"), frontConnection = connection(r, "front")
        #expect(yardConnection["failedAttempts"] as? Int ?? 0 >= 1 && yardConnection["reconnects"] as? Int == 0, "\(yardConnection)")
        // Without signal from the run's start to its end (3 s).
        #expect((yardConnection["secondsWithoutSignal"] as? Double ?? 0) > 2, "\(yardConnection)")
        #expect(frontConnection["failedAttempts"] as? Int == 0 && frontConnection["secondsWithoutSignal"] as? Double == 0, "\(frontConnection)")
    }

    @Test(.enabled(if: enabled, "needs python3-gi, gir1.2-gst-rtsp-server-1.0 and ffprobe (scripts/install-deps.sh)"))
    func aLateCameraStartsItsChainAtItsFirstPicture() throws {
        let live = try Fixtures.Server.rtsp(extra: ["--mounts", "front"])
        let latePort = Fixtures.freePort()
        let server = Protected<Fixtures.Server?>(nil)
        let pipeline = TestEnvironment.root.appendingPathComponent("pipelines/transcode.fg").path
        let r = try Fixtures.run("late-comes", ["run", pipeline, "-i", "rtsp://127.0.0.1:\(live.port)/front", "-i", "rtsp://127.0.0.1:\(latePort)/yard",
                                                "--allow-network", "--output", "out/{stream}.mp4", "--set", "source.backoff=0.2",
                                                "--set", "source.backoff-max=0.5", "--duration", "5"], timeout: 60) { _ in
            usleep(2_000_000)
            server.withLock { $0 = try? Fixtures.Server.rtsp(port: latePort, extra: ["--mounts", "yard"]) }
        }
        defer { server.withLock { $0 = nil } }
        #expect(server.withLock { $0 } != nil, "the late RTSP server did not start on port \(latePort)")
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.result.stderr.contains("its chain starts at its first picture"), "\(r.result.stderr)")
        #expect(!r.result.stderr.contains("sent no picture"), "\(r.result.stderr)")
        // Both files hold what the stats count.
        let front = stream(r, "front"), yard = stream(r, "yard")
        for (name, entry) in [("front", front), ("yard", yard)] {
            let file = r.dir.appendingPathComponent("out/\(name).mp4").path
            #expect(try Fixtures.frameCount(file) == entry["framesOut"] as? Int ?? -1, "\(name): \(entry)")
        }
        // The late camera answered 2 s or more into the run (its server was not there before): its
        // file starts then, at least 30 ticks after the live one's, which did not wait for it.
        let frontOut = front["framesOut"] as? Int ?? 0, yardOut = yard["framesOut"] as? Int ?? 0
        #expect(yardOut >= 15 && yardOut + 30 <= frontOut, "front \(frontOut), yard \(yardOut)")
        let yardConnection = connection(r, "yard")
        // Its first connection is not a reconnect; the time before it was without signal.
        #expect(yardConnection["failedAttempts"] as? Int ?? 0 >= 1 && yardConnection["reconnects"] as? Int == 0, "\(yardConnection)")
        #expect((yardConnection["secondsWithoutSignal"] as? Double ?? 0) > 1.5, "\(yardConnection)")
    }
}
