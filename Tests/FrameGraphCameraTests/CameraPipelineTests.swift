import Foundation
import FrameGraph
import FrameGraphCamera
import FrameGraphPipelines
import Testing

/// The `camera` node type and the command line's camera options, and the errors for devices that
/// are missing or are not cameras (no emulated camera needed for these).
@Suite struct CameraPipelineTests {
    func document(_ text: String) throws -> PipelineDocument { try PipelineParser.parse(text, file: "p.fg") }

    @Test func cameraNodeTypeTakesItsOptions() throws {
        let pipeline = try Pipeline.build(try document("""
        cam = camera path=/dev/video7 width=1280 height=720 fps=15 format=mjpeg pixels=rgb24 buffers=6 reconnect=true
        out = null
        cam -> out
        """))
        let camera = try #require(pipeline.sources.first as? CameraSource)
        #expect(camera.settings == CameraSettings(path: "/dev/video7", width: 1280, height: 720, fps: 15, format: .mjpeg,
                                                  pixels: .rgb24, buffers: 6, reconnect: true))
        #expect(camera.kind == "camera" && !camera.pacedByMediaTime)
        #expect(NodeCatalog.standard.names.contains("camera"))
        #expect(NodeCatalog.standard.helpText().contains("camera (source)"))
    }

    @Test func badCameraOptionsPointAtTheValue() throws {
        do {
            _ = try Pipeline.build(try document("cam = camera format=h264\nout = null\ncam -> out"))
            Issue.record("expected an error")
        } catch let e as PipelineError {
            #expect(e.line == 1 && e.message.contains("format") && e.message.contains("yuyv"))
        }
    }

    @Test func cameraFlagTurnsTheFileSourceIntoACamera() throws {
        var doc = try document("""
        source = file path=clip.mp4 loop=true start=2
        small  = resize width=256 height=256
        out    = encode path=o.mp4
        source -> small -> out
        """)
        let live = try CameraCommandLine(path: "/dev/video4", size: "320x240", fps: "15", format: "MJPG", reconnect: true).apply(to: &doc)
        #expect(live && doc.hasCameraSource)
        let source = try #require(doc.declarations.first { $0.name == "source" })
        #expect(source.type == "camera")
        let options = Dictionary(uniqueKeysWithValues: source.options.map { ($0.key, $0.value) })
        #expect(options == ["path": "/dev/video4", "width": "320", "height": "240", "fps": "15", "format": "mjpeg", "reconnect": "true"])
        let camera = try #require(try Pipeline.build(doc).sources.first as? CameraSource)
        #expect(camera.settings.width == 320 && camera.settings.format == .mjpeg && camera.settings.reconnect)
    }

    @Test func cameraFlagsReportMistakes() throws {
        let text = "source = file path=a.mp4\nout = null\nsource -> out"
        func failure(_ c: CameraCommandLine, _ text: String = "source = file path=a.mp4\nout = null\nsource -> out") -> String? {
            do {
                var doc = try document(text)
                try c.apply(to: &doc)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(CameraCommandLine(path: "/dev/video0", size: "640"))?.contains("WIDTHxHEIGHT") == true)
        #expect(failure(CameraCommandLine(path: "/dev/video0", fps: "-3"))?.contains("--camera-fps") == true)
        #expect(failure(CameraCommandLine(path: "/dev/video0", format: "h264"))?.contains("yuyv, mjpeg or auto") == true)
        #expect(failure(CameraCommandLine(size: "640x480"))?.contains("need --camera") == true)
        #expect(failure(CameraCommandLine(path: "/dev/video0"), "p = pattern\nout = null\np -> out")?.contains("no 'file' source") == true)
        var doc = try document(text)
        #expect(try CameraCommandLine().apply(to: &doc) == false)  // nothing asked: the file stays a file
    }

    @Test func aMissingDeviceNamesThePath() throws {
        let camera = CameraSource(name: "cam", settings: CameraSettings(path: "/tmp/framegraph-no-such-camera"))
        let context = RunContext(options: RunOptions(mode: .live))
        #expect(throws: CameraError.notFound(path: "/tmp/framegraph-no-such-camera")) { try camera.start(context: context) }
        #expect(CameraError.notFound(path: "/tmp/framegraph-no-such-camera").description
            .contains("no camera at /tmp/framegraph-no-such-camera"))
    }

    @Test func aFileThatIsNotACameraSaysSo() throws {
        for path in ["/dev/null", "/etc/hostname"] where FileManager.default.fileExists(atPath: path) {
            let camera = CameraSource(name: "cam", settings: CameraSettings(path: path))
            do {
                try camera.start(context: RunContext(options: RunOptions(mode: .live)))
                Issue.record("\(path) opened as a camera")
            } catch let error as CameraError {
                guard case .notACaptureDevice = error else { Issue.record("unexpected \(error)"); continue }
                #expect(error.description.contains(path) && error.description.contains("not a video capture camera"))
            }
        }
    }

    @Test func errorMessagesNameRequestAndErrno() {
        let busy = CameraError.busy(path: "/dev/video0", call: "VIDIOC_REQBUFS").description
        #expect(busy.contains("/dev/video0") && busy.contains("VIDIOC_REQBUFS") && busy.contains("busy"))
        let gone = CameraError.disconnected(path: "/dev/video1", call: "VIDIOC_DQBUF", errno: ENODEV, frames: 100).description
        #expect(gone.contains("/dev/video1") && gone.contains("VIDIOC_DQBUF") && gone.contains("No such device")
                && gone.contains("after 100 frames") && gone.contains("--reconnect"))
        let failed = CameraError.callFailed(path: "/dev/video2", call: "VIDIOC_S_PARM", errno: EINVAL).description
        #expect(failed.contains("VIDIOC_S_PARM") && failed.contains("Invalid argument"))
    }
}
