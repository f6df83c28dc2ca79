import Foundation
import FrameGraph
import Testing
import TestSupport

/// A camera that is not there when the run starts (GStreamer's RTSP server started a few seconds
/// into the run): with reconnect (the default) the source keeps trying with its backoff instead of
/// ending the run. With a declared size the run starts at once and the output keeps its loss policy
/// until the first picture; without one it waits for the first connection.
@Suite(.serialized) struct NetworkStartTests {
    typealias Fixtures = NetworkFixtures

    /// The mean of row `y` of a frame's luma plane.
    func meanLuma(_ frame: Frame, row y: Int) -> Double {
        let row = frame.row(y, plane: 0)
        return Double(row.reduce(0) { $0 + Int($1) }) / Double(max(1, frame.width))
    }

    @Test(.enabled(if: Fixtures.hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func aDeclaredSizeStartsTheRunWithNoSignalUntilTheCameraComes() throws {
        let port = Fixtures.freePort()
        let server = Protected<Fixtures.Server?>(nil)
        let r = try Fixtures.run("start-declared", ["run", "-e", "stream url=rtsp://127.0.0.1:\(port)/cam width=320 height=240 open-timeout=1 backoff=0.2 backoff-max=0.5 "
                                                    + "on-loss=no-signal -> encode path=out.mp4", "--allow-network", "--duration", "6"], timeout: 60) { _ in
            usleep(2_000_000)
            server.withLock { $0 = try? Fixtures.Server.rtsp(port: port) }
        }
        defer { server.withLock { $0 = nil } }
        #expect(server.withLock { $0 } != nil, "the RTSP server did not start on port \(port)")
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.result.stderr.contains("stream 'stream' cannot connect yet") && r.result.stderr.contains("stream 'stream' connected"), "\(r.result.stderr)")
        // About 2 s of no-signal frames at 30 fps before the camera answered; then its pictures.
        #expect(r.count("noSignalFrames") >= 20 && r.count("failedAttempts") >= 1, "\(r.connection)")
        #expect(r.count("reconnects") == 0, "the first connection is not a reconnect: \(r.connection)")
        #expect((r.connection["secondsWithoutSignal"] as? Double ?? 0) > 1, "\(r.connection)")
        let framesIn = r.stats["framesIn"] as? Int ?? 0
        #expect(framesIn - r.count("noSignalFrames") >= 30, "\(framesIn) in, \(r.connection)")
        // The clock never stopped: one frame per tick from the first, all in the file.
        let out = r.dir.appendingPathComponent("out.mp4").path
        let elapsed = r.stats["elapsedSeconds"] as? Double ?? 0
        #expect(try Fixtures.frameCount(out) == r.framesOut)
        #expect(Double(r.framesOut) > elapsed * 30 * 0.8, "out \(r.framesOut) in \(elapsed) s")
        // The first frame is the no-signal picture (black, Y 16, with a band of Y 80 across rows
        // 96…143 of 240); the last is the camera's (a white ball on black: row 120 is not that band).
        let frames = try TestEnvironment.decodeAll(out).frames
        let first = try #require(frames.first), last = try #require(frames.last)
        #expect(first.width == 320 && first.height == 240)
        #expect(abs(meanLuma(first, row: 120) - 80) < 6 && abs(meanLuma(first, row: 20) - 16) < 6,
                "\(meanLuma(first, row: 120)), \(meanLuma(first, row: 20))")
        let row = last.row(120, plane: 0)
        let offBand = row.filter { abs(Int($0) - 80) > 30 }.count
        #expect(offBand > 200, "\(offBand) of 320 pixels of row 120 away from the no-signal band")
    }

    @Test(.enabled(if: Fixtures.hasRTSPServer && ffprobePath != nil, "needs python3-gi, gir1.2-gst-rtsp-server-1.0 and ffprobe (scripts/install-deps.sh)"))
    func repeatHasNothingToRepeatBeforeTheFirstPictureSoNoSignalKeepsTheClock() throws {
        let port = Fixtures.freePort()
        let server = Protected<Fixtures.Server?>(nil)
        // on-loss=repeat (the default), a declared size, the camera 2 s late.
        let r = try Fixtures.run("start-repeat", ["run", "-e", "stream url=rtsp://127.0.0.1:\(port)/cam width=320 height=240 open-timeout=1 backoff=0.2 backoff-max=0.5 "
                                                  + "-> encode path=out.mp4", "--allow-network", "--duration", "5"], timeout: 60) { _ in
            usleep(2_000_000)
            server.withLock { $0 = try? Fixtures.Server.rtsp(port: port) }
        }
        defer { server.withLock { $0 = nil } }
        #expect(server.withLock { $0 } != nil, "the RTSP server did not start on port \(port)")
        #expect(r.result.status == 0, "\(r.result.stderr)")
        // About 2 s of no-signal frames at the clock's rate (some 60) before the first picture; none after
        // it (the camera did not go away).
        let noSignal = r.count("noSignalFrames")
        #expect(noSignal >= 30 && r.count("stalls") == 0 && r.count("drops") == 0, "\(r.connection)")
        // The clock unbroken from the first tick: every tick wrote a frame (none skipped), the first
        // tick's frame is the run's first frame, and the file holds them all.
        let out = r.dir.appendingPathComponent("out.mp4").path
        #expect(r.stats["skippedTicks"] as? Int == 0, "\(r.stats)")
        #expect(try Fixtures.frameCount(out) == r.framesOut)
        // The output begins with the no-signal picture (black, Y 16, with a band of Y 80 across rows
        // 96…143 of 240): the first tick was not waiting for the camera.
        let frames = try TestEnvironment.decodeAll(out).frames
        let first = try #require(frames.first)
        #expect(abs(meanLuma(first, row: 120) - 80) < 6 && abs(meanLuma(first, row: 20) - 16) < 6,
                "\(meanLuma(first, row: 120)), \(meanLuma(first, row: 20))")
        // Frames out = the output clock's ticks from the first one, at the presentation delay D after
        // the start, to the end: elapsed × 30 − D × 30, within two ticks (the first and last tick's
        // phase on the 30 fps grid).
        let elapsed = r.stats["elapsedSeconds"] as? Double ?? 0
        let delay = (r.stats["presentationDelayMs"] as? Double ?? 0) / 1000
        let ticks = (elapsed - delay) * 30
        #expect(abs(Double(r.framesOut) - ticks) <= 2, "out \(r.framesOut), ticks \(ticks) (elapsed \(elapsed) s, D \(delay) s)")
    }

    @Test(.enabled(if: Fixtures.hasRTSPServer, "needs python3-gi and gir1.2-gst-rtsp-server-1.0 (scripts/install-deps.sh)"))
    func withoutASizeTheRunWaitsForTheFirstConnection() throws {
        let port = Fixtures.freePort()
        let server = Protected<Fixtures.Server?>(nil)
        let r = try Fixtures.run("start-waits", ["run", "-e", "stream url=rtsp://127.0.0.1:\(port)/cam open-timeout=1 backoff=0.2 backoff-max=0.5 -> encode path=out.mp4",
                                                 "--allow-network", "--duration", "3"], timeout: 60) { _ in
            usleep(2_000_000)
            server.withLock { $0 = try? Fixtures.Server.rtsp(port: port) }
        }
        defer { server.withLock { $0 = nil } }
        #expect(server.withLock { $0 } != nil, "the RTSP server did not start on port \(port)")
        #expect(r.result.status == 0, "\(r.result.stderr)")
        #expect(r.result.stderr.contains("stream 'stream' cannot connect yet"), "\(r.result.stderr)")
        #expect(r.count("failedAttempts") >= 1 && r.count("reconnects") == 0, "\(r.connection)")
        // The run's 3 s count from the connection: its pictures, no gap to fill.
        #expect((r.stats["framesIn"] as? Int ?? 0) >= 45, "\(r.stats["framesIn"] ?? "-")")
        #expect(try Fixtures.frameCount(r.dir.appendingPathComponent("out.mp4").path) == r.framesOut)
    }

    @Test func reconnectFalseEndsAFailedStartWithOneLine() throws {
        let port = Fixtures.freePort()  // nothing listens there
        let r = try Fixtures.run("start-no-reconnect", ["run", "-e", "stream url=rtsp://127.0.0.1:\(port)/cam open-timeout=1 -> null",
                                                        "--allow-network", "--reconnect=false", "--duration", "10"], timeout: 40)
        #expect(r.result.status == 2, "\(r.result.stderr)")
        #expect(r.result.stderr.split(separator: "\n").count == 1 && r.result.stderr.contains("rtsp://127.0.0.1:\(port)/cam"), "\(r.result.stderr)")
    }

    @Test func aDeclaredSizeMustBeWholeAndEven() throws {
        for (options, word) in [("width=320", "together"), ("width=321 height=240", "even")] {
            let r = try runCommand(TestEnvironment.cli, ["run", "-e", "stream url=rtsp://127.0.0.1:1/cam \(options) -> null", "--allow-network"], timeout: 30)
            #expect(r.status != 0 && r.stderr.contains(word) && r.stderr.split(separator: "\n").count == 1, "\(options): \(r.stderr)")
        }
    }
}
